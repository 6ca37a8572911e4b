"""lionsim: benchmark and simulator for sign-compressed distributed Lion."""

__version__ = "0.1.0"

from lionsim.packing import pack_signs, unpack_signs  # noqa: E402

__all__ = ["__version__", "pack_signs", "unpack_signs"]
