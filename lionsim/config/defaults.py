"""bench's and sweep's default runs, on their own: the options' help states them without importing
the configuration's checks (lionsim.cli.options, read by every command)."""

from __future__ import annotations

DEFAULT_STRATEGIES = ("adamw", "lion", "dlion-mavo", "dlion-mavo@a2a-1bit", "lioncub-l1")
"""The runs a bench or sweep trains when -s/--strategy is not given."""

DEFAULT_WORKLOAD = "vit"
"""The workload a bench trains when -w/--workload is not given (`lionsim strategies` lists its
defaults unless -w says another)."""
