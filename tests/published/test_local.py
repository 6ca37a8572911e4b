"""Published bandwidth needs of local-step methods side by side: the cases come from two papers
with their configurations, the hold-out is another paper's table kept apart, every printed figure
is a point of the grid the figures are read onto, one case against a closed form, the docs block
is the one the cases give now (a command two tables share run once), and the terminal's forms
(the compact table, --case's record) carry the same figures within the terminal's width."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from lionsim.published import cases as published, compressed as pc, local as pl

DOC = Path(__file__).resolve().parents[2] / "docs" / "clusters.md"


def _source(case: published.Case) -> str:
    return re.split(r"[,:]", case.source, maxsplit=1)[0]


def test_points_from_two_papers_and_a_hold_out_from_another_table():
    cases, holdout = pl.LOCAL_STEP_CASES, pl.LOCAL_STEP_HOLDOUT
    assert len(cases) >= 6 and len(holdout) >= 3
    assert len({_source(c) for c in (*cases, *holdout)}) >= 2 and not {_source(c) for c in cases} & {
        _source(c) for c in holdout}
    keys = [c.key for c in (*cases, *holdout, *published.CASES, *pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES)]
    assert len(keys) == len(set(keys))
    for case in (*cases, *holdout):
        assert case.published > 0 and case.config and case.quantity and case.command[0] == "estimate"
        assert case.read in pl.READS
    for finding in pl.FINDINGS:
        assert finding.source and finding.config and finding.published and len(finding.why) > 40


def test_every_printed_bandwidth_is_a_grid_point_to_about_its_printed_tenth():
    grid = np.logspace(-1, 3, 50)
    assert pl.GRID_GBPS == tuple(float(g) for g in grid)
    for case in (*pl.LOCAL_STEP_CASES, *pl.LOCAL_STEP_HOLDOUT):
        if case.read == "gbit_needed_grid":
            assert np.min(np.abs(grid - case.published)) <= 0.055, case.key  # printed 86.8 for 86.85, 0.9 for 0.954


@pytest.mark.parametrize("solved,read", [(97.3, 86.851), (86.851, 71.969), (86.852, 86.851), (0.1, math.nan),
                                         (0.11, 0.1), (5000.0, 1000.0), (math.nan, math.nan)])
def test_a_solved_bandwidth_is_read_as_the_last_grid_point_below_it(solved, read):
    got = pl.grid_below(solved)
    assert (math.isnan(got) and math.isnan(read)) or got == pytest.approx(read, abs=1e-3)


def test_data_parallel_at_99_percent_waits_only_for_its_last_layer_a_closed_form():
    # 1B, 24 layers of 41,666,750 parameters a bucket (--bucket-mb 166.667), bf16 over a 2-worker ring
    # without latency: at 99% the last layer, ready when backward ends, must cross within a hundredth
    # of the worker's own work: B = 16 bits x layer / ((busy / 0.99 - busy))
    case = next(c for c in pl.LOCAL_STEP_CASES if c.key == "sdiloco-1b-dp-cu99")
    frame = published._run(case.command)
    row = frame.iloc[0]
    busy = row["step_s"] - row["comm_exposed_s"]  # the worker's own work does not depend on the link
    layer = int(166.667e6 // 4)
    closed = 16 * layer / (busy / 0.99 - busy) / 1e9
    assert row["bandwidth_needed_GBps"] * 8 == pytest.approx(closed, rel=1e-5)
    assert pl.figure(case)[0] == pytest.approx(case.published, abs=0.05)  # 657 Gbit/s, read as 569.0


def test_each_method_gives_its_bucket_exactly_where_it_exchanges_per_bucket():
    """estimate refuses --bucket-mb where no run exchanges per bucket: each method's case (one per
    method and table) runs, and gives the bucket only where its row's overlap is buckets."""
    firsts = {}
    for case in (*pl.LOCAL_STEP_CASES, *pl.LOCAL_STEP_HOLDOUT):
        method = case.key.rsplit("-cu", 1)[0].split("-", 2)[-1]
        firsts.setdefault((case.key.split("-")[0], method), case)
    assert len(firsts) == len(pl.STREAMING_METHODS) + len(pl.SCALING_METHODS) + 2  # and Table 1's two rows
    for case in firsts.values():
        row = published._run(case.command).iloc[0]
        assert ("--bucket-mb" in case.command) == (row["overlap"] == "buckets"), (case.key, row["overlap"])


def test_the_utilisation_at_1_gbit_is_the_step_at_unlimited_bandwidth_over_the_step_at_1_gbit():
    # Table 1's own definition: hours at infinite bandwidth over hours at 1 Gbit/s; the same command
    # at 1 Gbit/s and at 10^6 GB/s (no latency on dc-pair: the exchange there takes under a microsecond)
    case = next(c for c in pl.LOCAL_STEP_CASES if c.key == "sdiloco-1b-overlapped-fp4-1gbits")
    command = tuple("bandwidth=0.125,1e6" if a == "bandwidth=0.125" else a for a in case.command)
    slow, unlimited = published._run(command)["step_s"]
    assert pl.figure(case)[0] == pytest.approx(unlimited / slow, rel=1e-6)


def test_a_case_runs_from_any_directory(tmp_path, monkeypatch):
    case = next(c for c in pl.LOCAL_STEP_CASES if c.key == "sdiloco-1b-dp-cu50")
    assert "examples/clusters/dc-pair.toml" in case.command
    monkeypatch.chdir(tmp_path)
    ours, solved = pl.figure(case)
    assert 0 < ours <= solved < math.inf


@pytest.fixture(scope="module")
def both():
    return pl.table_and_holdout()


@pytest.mark.slow  # every case's estimate --need (about 20 s of CPU)
def test_the_docs_block_is_the_cases_run_now(both):
    text = DOC.read_text()
    block = text.split("<!-- published-local:begin -->\n", 1)[1].split("\n<!-- published-local:end -->", 1)[0]
    assert block == pl.docs_block(*both)


@pytest.mark.slow  # every case's estimate --need (about 20 s of CPU)
def test_the_table_meets_its_goal_or_says_why(both):
    table, _ = both
    s = pl.summary(table)
    assert s["median"] <= pl.GOAL_MEDIAN
    missed = {c.key: c.miss for c in pl.LOCAL_STEP_CASES}
    assert all(missed[key] for key in s["beyond"]), s["beyond"]


_FIRST = {c.command: c.published for c in reversed((*pl.LOCAL_STEP_CASES, *pl.LOCAL_STEP_HOLDOUT))}


def _fake_figure(case: published.Case) -> tuple[float, float]:
    """A figure without running anything, of the command alone (as a real one): 10% above the
    published figure of the first case with that command, solved 20% above."""
    return _FIRST[case.command] * 1.1, _FIRST[case.command] * 1.2


def test_a_command_the_table_and_the_hold_out_share_runs_once(monkeypatch):
    ran = []
    monkeypatch.setattr(pl, "figure", lambda case: ran.append(case.command) or _fake_figure(case))
    every = (*pl.LOCAL_STEP_CASES, *pl.LOCAL_STEP_HOLDOUT)
    frame = pl.results(every)
    commands = [c.command for c in every]
    assert len(ran) == len(set(ran)) == len(set(commands)) < len(commands)  # Table 6's 10B rows are Table 4's
    assert list(frame["key"]) == [c.key for c in every]
    for case, row in zip(every, frame.itertuples(index=False)):
        assert (row.lionsim, row.solved) == _fake_figure(case)
        assert row.error == pytest.approx(row.lionsim / case.published - 1, rel=1e-12)


def test_markdown_prints_the_docs_block_of_both_tables(monkeypatch, capsys):
    monkeypatch.setattr(pl, "figure", _fake_figure)
    assert pl.main(["--markdown"]) == 0
    block = pl.docs_block(pl.results(pl.LOCAL_STEP_CASES), pl.results(pl.LOCAL_STEP_HOLDOUT))
    assert capsys.readouterr().out == block + "\n"
    assert pl.main(["--holdout", "--markdown"]) == 0
    assert capsys.readouterr().out == pl.markdown(pl.results(pl.LOCAL_STEP_HOLDOUT), pl.LOCAL_STEP_HOLDOUT) + "\n"


@pytest.mark.parametrize("argv,cases", [([], pl.LOCAL_STEP_CASES), (["--holdout"], pl.LOCAL_STEP_HOLDOUT)])
def test_the_terminal_table_keeps_to_the_terminal_s_width_a_row_a_case(argv, cases, monkeypatch, capsys):
    monkeypatch.setattr(pl, "figure", _fake_figure)
    monkeypatch.setenv("COLUMNS", "80")
    assert pl.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    assert lines[0].split() == ["case", "quantity", "published", "lionsim", "solved", "error"]
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in {c.key for c in cases}}
    assert list(rows) == [c.key for c in cases]
    for case in cases:
        lionsim, solved = _fake_figure(case)
        assert rows[case.key].rstrip().endswith(f"{pl._shown(solved)}  {lionsim / case.published - 1:+.1%}")
    text = " ".join(lines)
    assert "Median |error|" in text and ("--holdout" in text) == (not argv)  # the table points to the hold-out


def test_a_case_s_record_holds_its_source_configuration_and_command(monkeypatch, capsys):
    monkeypatch.setattr(pl, "figure", _fake_figure)
    case = next(c for c in pl.LOCAL_STEP_HOLDOUT if c.key == "scaling-405b-diloco-h10-cu80")
    assert pl.main(["--case", case.key]) == 0
    out = capsys.readouterr().out
    text = " ".join(out.splitlines())  # the fields wrapped at spaces
    assert f"source: {case.source}" in text and f"configuration: {case.config}" in text
    assert f"command: {case.shell}" in out.splitlines() and "--local-steps 10" in case.shell  # one line, whole
    assert f"published: {case.published:.1f}" in text and "error: +10.0% (solved: +20.0%)" in text
    assert max(len(line) for line in out.splitlines() if not line.startswith("command: ")) <= 100
