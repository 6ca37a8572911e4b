"""`lionsim regress`: CI convergence regression against committed baselines (exit 1 on a regression)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lionsim.cli import options as o
from lionsim.cli.app import app, console, out_console
from lionsim.errors import LionsimError
from lionsim.numbers import plural
from lionsim.ranges import refusal
from lionsim.regress.fingerprint import AUTO, MODES, STRICT_REL
from lionsim.regress.rows import IMPROVED, fmt
from lionsim.regress.tolerance import DEFAULT_SEEDS, SEEDS

if TYPE_CHECKING:
    from lionsim.regress import Case, UpdateResult

LOG_WIDTH = 120
"""Width of the tables when stdout is not a terminal (a CI log, a file): rich would assume 80
and fold every run label, though nothing wraps a log line."""


def _print_table(table: Table) -> None:
    out_console(LOG_WIDTH).print(table)  # rich cannot widen a console per print: a log gets its own


def _list_cases(cases: list[Case]) -> None:
    """The cases in 80 columns, as bench's tables (lionsim.reports.widths): under each case its
    strategies, wrapped between whole names (NameList), the one text that narrows."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    from lionsim.cli.output import natural_width
    from lionsim.reports.widths import NameList, fit

    table = Table(title="regression cases", box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False, show_edge=False,
                  caption="N: workers; lr, wd: pinned per strategy by the case, or each strategy's defaults",
                  caption_justify="left")  # the box draws one space between columns
    table.add_column("case / strategies")
    for col in ("workload", "N", "split", "steps", "batch", "seed", "lr, wd"):
        table.add_column(col, justify="right" if col in ("N", "steps", "batch", "seed") else "left", no_wrap=True)
    for c in cases:
        table.add_row(Group(Text(c.name, style="bold"), Padding(NameList(c.strategies), (0, 0, 0, 2))),
                      f"{c.workload} {c.size}", str(c.workers), c.data_split, str(c.steps), str(c.batch_size),
                      str(c.seed), "pinned" if c.pinned else "defaults")
    out_console(natural_width(fit(table, column="case / strategies"))).print(table)


def _change_table(result: UpdateResult) -> Table:
    table = Table(title="baseline changes", box=box.SIMPLE_HEAD, padding=(0, 1))
    for col, justify in (("case", "left"), ("run", "left"), ("metric", "left"), ("change", "left"),
                         ("old", "right"), ("new", "right"), ("tolerance old -> new", "right"),
                         ("float tol old -> new", "right")):
        table.add_column(col, justify=justify, overflow="fold")
    for c in result.changes:
        table.add_row(c.case, c.run, c.metric, c.kind, fmt(c.old), fmt(c.new), f"{fmt(c.old_tol)} -> {fmt(c.new_tol)}",
                      f"{fmt(c.old_noise_tol)} -> {fmt(c.new_noise_tol)}")
    return table


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)


def _run_check(cases: list[str] | None, baseline_dir: Path, junit: Path | None, report: Path | None,
               everything: bool, mode: str) -> int:
    from lionsim.cli.regress_view import check_table, failure_lines, run_progress
    from lionsim.regress import check_suite, select_cases, total_runs
    from lionsim.regress.baseline import update_command
    from lionsim.regress.check import unrecorded

    start = time.perf_counter()
    selected = select_cases(cases)
    missing = unrecorded(selected, baseline_dir)
    if missing:  # said before the runs: check_suite does not train them
        console.print(f"note: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the baseline: "
                      f"reported missing without training; `{escape(update_command(baseline_dir, missing))}` "
                      f"records {'it' if len(missing) == 1 else 'them'}", highlight=False)
    with run_progress("check", total_runs([c for c in selected if c.name not in missing])) as advance:
        result = check_suite(baseline_dir, cases, progress=advance, mode=mode)
    seconds = time.perf_counter() - start
    _print_table(check_table(result, everything))
    console.print(result.mode_line, highlight=False, markup=False)
    _warn(result.warnings)
    failures = result.failures
    improved = sum(r.verdict == IMPROVED for r in result.rows)
    if improved:
        gained = list(dict.fromkeys(r.case for r in result.rows if r.verdict == IMPROVED))
        console.print(f"[cyan]{plural(improved, 'metric')} improved past their tolerance[/]: "
                      f"`{escape(update_command(baseline_dir, gained))}` records the gain", highlight=False)
    if result.unguarded:
        names = ", ".join(f"{r.case} {r.run} {r.metric}" for r in result.unguarded)
        one = len(result.unguarded) == 1
        console.print(f"note: {plural(len(result.unguarded), 'check')} in {result.mode} mode "
                      f"{'guards' if one else 'guard'} nothing (any reading passes: {'its' if one else 'their'} "
                      f"tolerance reaches the metric's worst value): {escape(names)}", highlight=False)
    if not failures:
        console.print(f"[green]PASS[/]: {plural(len(result.cases), 'case')}, {result.checks_line}, {result.mode} mode, "
                      f"{seconds:.0f} s", highlight=False)
    for line in failure_lines(failures, result.checks_line, result.mode, seconds) if failures else ():
        console.print(line, highlight=False, markup=False)
    # the files last: one that cannot be written after all (a full disk) loses no verdict
    written = _write_files({"--junit": junit, "--report": report}, result, seconds)
    if written:
        console.print("wrote " + ", ".join(map(str, written)), highlight=False)
    return 1 if failures else 0


def _write_files(paths: dict[str, Path | None], result, seconds: float) -> list[Path]:
    """Write the --junit and --report files, together or neither (one line naming the option)."""
    from lionsim.regress.report import write_junit, write_markdown
    from lionsim.reports.files import written_together

    writers = {"--junit": write_junit, "--report": write_markdown}
    written = []
    with written_together():
        for option, path in paths.items():
            if path is not None:
                try:
                    written.append(writers[option](path, result, seconds))
                except LionsimError as e:
                    raise LionsimError(f"{option}: {e} (the verdict above stands)") from None
    return written


def _run_update(cases: list[str] | None, baseline_dir: Path, seeds: int) -> int:
    from lionsim.cli.regress_view import run_progress
    from lionsim.regress import select_cases, total_runs, update_suite
    from lionsim.regress.noise import NOISE_DRAWS

    selected = select_cases(cases)
    with run_progress("update", total_runs(selected, seeds + 1 + NOISE_DRAWS)) as advance:
        result = update_suite(baseline_dir, cases, seeds, progress=advance)
    _warn(result.warnings)
    if not result.ok:
        for problem in result.problems:
            console.print(f"[bold red]problem:[/] {problem}", highlight=False)
        console.print("[bold red]nothing written[/]: fix the problems above, then update again", highlight=False)
        return 1
    if result.changes:
        _print_table(_change_table(result))
    console.print(f"{len(result.changes)} changes, {result.unchanged} metrics unchanged; wrote {result.path}",
                  highlight=False)
    return 0


CHECK_ONLY = ("--junit", "--report", "--mode", "--all")
"""The options that describe a check: what it compares (--mode) and what it prints or writes."""


def _refuse_inapplicable(given: dict[str, bool], list_cases: bool, update: bool) -> None:
    """One line naming the options given that the chosen action (--list, --update or a check) cannot
    use, with those it can."""
    if list_cases and update:
        raise LionsimError("--list and --update are two actions; give one (or neither: a check)")
    if list_cases:
        action, accepted = "--list", ("--case",)
    elif update:
        action, accepted = "--update", ("--case", "--seeds", "--baseline-dir")
    else:
        action, accepted = "a check (no --list or --update)", ("--case", "--baseline-dir", *CHECK_ONLY)
    refused = [name for name, on in given.items() if on and name not in accepted]
    if refused:
        raise LionsimError(f"{', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply to {action}; "
                           f"accepted with it: {', '.join(accepted)}")


@app.command()
def regress(
    case: Optional[list[str]] = typer.Option(
        None, "--case", "-c", help="Case name or glob (repeatable): the cases to check, update or list; default: every case."),
    update: bool = typer.Option(
        False, "--update", help="Re-measure the baselines and their tolerances, rewrite them, show what changed. "
                                "Takes --case, --seeds, --baseline-dir."),
    seeds: Optional[int] = typer.Option(
        None, "--seeds", parser=o.whole_number, help=f"--update only: extra seeds whose spread sets the tolerances (a whole number at least 1; "
                              f"default {DEFAULT_SEEDS})."),
    baseline_dir: Optional[Path] = typer.Option(
        None, "--baseline-dir", "--baselines",
        help="Directory holding regress.json, for a check or --update; default: reports/baselines of the lionsim "
             "checkout this runs from (found from the package, not the current directory; an installed wheel: "
             "./reports/baselines)."),
    junit: Optional[Path] = typer.Option(
        None, "--junit", help="A check only: write a JUnit XML report (one testcase per case and run)."),
    report: Optional[Path] = typer.Option(None, "--report", help="A check only: write a Markdown summary."),
    # `all` and `list`: a --config file's keys are the parameters' names, and every command's are its flags'
    all: bool = typer.Option(False, "--all", help="A check only: show every metric, not only each run's notable ones."),
    list: bool = typer.Option(False, "--list", help="List the cases (those --case selects) and exit."),
    mode: Optional[str] = typer.Option(
        None, "--mode",
        help="A check only. auto (the default): strict on the platform that recorded the baselines (same torch, "
             f"Python, CPU; every metric equal to float noise, rel {STRICT_REL:g}, a change either way fails), float "
             "elsewhere (within what float-level noise carries each metric, measured at --update; catches a 5% "
             "change of lr or weight decay); or force strict | float | spread (3 sd of the seed spread: loose). "
             "The output says which ran."),
    config: o.Config = None,
) -> None:
    """CI convergence regression: run the fixed suite, compare with the committed baselines
    (strictly on their own platform); exit 1 on a regression (or an --update that finds problems and
    writes nothing), 2 on bad input. Without --list or
    --update it checks: --case, --baseline-dir, --mode, --all, --junit, --report apply."""
    from lionsim.regress import select_cases
    from lionsim.regress.baseline import default_baseline_dir, load_baseline
    from lionsim.regress.outputs import check_folder, check_outputs

    # every value and the baseline file are checked before torch loads (the suite's runs import it)
    if mode is not None:  # the values first, whatever else is given
        mode = mode.strip().lower()
        if mode not in MODES:
            raise LionsimError(f"bad --mode {mode!r}; accepted: {', '.join(MODES)}")
    if seeds is not None and seeds < 1:
        raise LionsimError(refusal("--seeds", seeds, SEEDS))
    selected = select_cases(case)
    _refuse_inapplicable({"--seeds": seeds is not None, "--baseline-dir": baseline_dir is not None,
                          "--junit": junit is not None, "--report": report is not None,
                          "--mode": mode is not None, "--all": all}, list, update)
    if list:
        _list_cases(selected)
        return
    if baseline_dir is None:
        baseline_dir = default_baseline_dir()
    check_outputs({"--junit": junit, "--report": report})
    if update:  # the file it rewrites, refused now rather than after every case has trained
        check_folder(baseline_dir, "--baseline-dir")
        code = _run_update(case, baseline_dir, DEFAULT_SEEDS if seeds is None else seeds)
    else:
        load_baseline(baseline_dir)  # a missing or malformed one, refused now (check_suite reads it to check)
        code = _run_check(case, baseline_dir, junit, report, all, mode or AUTO)
    if code:
        raise typer.Exit(code)
