"""`lionsim report DIR`: a Markdown report of a finished run or sweep, from its files alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from lionsim.cli import options as o
from lionsim.cli.app import app, console
from lionsim.numbers import plural


@app.command("report")
def report(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A `lionsim bench`, `lionsim sweep` or `lionsim estimate` --out directory.")],
    plugin: o.Plugin = None,
) -> None:
    """Write DIR/report.md: configuration, summary, time to target, accuracy by workers, plots, environment, commands."""
    from lionsim.reports.outdir import check_reportable
    from lionsim.sweep.shards import part_roots

    sharded = part_roots(directory)  # a sharded sweep: its parts are merged first (lionsim sweep merge)
    if not sharded:
        check_reportable(directory)  # before pandas and matplotlib load
    from lionsim.reports.files import written_together
    from lionsim.reports.markdown import write_report
    from lionsim.reports.out_lock import holding

    # a bench, sweep or estimate publishing into DIR would replace what this reads and writes
    with holding(directory, option="DIR"):
        if sharded:
            from lionsim.cli.sweep_cmd import merged_or_fail

            merged_or_fail(directory)
        with written_together():  # report.md and its redrawn plots appear together or not at all
            path = write_report(directory)
    plots = len(set(re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", path.read_text(encoding="utf-8"))))
    drawn = f" and the {plural(plots, 'plot')} it shows (redrawn beside it)" if plots else " (no plots)"
    console.print(f"wrote {path}{drawn}", markup=False, highlight=False)
