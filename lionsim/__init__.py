"""lionsim: benchmark and simulator for sign-compressed distributed Lion."""

__version__ = "0.1.0"
