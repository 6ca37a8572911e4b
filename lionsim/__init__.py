"""lionsim: benchmark and simulator for sign-compressed distributed Lion."""

__version__ = "0.1.0"

__all__ = ["__version__", "pack_signs", "unpack_signs"]

# The public API is imported on first use: `import lionsim` (and so `lionsim --version`,
# `lionsim networks`) must not pay for torch, which lionsim.packing needs.
_LAZY = {"pack_signs": "lionsim.packing", "unpack_signs": "lionsim.packing"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lionsim' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
