"""An estimate sweep's summary says what its points hold: each run's speedup range and where (never
its two ends alone, which hid a 4.00x peak between 1.08x and 1.11x), and what an estimate at a swept
point notes (int8-allreduce's int32 from 128 workers on), each note once with its runs and points.
The reference is sweep.csv itself, and a single-point estimate at the swept count."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.cli import run_cli

MEASURED = Path(__file__).resolve().parents[2] / "reports" / "readme" / "from-run-sweep"  # trained at 4-32 workers


def _said(out: str) -> str:
    return " ".join(out.split())


def _range(sweep: pd.DataFrame, label: str, column: str) -> tuple[float, float, float, float]:
    """(lowest, where, highest, where) of `column` for run `label`, read straight off sweep.csv."""
    run = sweep[sweep["strategy"] + "@" + sweep["transport"] == label].dropna(subset=[column])
    low, high = run.loc[run[column].idxmin()], run.loc[run[column].idxmax()]
    return low[column], low["sweep_value"], high[column], high["sweep_value"]


def _cells(out: str, strategy: str) -> list[list[str]]:
    """The last crossover table's two lines of `strategy`'s row, as words."""
    rows = out.splitlines()
    at = max(i for i, line in enumerate(rows) if line.split()[:1] == [strategy])
    return [rows[at].split(), rows[at + 1].split()]


def test_the_sweep_says_each_runs_range_and_the_int32_note_where_it_holds(tmp_path, capsys):
    """The new user's sweep: dlion-mavo over int8-allreduce is 1.08x at 8 workers and 1.11x at 128
    but 4.00x at 32; at 128 int8-allreduce sends int32, said before only by `--workers 128`."""
    out_dir = tmp_path / "est"
    code, out, _ = run_cli(["estimate", "--model", "gpt2-1.3b", "--network", "h100x8-10gbe", "--sweep",
                            "workers=8,32,128", "-s", "adamw,dlion-mavo", "--out", out_dir], capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80
    sweep = pd.read_csv(out_dir / "sweep.csv")
    crossing = pd.read_csv(out_dir / "crossover.csv").iloc[0]
    low, low_at, high, high_at = _range(sweep, "dlion-mavo@int8-allreduce", "speedup")
    assert (low_at, high_at) == (8, 32) and high > 3.9  # the peak sits between the ends
    assert (crossing.speedup_worst, crossing.worst_at, crossing.speedup_best, crossing.best_at) == \
        (low, low_at, high, high_at)
    first, second = _cells(out, "dlion-mavo")
    assert first[-2:] == [f"{low:.2f}x", f"{high:.2f}x"] and second[-4:] == ["at", "8", "at", "32"]

    # the int32 note, at the swept counts where int8 overflows (a sum of more than 127 votes) alone
    at = [int(w) for w in sorted(sweep["workers"].unique()) if w > np.iinfo(np.int8).max]
    assert at == [128]
    code, single, _ = run_cli(["estimate", "--model", "gpt2-1.3b", "--network", "h100x8-10gbe", "--workers",
                               "128", "-s", "adamw,dlion-mavo"], capsys)
    note = _said(single)[_said(single).index("int8-allreduce sends int32"):].split(" int16.")[0] + " int16."
    from lionsim.estimate.point_notes import HEADING

    notes = _said(out)[_said(out).index(HEADING):]
    assert f"dlion-mavo@int8-allreduce at 128 workers: {note}" in notes
    assert _said(out).count("int8-allreduce sends int32") == 1  # once, not at 8 or 32 workers
    recorded = json.loads((out_dir / "estimate.json").read_text())["notes"]  # what `lionsim report` lists
    assert any(line.strip().startswith("dlion-mavo@int8-allreduce at 128 workers: int8-allreduce sends int32")
               for line in recorded)


def test_a_time_to_target_sweep_says_its_range_and_its_points_notes(capsys):
    """--from-run over workers: the time to target's speedup range and where, as to_target in sweep.csv
    holds it, and the note that the fit is extrapolated at the counts beyond the measured 4-32."""
    code, out, _ = run_cli(["estimate", "--model", "gpt2-1.3b", "--workers", "256", "--network", "h100x8-100gbe",
                            "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--tokens", "2.6e10", "--from-run", MEASURED,
                            "--sweep", "workers=16,64,256", "--format", "csv"], capsys)
    assert code == 0
    from io import StringIO

    sweep = pd.read_csv(StringIO(out))
    code, out, err = run_cli(["estimate", "--model", "gpt2-1.3b", "--workers", "256", "--network", "h100x8-100gbe",
                              "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--tokens", "2.6e10", "--from-run",
                              MEASURED, "--sweep", "workers=16,64,256"], capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80
    low, low_at, high, high_at = _range(sweep, "dlion-mavo@a2a-1bit", "to_target_speedup")
    first, second = _cells(out, "dlion-mavo")  # the last table: the time to target's crossovers
    assert first[-2:] == [f"{low:.2f}x", f"{high:.2f}x"]
    assert second[-4:] == ["at", f"{int(low_at)}", "at", f"{int(high_at)}"]
    beyond = [int(w) for w in sorted(sweep["workers"].unique()) if w > 32]  # the sweep measured 4-32
    assert beyond == [64, 256]
    assert ("every run at 64-256 workers: time to target: extrapolated beyond the measured 4-32 workers."
            in _said(out))  # both runs priced, so "every run"


def test_extremes_skip_points_without_a_figure_and_take_the_first_of_equals():
    from lionsim.estimate.sweep import extremes

    values = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    got = extremes(values, np.array([math.nan, 3.0, 1.5, 3.0, 1.5]))
    assert got == {"speedup_best": 3.0, "best_at": 2.0, "speedup_worst": 1.5, "worst_at": 4.0}
    assert all(math.isnan(v) for v in extremes(values, np.full(5, math.nan)).values())


def test_point_notes_are_said_once_with_their_runs_and_points():
    """A run's note at several points is one line with their spans; runs whose note and points agree
    share a line; a note the breakdown said (`said`) that holds at every point is not said again."""
    from lionsim.estimate.point_notes import HEADING, Entry, PointNote, group, lines

    found = [Entry("a@t", "wide.", 2), Entry("b@t", "wide.", 2), Entry("a@t", "wide.", 3), Entry("b@t", "wide.", 3),
             Entry("c@t", "wide.", 3), Entry("", "capped", 1), Entry("", "capped", 2), Entry("", "capped", 3),
             Entry("a@t", "everywhere.", 0), Entry("a@t", "everywhere.", 1), Entry("a@t", "everywhere.", 2),
             Entry("a@t", "everywhere.", 3), Entry("a@t", "wide.", 3)]
    grouped = group(found)
    assert grouped == [PointNote(("a@t", "b@t"), "wide.", (2, 3)), PointNote(("c@t",), "wide.", (3,)),
                       PointNote(("",), "capped", (1, 2, 3)), PointNote(("a@t",), "everywhere.", (0, 1, 2, 3))]
    shown = lines(grouped, [8, 16, 32, 64], "workers", ["a@t", "b@t", "c@t"], said={"everywhere."})
    assert shown == [HEADING, "  at 16-64 workers: capped.", "  a@t, b@t at 32-64 workers: wide.",
                     "  c@t at 64 workers: wide."]
    assert lines(grouped[3:], [8, 16, 32, 64], "workers", ["a@t"], said={"everywhere."}) == []
    every = lines([PointNote(("a@t", "b@t"), "x", (1,))], [8, 16], "workers", ["a@t", "b@t"])
    assert every == [HEADING, "  every run at 16 workers: x."]


@pytest.mark.parametrize("variable, values, at, said", [("workers", [8, 32, 128], 32.0, "32 workers"),
                                                        ("bandwidth", [0.1, 0.316, 1.0], 0.316, "0.316 GB/s")])
def test_a_range_names_its_points_as_the_notes_do(variable, values, at, said):
    from types import SimpleNamespace

    from lionsim.reports.points import range_words

    row = SimpleNamespace(speedup_worst=1.08, worst_at=values[0], speedup_best=4.0, best_at=at)
    assert range_words(row, values, variable) == f"1.08x at {values[0]:g} {said.split()[1]} to 4.00x at {said}"
