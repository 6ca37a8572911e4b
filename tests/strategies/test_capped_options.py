"""An option above what a chunk or matrix holds is capped with a note naming the cap
(lionsim.strategies.core.capped): estimate's row at the value is the row at the cap, and the cap
is what the model's chunks and matrices hold, counted here from the preset's shapes."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.compute import MODELS
from lionsim.estimate import EstimateConfig, estimate

COLUMNS = ["wire_bytes", "bits_per_param_up", "step_s"]


def priced(strategy: str, **options):
    frame = estimate(EstimateConfig(model="gpt2-124m", strategies=[strategy], options=options))
    return frame[COLUMNS].iloc[0].tolist(), frame.attrs["built_notes"]


def largest_min_side() -> int:
    """max over gpt2-124m's tensors, viewed as [shape[0], rest], of min(n, m), by a plain loop."""
    best = 1
    for shape in MODELS.get("gpt2-124m").tensor_shapes:
        if len(shape) > 1:
            best = max(best, min(shape[0], math.prod(shape) // shape[0]))
    return best


@pytest.mark.parametrize("strategy, key, cap", [("demo", "demo_topk", 64 * 64), ("sparseloco", "sparseloco_topk", 64 * 64)])
def test_a_topk_above_a_chunk_sends_what_the_chunk_holds_and_says_so(strategy, key, cap):
    at_cap, quiet = priced(strategy, **{key: cap})
    above, notes = priced(strategy, **{key: 100_000})
    assert above == at_cap and quiet == []
    flag = "--" + key.replace("_", "-")
    assert [n for n in notes if n.startswith(f"{strategy}: {flag} 100000 is capped at 4,096, what a chunk holds")]


def test_a_powersgd_rank_above_every_matrix_is_capped_at_the_largest_min_side():
    cap = largest_min_side()
    at_cap, quiet = priced("powersgd", powersgd_rank=cap)
    above, notes = priced("powersgd", powersgd_rank=100_000)
    assert above == at_cap and quiet == []
    assert any(n.startswith(f"powersgd: --powersgd-rank 100000 is capped at {cap:,},") for n in notes)


def bench(tmp_path, topk: str) -> tuple[list[float], list[str]]:
    out = tmp_path / topk
    with pytest.raises(SystemExit) as done:
        main(["bench", "-n", "2", "--steps", "2", "--model-size", "tiny", "-b", "4", "-s", "demo", "--demo-topk", topk,
              "-o", str(out)])
    assert done.value.code == 0
    summary = pd.read_csv(out / "summary.csv")
    return summary[["bits_per_param_up", "wire_bytes"]].iloc[0].tolist(), json.loads((out / "run.json").read_text()).get("notes", [])


def test_bench_notes_a_topk_past_any_chunk_under_its_table_and_in_run_json(tmp_path, capsys):
    huge = "99999999999999999999999"
    at_cap, quiet = bench(tmp_path, "4096")
    above, notes = bench(tmp_path, huge)
    assert above == at_cap and not [n for n in quiet if "capped" in n]
    line = f"demo: --demo-topk {huge} is capped at 4,096, what a chunk holds (64^2 at --demo-chunk 64)"
    assert [n for n in notes if n.startswith(line)]
    assert "is capped at 4,096" in " ".join(capsys.readouterr().out.split())
