"""lionsim: benchmark and simulator for sign-compressed distributed Lion."""

from lionsim import plugins as _plugins  # noqa: F401 -- installed plug-ins get its load check (lionsim.entry_points)
from lionsim._lazy import lazy_exports

__version__ = "0.1.0"

# The public API is imported on first use: `import lionsim` (and so `lionsim --version`,
# `lionsim networks`) must not pay for torch, which lionsim.packing needs.
__getattr__, __dir__, __all__ = lazy_exports(__name__, {"lionsim.packing": "pack_signs unpack_signs"})
__all__ = ["__version__", *__all__]
