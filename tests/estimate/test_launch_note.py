"""The caption's line where compute is the kernels' launch floor, not the FLOPs
(lionsim.estimate.launch_note), against the closed forms: 6 P T FLOPs at peak x mfu, and
3 kernels a parameter tensor x the device's per-kernel floor."""

from __future__ import annotations

import re

from lionsim.compute import DEVICES
from lionsim.estimate import EstimateConfig
from lionsim.estimate.captioned import estimate

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
