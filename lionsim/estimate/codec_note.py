"""The caption's line where a run's codec (encode + decode) is a large share of its step.

With --kernels table (the default) encode and decode are priced as lionsim's own implementation
runs them (docs/time-model-kernels.md): packing 1-bit votes through int64 bit planes, DeepSpeed's
twenty-odd passes, not a custom CUDA kernel. Where that is 15% of a step or more, the run's
speedup rests on it, so the caption says so and names the option that prices the best kernel.
"""

from __future__ import annotations

import pandas as pd

CODEC_SHARE = 0.15
"""The share of a step from which the caption names a run's codec: a kernel that made it free would
lift the run's speedup by up to 1 / (1 - share), 18% at 0.15 (a new user's D-Lion on RTX 4090s, an
18% share left unnamed at a fifth, moved from 2.33x to 2.80x under --kernels ideal). Below it sit
the plain casts of a bf16 all-reduce (AdamW's 12% on dgx-h100), which no better kernel shrinks."""

IDEAL_CHOICE = "ideal fused passes"
"""What estimate.csv's `kernels` column says under --kernels ideal (KernelChoice.describe): the best
kernel is already what priced the row."""


def codec_share_line(frame: pd.DataFrame) -> str:
    """One sentence naming the runs (an estimate frame's rows) whose encode + decode is CODEC_SHARE
    of their step or more, each with its share and its larger half; "" where none is, or where
    --kernels ideal priced them already."""
    shares = []
    for row in frame.itertuples(index=False):
        codec = row.encode_s + row.decode_s
        if row.kernels == IDEAL_CHOICE or not row.step_s > 0 or codec < CODEC_SHARE * row.step_s:
            continue
        part, seconds = ("decode", row.decode_s) if row.decode_s >= row.encode_s else ("encode", row.encode_s)
        shares.append(f"{row.strategy}@{row.transport} {codec / row.step_s:.0%} ({part} {seconds * 1e3:.3g} ms)")
    if not shares:
        return ""
    return (f"Encode + decode are a large share of a step: {', '.join(shares)}, priced as lionsim's implementation "
            "runs them (docs/time-model-kernels.md); --kernels ideal prices the best possible kernel.")
