"""A bandwidth sweep under NCCL over sockets, as a new user runs it: its points past the sockets
cap (2 channels x 0.98 GB/s = 1.96 GB/s a node) are marked in crossover.csv, the crossover
tables and the report's rows by bandwidth, and `lionsim report` carries the library and every note
the terminal printed."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app

CLUSTER = ["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--gpus-per-node", "8",
           "--network", "25gbe", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@int8-allreduce"]
SOCKETS_CAP = 2 * 0.98
"""NCCL's default 2 socket channels a NIC at 0.98 GB/s a channel (docs/clusters.md)."""


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("capped") / "run"
    done = CliRunner().invoke(app, [*CLUSTER, "--traits", "nccl", "--sweep", "bandwidth=0.1:100:7", "--out", str(out)])
    assert done.exit_code == 0, done.output
    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    return out, words(done.stdout), words((out / "report.md").read_text())


def first_cells(report: str, heading: str) -> list[str]:
    """The first cell of every row of the table under `heading` in a report.md."""
    section = report.split(f"## {heading}\n\n")[1].split("\n\n")[0]
    return [line.split("|")[1].strip() for line in section.splitlines()[2:]]


def test_points_past_the_sockets_cap_are_marked_and_repeat_the_caps_step(swept):
    out, said, _ = swept
    crossings = pd.read_csv(out / "crossover.csv")
    assert crossings["capped_above_GBps"].tolist() == pytest.approx([SOCKETS_CAP])
    rows = pd.read_csv(out / "sweep.csv")
    above = sorted(v for v in rows["sweep_value"].unique() if v > SOCKETS_CAP)
    assert above == pytest.approx([10 ** 0.5, 10, 10 ** 1.5, 100])
    at_cap = CliRunner().invoke(app, [*CLUSTER, "--traits", "nccl", "--sweep", f"bandwidth={SOCKETS_CAP}",
                                      "--format", "csv"])
    capped = pd.read_csv(io.StringIO(at_cap.stdout)).set_index("strategy")["step_s"]
    same_algorithm = rows[(rows["sweep_value"] > SOCKETS_CAP) & (rows["sweep_value"] < 50)]  # 100 flips to tree
    for strategy, run in same_algorithm.groupby("strategy"):
        assert run["step_s"].tolist() == pytest.approx([capped[strategy]] * 3)  # the cap's figures, repeated
    assert "capped: NCCL moves at most 1.96 GB/s a node on this fabric, so at 3.16, 10, 31.6, 100 GB/s" in said


def test_an_uncapped_library_marks_no_point(tmp_path):
    out = tmp_path / "run"
    done = CliRunner().invoke(app, [*CLUSTER, "--traits", "ideal", "--sweep", "bandwidth=0.1:100:4", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert pd.read_csv(out / "crossover.csv")["capped_above_GBps"].isna().all() and "capped:" not in done.stdout
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    assert "(capped)" not in (out / "report.md").read_text()


def test_the_reports_rows_past_the_cap_are_marked(swept):
    out, _, _ = swept
    report = (out / "report.md").read_text()
    values = sorted(pd.read_csv(out / "sweep.csv")["sweep_value"].unique())
    expected = [f"{v:.3g}" + (" (capped)" if v > SOCKETS_CAP else "") for v in values]  # 0.1, 0.316, ... 100
    by_bandwidth = [part.split("\n", 1)[0] for part in report.split("\n## ")[1:]
                    if "| inter-node bandwidth (GB/s) |" in part]
    assert by_bandwidth == ["Step time by bandwidth", "Speedup against adamw@bf16-allreduce",
                            "Bytes one node sends across nodes per step"]
    for heading in by_bandwidth:  # one rule in every table: "the same rows" (its note) marked alike
        assert first_cells(report, heading) == expected, heading
    assert "(capped): the bandwidth passes NCCL's cap of 1.96 GB/s a node" in report.split("## Speedup")[0]


def test_the_report_names_the_library_and_carries_the_cap_and_flip_notes(swept):
    _, said, report = swept
    assert "| library | nccl over sockets |" in report
    for note in ("NCCL's sockets transport moves at most 1.96 GB/s a node whatever the link",
                 "(NCCL chooses on the link: a flip can slow a step)",
                 "ring/simple at 0.1-31.6 GB/s; tree/simple at 100 GB/s"):
        assert note in said and note in report, note  # what the terminal printed, the report carries
    assert "capped: NCCL moves at most 1.96 GB/s a node" in report.split("## Step-time crossovers")[1]
