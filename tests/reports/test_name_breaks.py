"""Where a table's run names and word cells break to keep 80 columns in a pipe (lionsim.reports.widths):
a local-step run's name before its ` H=` and after a '-', and a `not reached` cell between its words
before any run name folds onto a third line."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from lionsim.reports.widths import wrap_name
from tests.helpers import REPO
from tests.helpers.cli import run_cli


@pytest.mark.parametrize("name, width, lines", [
    ("streaming-diloco H=4", 20, ["streaming-diloco H=4"]),
    ("streaming-diloco H=4", 17, ["streaming-diloco", "H=4"]),  # before its H first: the strategy stays whole
    ("streaming-diloco H=4", 10, ["streaming-", "diloco H=4"]),
    ("streaming-diloco H=500", 14, ["streaming-", "diloco H=500"]),
    ("streaming-diloco H=500", 8, ["streaming-", "diloco", "H=500"]),  # a piece wider than 8 stays whole
    ("diloco H=2", 6, ["diloco", "H=2"]),
])
def test_a_local_step_name_breaks_greedily_before_its_h_and_after_a_dash(name, width, lines):
    assert wrap_name(name, width) == lines


@pytest.mark.parametrize("name, width, lines", [
    ("@hier:int8-allreduce", 16, ["@hier:", "int8-allreduce"]),  # the transport whole after its prefix
    ("@hier:int8-allreduce", 20, ["@hier:int8-allreduce"]),
    ("@hier:compressed-allreduce", 16, ["@hier:compressed-", "allreduce"]),  # too long after it: greedy
    ("@hier:a2a-1bit", 10, ["@hier:", "a2a-1bit"]),
])
def test_a_prefixed_transport_breaks_after_its_prefix_where_the_name_then_fits(name, width, lines):
    assert wrap_name(name, width) == lines


def test_at_80_columns_the_estimate_on_nodes_of_8_keeps_each_transport_name_on_one_line(capsys):
    """`@bf16-` / `allreduce` and `@hier:fp16-` / `allreduce` at 80 columns: a run's name took three
    lines and grepping for bf16-allreduce missed it. The table's blank edges go first (two columns),
    a hier: form breaks after its prefix: every transport of --format csv is whole on a line."""
    argv = ["estimate", "--model", "llama-7b", "--workers", "32", "--network", "25gbe", "--gpus-per-node", "8",
            "-s", "adamw@bf16-allreduce,dlion-mavo,dlion-mavo@hier:int8-allreduce,dlion-mavo@hier:a2a-1bit"]
    code, out, _ = run_cli(argv, capsys)
    table = out[:out.index("Does not fit")]
    assert code == 0 and max(map(len, out.splitlines())) <= 80, out
    code, csv, _ = run_cli([*argv, "--format", "csv"], capsys)
    lines = [line.strip() for line in table.splitlines()]
    for transport in pd.read_csv(io.StringIO(csv))["transport"]:
        prefix, _, name = transport.rpartition(":")
        assert f"@{transport}" in lines or (f"@{prefix}:" in lines and name in lines), (transport, table)


def _header(out: str) -> list[str]:
    """The step table's header line(s): those above its rule."""
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("───"))
    return [line for line in lines[:rule] if "compute" in line or line.strip() in ("speed", "up")]


def test_at_80_columns_the_speedup_header_stays_whole_where_dropping_the_edges_fits(capsys, monkeypatch):
    """gpt2 on 4 nodes of 8: 81 columns with the blank edges and `speedup` whole, so dropping the
    edges (79) keeps it whole, as it keeps names; at 77 that is not enough and it folds (`speed` / `up`)."""
    argv = ["estimate", "--model", "gpt2-124m", "--workers", "32", "--gpus-per-node", "8", "--network", "100gbe"]
    monkeypatch.setenv("COLUMNS", "81")  # the reference: edges and `speedup` whole, names on two lines
    code, wide, _ = run_cli(argv, capsys)
    (header,) = _header(wide)
    assert code == 0 and header.startswith(" run") and header.split()[-1] == "speedup", wide
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80, out
    (header,) = _header(out)
    assert header.split()[-1] == "speedup" and header.startswith("run"), header
    monkeypatch.setenv("COLUMNS", "77")
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and [line.split()[-1] for line in _header(out)] == ["speed", "up"], out


@pytest.mark.parametrize("extra, broken", [
    ([], ["streaming-diloco", "H=4"]),
    (["--local-steps", "500"], ["streaming-diloco", "H=500"]),  # the blank edges dropped: no break after '-'
])
def test_an_estimate_with_a_long_local_step_name_fits_80_columns_in_a_pipe(capsys, extra, broken):
    """`-s adamw,streaming-diloco` at 32 workers printed 83 columns (87 with --local-steps 500):
    `streaming-diloco H=4` never broke. Now it breaks before its H, or after its '-' where it must;
    each run's numbers (read back from --format csv) stay whole on its first line."""
    from lionsim.cli.estimate_view import _ms

    argv = ["estimate", "--model", "gpt2-1.3b", "--workers", "32", "--network", "h100x8-10gbe",
            "-s", "adamw,streaming-diloco", *extra]
    code, out, _ = run_cli(argv, capsys)
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80, out
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == broken[:1])
    assert lines[at + 1].strip() == broken[1], lines[at:at + 3]
    code, csv, _ = run_cli([*argv, "--format", "csv"], capsys)
    for row in pd.read_csv(io.StringIO(csv)).itertuples():
        name = "adamw*" if row.strategy == "adamw" else broken[0]
        words = next(line.split() for line in lines if line.split()[:1] == [name])
        assert [_ms(row.step_s), f"{row.speedup:.2f}x"] == [words[-4], words[-1]], words


def _bench_summary(runs: list[str], missed: str) -> pd.DataFrame:
    """The default bench's summary (reports/readme) for `runs`, with `missed` never reaching the target."""
    summary = pd.read_csv(REPO / "reports" / "readme" / "default-bench" / "summary.csv")
    summary = summary[(summary["strategy"] + "@" + summary["transport"]).isin(runs)].reset_index(drop=True)
    gone = summary["strategy"] + "@" + summary["transport"] == missed
    summary.loc[gone, ["target_reached", "time_to_target_s", "time_to_target_speedup"]] = [False, math.nan, math.nan]
    return summary


def _printed(summary: pd.DataFrame, capsys) -> list[str]:
    """The bench's table as `lionsim bench ... | cat` prints it (bench's own print: emit)."""
    from lionsim.cli.output import emit
    from lionsim.reports.tables import summary_table

    emit(summary, "table", lambda: summary_table(summary, {"config": {"steps": 100}}), whole=True)
    return capsys.readouterr().out.splitlines()


def test_one_not_reached_cell_breaks_between_its_words_rather_than_fold_every_run_name(capsys):
    """One `not reached` in bench's `to tgt` column widened it to 11 and every run name folded onto
    three lines (`adamw*` / `@fp32-` / `allreduce`). Its words break instead, beside the two-line
    names, as they did where the names had to break anyway."""
    lines = _printed(_bench_summary(["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"],
                                    "dlion-mavo@int8-allreduce"), capsys)
    assert max(map(len, lines)) <= 80
    firsts = [line.split()[0] for line in lines if line.strip()]
    assert firsts[firsts.index("adamw*"):][:4] == ["adamw*", "@fp32-allreduce", "dlion-mavo", "@int8-allreduce"]
    row = next(i for i, line in enumerate(lines) if line.startswith("dlion-mavo"))
    assert lines[row].split()[-1] == "not" and lines[row + 1].split() == ["@int8-allreduce", "reached"]


def test_a_not_reached_cell_breaks_the_same_way_where_the_names_must_break_too(capsys):
    """With a longer name (`@compressed-allreduce`) the names break after a '-' and the cell still
    reads `not` / `reached`, one word a line, on the run's first two lines."""
    lines = _printed(_bench_summary(["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce",
                                     "onebit-adam@compressed-allreduce"], "dlion-mavo@int8-allreduce"), capsys)
    assert max(map(len, lines)) <= 80
    row = next(i for i, line in enumerate(lines) if line.startswith("dlion-mavo"))
    assert lines[row].split()[-1] == "not" and lines[row + 1].split()[-1] == "reached"
