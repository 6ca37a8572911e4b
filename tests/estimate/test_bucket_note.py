"""estimate's caption where a run exchanged per bucket steps slower than the same run priced once
after backward: it names the run with both steps, each the figure of an estimate run on its own
(--overlap auto, --overlap none), and says nothing new where per bucket is the faster."""

from __future__ import annotations

import io

import pandas as pd

from lionsim.cli.estimate_notes import BUCKETS_NOTE
from lionsim.numbers import ms_text
from tests.helpers.cli import run_cli

CASE = ["estimate", "--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--gpus-per-node",
        "8", "--device", "h100", "-s", "adamw", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"]
SLOWER = "more than backward hides here"
"""Words of the line where a run is slower per bucket (not of BUCKETS_NOTE, which it replaces)."""


def steps(capsys, network: str, overlap: str) -> pd.DataFrame:
    """Each run's overlap and step, from an estimate at `overlap` alone (its CSV)."""
    code, out, _ = run_cli([*CASE, "--network", network, "--overlap", overlap, "--format", "csv"], capsys)
    assert code == 0
    return pd.read_csv(io.StringIO(out)).set_index(["strategy", "transport"])


def test_a_run_slower_per_bucket_is_named_with_both_steps(capsys):
    """25 GbE over sockets: AdamW's 57 buckets of 25 MB each run at a mid-size call's bandwidth,
    slower than one call of 1.4 GB after backward."""
    auto, none = steps(capsys, "25gbe", "auto"), steps(capsys, "25gbe", "none")
    slower = [(s, t) for (s, t), row in auto.iterrows() if row.overlap == "buckets" and row.step_s > none.step_s[s, t]]
    assert slower == [("adamw", "fp32-allreduce"), ("adamw", "bf16-allreduce")]
    said = "; ".join(f"{s}@{t} {ms_text(auto.step_s[s, t] * 1e3)} ms per bucket, "
                     f"{ms_text(none.step_s[s, t] * 1e3)} ms after backward" for s, t in slower)
    assert "adamw@fp32-allreduce 1,160 ms per bucket, 838 ms after backward" in said  # the user's figures

    code, out, _ = run_cli([*CASE, "--network", "25gbe"], capsys)
    text = " ".join(out.split())
    ratios = ", ".join(f"{auto.step_s[s, t] / none.step_s[s, t]:.2f}x for {s}@{t}" for s, t in slower)
    assert "1.38x for adamw@fp32-allreduce" in ratios  # 1,160 / 838
    assert code == 0 and (f"{SLOWER}: {said} (so a speedup against such a step is larger than against one exchange "
                          f"after backward by that ratio: {ratios})") in text
    assert ("A larger --bucket-mb sends fewer, larger calls, but hides less behind backward; --overlap none prices "
            "one exchange after backward.") in text
    assert BUCKETS_NOTE.strip() not in text and text.count("Per bucket or tensor") == 1  # one line, in its place

    code, _, err = run_cli([*CASE, "--network", "25gbe", "--format", "csv"], capsys)
    notes = [line for line in err.splitlines() if SLOWER in line]  # a script reading the CSV is told too
    assert code == 0 and len(notes) == 1 and notes[0].startswith("note: Per bucket") and said in notes[0]


def test_no_line_where_per_bucket_is_the_faster(capsys):
    """dgx-h100 (InfiniBand): backward hides the buckets, so per bucket is the faster step."""
    auto, none = steps(capsys, "dgx-h100", "auto"), steps(capsys, "dgx-h100", "none")
    bucketed = auto[auto.overlap == "buckets"]
    assert len(bucketed) == 2 and (bucketed.step_s < none.step_s[bucketed.index]).all()

    code, out, _ = run_cli([*CASE, "--network", "dgx-h100"], capsys)
    text = " ".join(out.split())
    assert code == 0 and SLOWER not in text and BUCKETS_NOTE.strip() in text
    code, _, err = run_cli([*CASE, "--network", "dgx-h100", "--format", "csv"], capsys)
    assert code == 0 and SLOWER not in err
