"""A dense bandwidth sweep (`--sweep bandwidth=0.1:100:1000`, README's own example) as a new user
runs it: the terminal's note on the points past NCCL's cap listed ~570 values one by one (5 of the
6 KB printed), and report.md held three tables of 1,000 rows, labels rounded so that neighbours
read the same ("| 0.101 | 21,921 ms |" then "| 0.101 | 21,770 ms |"), ~570 rows alike. The
references: sweep.csv's own rows, counted and formatted here."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app

CLUSTER = ["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--gpus-per-node", "8",
           "--network", "25gbe", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@int8-allreduce", "--traits", "nccl"]
POINTS = 120
"""More than a report table shows (sweep_rows.MAX_ROWS), few enough to price in seconds."""
CAP = 2 * 0.98
"""NCCL's sockets cap, GB/s a node (tests/reports/test_capped_sweep_report.py)."""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("dense") / "run"
    done = CliRunner().invoke(app, [*CLUSTER, "--sweep", f"bandwidth=0.1:100:{POINTS}", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    return out, " ".join(done.stdout.split()), (out / "report.md").read_text()


def table(report: str, heading: str) -> list[list[str]]:
    """The cells of every row of the table under `heading` in a report.md."""
    section = report.split(f"## {heading}\n\n")[1].split("\n\n")[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()[2:]]


def ms(seconds: float) -> str:
    """The report's step time: 3 significant digits, whole and grouped from 1,000 ms."""
    value = seconds * 1e3
    return f"{value:,.0f} ms" if value >= 999.5 else f"{float(f'{value:.3g}'):#.3g}".rstrip(".") + " ms"


def test_the_terminal_says_the_capped_points_as_a_range_and_a_count(swept):
    out, said, _ = swept
    values = sorted(pd.read_csv(out / "sweep.csv")["sweep_value"].unique())
    above = [v for v in values if v > CAP]
    i = values.index(above[0])
    assert f"{values[i - 1]:.3g}" != f"{above[0]:.3g}"  # 3 digits tell the first capped point from the one below
    assert (f"capped: NCCL moves at most 1.96 GB/s a node on this fabric, so at the {len(above)} points from "
            f"{above[0]:.3g} to 100 GB/s the link is priced at 1.96 GB/s") in said, said
    capped = said[said.index("capped:"):]
    assert len(re.findall(r"\d+(?:\.\d+)?, ", capped.split("the link is priced")[0])) == 0  # no list of values


def test_a_dense_sweeps_report_shows_a_readable_subset_each_row_as_sweep_csv_has_it(swept):
    out, _, report = swept
    frame = pd.read_csv(out / "sweep.csv")
    assert len(frame) == POINTS * 2  # the CSV keeps every point
    values = sorted(frame["sweep_value"].unique())
    steps = frame.pivot_table(index="sweep_value", columns="strategy", values="step_s", aggfunc="first")
    rows = table(report, "Step time by bandwidth")
    assert 10 <= len(rows) <= 40, len(rows)
    labels = [row[0] for row in rows]
    assert len(set(labels)) == len(labels)
    covered = 0
    for label, adamw, dlion in rows:
        merged = re.fullmatch(r"(\S+)-(\S+) \(capped, (\d+) points\)", label)
        if merged:  # a run of capped points: the count of them in sweep.csv, each printing as the row does
            lo, hi = (min(values, key=lambda v, x=float(x): abs(v - x)) for x in merged.group(1, 2))
            inside = [v for v in values if lo <= v <= hi]
            assert int(merged.group(3)) == len(inside) and all(v > CAP for v in inside)
            assert {ms(steps.loc[v, "adamw"]) for v in inside} == {adamw}
            assert {ms(steps.loc[v, "dlion-mavo"]) for v in inside} == {dlion}
            covered += len(inside)
        else:  # one point: the swept value nearest the label, its figures
            value = min(values, key=lambda v: abs(v - float(label.split()[0])))
            assert label.endswith("(capped)") == (value > CAP)
            assert (ms(steps.loc[value, "adamw"]), ms(steps.loc[value, "dlion-mavo"])) == (adamw, dlion)
            covered += 1
    capped = [v for v in values if v > CAP]
    assert any(row[0].startswith(f"{capped[0]:.3g}") for row in rows)  # the cap's first point
    assert covered < len(values)  # a subset, and it says so, naming the CSV
    assert "sweep.csv has every point" in report.split("## Speedup")[0]
    # the note counts what the table shows: the single points, then the merged rows (a user counted 30
    # rows under "29 of the sweep's 200 points")
    singles, merged = sum(" points)" not in r[0] for r in rows), sum(" points)" in r[0] for r in rows)
    said = " ".join(report.split("## Speedup")[0].split())
    assert f"Rows: {singles} of the sweep's {len(values):,} points" in said
    assert ("; one more row of consecutive capped points" if merged == 1
            else f"; {merged} more rows of consecutive capped points") in said
    for heading in ("Speedup against adamw@bf16-allreduce", "Bytes one node sends across nodes per step"):
        assert [row[0].split(" (")[0] for row in table(report, heading)] == [label.split(" (")[0] for label in labels]


def test_the_rows_keep_both_points_either_side_of_each_crossover_and_space_the_rest_geometrically():
    """Two runs cross at 2 GB/s (1 + 1/v against 0.5 + 2/v); past a cap of 10 their steps are the cap's."""
    from lionsim.reports.sweep_rows import MAX_ROWS, shown_rows

    values = np.geomspace(0.1, 100, 400)
    priced = np.minimum(values, 10.0)
    frame = pd.concat([pd.DataFrame({"strategy": name, "transport": "t", "sweep_value": values, "step_s": step})
                       for name, step in (("a", 1 + 1 / priced), ("b", 0.5 + 2 / priced))])
    crossings = pd.DataFrame({"crossover": [2.0]})
    shown = shown_rows(frame, {"step_s": lambda s: f"{s:.6g}"}, cap=10.0, crossings=(crossings,))
    firsts = [row.first for row in shown.rows]
    below, above = max(v for v in values if v <= 2.0), min(v for v in values if v >= 2.0)
    assert below in firsts and above in firsts and values[0] in firsts
    (merged,) = [row for row in shown.rows if row.count > 1]
    assert (merged.first, merged.last, merged.count) == (min(v for v in values if v > 10), 100.0,
                                                         sum(v > 10 for v in values))
    assert len(shown.rows) <= MAX_ROWS + 2
    single = [row.first for row in shown.rows if row.count == 1]
    gaps = np.diff(np.log(single))
    assert gaps.max() <= 2 * math.log(10.0 / 0.1) / (MAX_ROWS - 4)  # no stretch left out
    labelled = [label for _, label in shown.labelled("bandwidth")]
    assert len(set(labelled)) == len(labelled)


def test_a_sweep_of_few_points_shows_every_one():
    from lionsim.reports.sweep_rows import MAX_ROWS, shown_rows

    values = np.geomspace(1, 100, MAX_ROWS)
    frame = pd.DataFrame({"strategy": "a", "transport": "t", "sweep_value": values, "step_s": 1.0})
    shown = shown_rows(frame, {"step_s": str}, cap=5.0)
    assert [row.first for row in shown.rows] == list(values) and shown.note() == ""
    assert [row.capped for row in shown.rows] == [v > 5.0 for v in values]
