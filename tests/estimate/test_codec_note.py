"""The caption's line where a run's encode + decode is a large share of its step
(lionsim.estimate.codec_note): the shares checked against estimate.csv's own columns."""

from __future__ import annotations

import re

from lionsim.estimate import EstimateConfig
from lionsim.estimate.captioned import estimate
from tests.helpers.cli import run_cli

RUNS = ["adamw@bf16-allreduce", "dlion-mavo", "dlion-mavo@allgather-1bit", "onebit-adam"]


def _frame(network: str, kernels: str = "table"):
    return estimate(EstimateConfig(model="gpt2-345m", workers=16, network=network, gpus_per_node=8,
                                   strategies=RUNS, kernels=kernels))


def test_runs_whose_codec_is_15_percent_of_the_step_are_named_with_their_share():
    """allgather-1bit's decode gathers and unpacks 16 workers' votes: on NVLink nodes over NDR it is
    over half of dlion-mavo's step, which the caption said nothing of."""
    frame = _frame("dgx-h100")
    line = frame.attrs["codec_line"]
    share = (frame["encode_s"] + frame["decode_s"]) / frame["step_s"]
    runs = frame["strategy"] + "@" + frame["transport"]
    expected = {run: s for run, s in zip(runs, share) if s >= 0.15}
    assert "dlion-mavo@allgather-1bit" in expected and "adamw@bf16-allreduce" not in expected
    named = dict(re.findall(r"(\S+@\S+) (\d+)% \((?:en|de)code [\d.]+ ms\)", line))
    assert {run: int(p) for run, p in named.items()} == {run: round(100 * s) for run, s in expected.items()}
    assert "docs/time-model-kernels.md" in line and "--kernels ideal prices the best possible kernel" in line


def test_no_line_where_no_codec_is_15_percent_of_a_step_or_the_ideal_kernel_priced_it():
    slow = _frame("10gbe")  # 10 GbE: comm dwarfs every codec
    assert ((slow["encode_s"] + slow["decode_s"]) / slow["step_s"]).max() < 0.15
    assert slow.attrs["codec_line"] == ""
    assert _frame("dgx-h100", "ideal").attrs["codec_line"] == ""


def test_the_breakdowns_caption_prints_it_on_a_line_of_its_own(capsys):
    code, out, err = run_cli(["estimate", "-m", "gpt2-345m", "-n", "16", "--network", "dgx-h100",
                              "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@allgather-1bit"], capsys)
    assert code == 0, err
    words = " ".join(out.split())
    assert "Encode + decode are a large share of a step: dlion-mavo@allgather-1bit 78% (decode 51.2 ms)" in words
    assert any(line.startswith("Encode + decode are") for line in out.splitlines())
