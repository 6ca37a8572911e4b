"""What a comma list given to one of `lionsim sweep`'s one-value options should be instead: one sweep
per value (the number options' refusals, lionsim.cli.refusals, and the choice options' callbacks,
lionsim.cli.options, both say it)."""

from __future__ import annotations

from lionsim.cli.click_compat import get_current_context

SWEEP_AXES = "--workload, --workers, --network, --seed and --lr"
"""The options a sweep takes comma lists of (lionsim.sweep.grid): its grid's axes."""


def sweep_one_value(option: str, command: str | None = None) -> str:
    """Under `lionsim sweep` (`command`, else the command being parsed), what to do with a comma
    list of `option`, one of its one-value options (a number, or a choice: --traits nccl,ideal): one
    sweep per value; "" under any other command."""
    if command is None:
        ctx = get_current_context(silent=True)
        command = ctx.info_name if ctx is not None else None
    if command != "sweep":
        return ""
    return (f"; a sweep's grid axes are {SWEEP_AXES}, not {option}: run one sweep per value, each with "
            "its own --out")
