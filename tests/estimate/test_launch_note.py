"""The caption's line where compute is the kernels' launch floor, not the FLOPs
(lionsim.estimate.launch_note), against the closed forms: 6 P T FLOPs at peak x mfu, and
3 kernels a parameter tensor x the device's per-kernel floor."""

from __future__ import annotations

import io
import re

import pandas as pd

from lionsim.compute import DEVICES
from lionsim.estimate import EstimateConfig
from lionsim.estimate.captioned import estimate
from tests.helpers.cli import run_cli

LINE = "compute is launch-bound:"


def _run(tokens: int | None = None):
    frame = estimate(EstimateConfig(model="gpt2-345m", workers=16, network="dgx-h100",
                                    strategies=["adamw@bf16-allreduce"], tokens_per_worker=tokens))
    line = next((n for n in frame.attrs.get("caption_notes", []) if n.startswith(LINE)), None)
    return frame, line


def test_a_launch_bound_step_says_so_with_the_floor_it_priced_and_where_the_flops_take_over():
    frame, line = _run()  # one sequence of 1,024 tokens a worker
    h100, params, tensors = DEVICES.get("h100"), int(frame["params"].iloc[0]), 388
    floor_s, flops_s = 3 * tensors * h100.kernel_s, 6 * params * 1024 / (h100.peak_flops * 0.4)
    assert floor_s > flops_s and abs(float(frame["compute_s"].iloc[0]) - floor_s) < 1e-12
    assert line is not None and f"{3 * tensors:,} kernels (3 a parameter tensor x {tensors})" in line
    crossover = int(re.search(r"from about ([\d,]+) tokens", line).group(1).replace(",", ""))
    assert crossover == -(-1024 * floor_s // flops_s)  # where 6 P T at peak x mfu reaches the floor
    below, _ = _run(crossover - 1)
    above, no_line = _run(crossover)
    assert float(below["compute_s"].iloc[0]) == floor_s and float(above["compute_s"].iloc[0]) > floor_s
    assert no_line is None  # the FLOPs decide it: nothing to say


def test_the_csv_holds_the_launch_floor_so_tools_can_tell_a_launch_bound_row(capsys):
    """estimate.csv's compute_floor_s: 3 kernels a parameter tensor x the device's per-kernel time,
    the same whatever the batch; compute_s equals it where the caption calls compute launch-bound,
    and exceeds it once the FLOPs take over."""
    argv = ["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "dgx-h100",
            "-s", "adamw@bf16-allreduce", "--format", "csv"]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    floor_s = 3 * 388 * DEVICES.get("h100").kernel_s  # gpt2-345m's 388 parameter tensors
    assert row["compute_floor_s"] == floor_s and row["compute_s"] == floor_s  # launch-bound at 1,024 tokens
    big, line = _run(1024 * 16)
    assert line is None and float(big["compute_floor_s"].iloc[0]) == floor_s < float(big["compute_s"].iloc[0])
