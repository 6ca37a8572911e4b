"""What `lionsim regress` prints: progress (a bar on a terminal, a line every few seconds in a
CI log), the table of runs, and a failure summary short enough to read (the count, and per
case its worst few checks), whatever the number of failing checks."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lionsim.cli.app import console
from lionsim.numbers import plural
from lionsim.regress.rows import IMPROVED, MISSING, PASS, UNGUARDED, Row, fmt, group_rows

VERDICT_STYLE = {PASS: "green", IMPROVED: "cyan", UNGUARDED: "yellow"}
LOG_EVERY_S = 5.0
"""Seconds between progress lines off a terminal."""
WORST_PER_CASE = 3
"""Failing checks a summary names per case (the count says how many more)."""


@contextmanager
def run_progress(what: str, total: int) -> Iterator[Callable[[str], None]]:
    """Yield `advance(description)`, called after each finished run: a bar on a terminal; off
    one (a CI log) a line on stderr when the first run ends, every LOG_EVERY_S and at the end,
    with the count, what just finished, the time so far and an estimate of the rest."""
    if console.is_terminal:
        with Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task(what, total=total)
            yield lambda d: bar.update(task, advance=1, description=d)
        return
    start = last = time.monotonic()
    done = 0

    def advance(description: str) -> None:
        nonlocal done, last
        done += 1
        now = time.monotonic()
        if done in (1, total) or now - last >= LOG_EVERY_S:
            last = now
            left = (now - start) / done * (total - done)
            print(f"lionsim: regress {what} {done}/{total} runs: {description} ({now - start:.0f} s, "
                  f"about {left:.0f} s left)", file=sys.stderr, flush=True)

    yield advance


def run_rows(rows: list[Row], everything: bool) -> list[tuple[Row, int]]:
    """(row, failing checks of its run): every row, or per run its worst check (failing first,
    then the furthest past or closest to its tolerance)."""
    if everything:
        return [(r, int(r.failed)) for r in rows]
    return [(max(group, key=Row.rank), sum(r.failed for r in group)) for group in group_rows(rows).values()]


def check_table(result, everything: bool) -> Table:
    """Per case a heading row, then its runs: no case column, so the table fits 80 columns."""
    what = "every check" if everything else "per run: its worst check (fails: how many of its checks fail)"
    table = Table(title=f"lionsim regress vs {result.baseline}, {result.mode} mode ({what})", box=box.SIMPLE_HEAD,
                  padding=(0, 0), pad_edge=False)  # the box draws one space between columns
    for col, justify in (("case / run", "left"), ("metric", "left"), ("baseline", "right"), ("now", "right"),
                         ("tol", "right"), ("verdict", "left"), ("fails", "right")):
        table.add_column(col, justify=justify, overflow="fold")
    case = None
    for r, fails in run_rows(result.rows, everything):
        if r.case != case:
            case = r.case
            table.add_row(f"[bold]{case}[/]")
        style = VERDICT_STYLE.get(r.verdict, "bold red")
        table.add_row(f" {r.run}", r.metric, fmt(r.baseline), fmt(r.now), fmt(r.tol), f"[{style}]{r.verdict}[/]",
                      str(fails) if fails else "")
    return table


def failure_lines(failures: list[Row], checks: str, mode: str, seconds: float) -> list[str]:
    """The failure summary: one line with the count, then per case its count and worst few.
    `checks`: how many checks ran ('312 checks', CheckResult.checks_line)."""
    lines = [f"FAIL: {len(failures)} of {checks} failed ({mode} mode, {seconds:.0f} s):"]
    by_case: dict[str, list[Row]] = {}
    for r in failures:
        by_case.setdefault(r.case, []).append(r)
    for case, rows in by_case.items():
        runs = len({r.run for r in rows})
        if all(r.verdict == MISSING and r.note == rows[0].note for r in rows):  # a case the baseline lacks: one fix
            lines.append(f"  {case}: {plural(runs, 'run')} missing: {rows[0].note}")
            continue
        lines.append(f"  {case}: {plural(len(rows), 'failing check')} in {plural(runs, 'run')}; worst:")
        for r in sorted(rows, key=Row.rank, reverse=True)[:WORST_PER_CASE]:
            lines.append(f"    {r.run} / {r.metric}: {r.verdict}: {r.note}")
        if len(rows) > WORST_PER_CASE:
            lines.append(f"    ... and {len(rows) - WORST_PER_CASE} more (--all, --junit or --report list every one)")
    return lines
