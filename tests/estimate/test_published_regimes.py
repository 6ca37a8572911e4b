"""The two published regimes `lionsim estimate` must reproduce (docs/time-model.md, "Projection without training").

1. Distributed Lion's wall-clock table (REFERENCE.md 2): a 3B transformer, 1K tokens per
   worker, 64 A100 40GB. AdamW with a bf16 all-reduce: 18 / 141 / 132 ms fwd / bwd / comm,
   291 total; D-Lion MaVo with the int8 container: 18 / 128 / 61, 207 total. Its rows add
   up (fwd + bwd + comm = total), so nothing overlapped: `--overlap none`.

   Network assumption (the paper gives none): 8 nodes x 8 A100 on NVLink3 (250 GB/s
   achieved per GPU), 4 HDR-200 NICs per node (one per two GPUs, 4 x 24 GB/s achieved):
   preset `a100x8-4hdr`. The bf16 all-reduce of 3e9 parameters then takes 124 ms against
   the paper's 132 (-6%). A full DGX A100 (8 NICs, `dgx-a100`) would take 62 ms and put
   the step ratio at 0.81: the paper's network was about half a DGX's.

   Gaps the model cannot close: the paper's comm ratio 61/132 = 0.46 is below the byte
   ratio 0.5, which an alpha-beta model (same latency terms, half the bytes) cannot go
   under; its 18 ms forward exceeds the A100's peak FLOP/s, so only the ratios compare.

2. Lion Cub's regime (REFERENCE.md 3, "up to 5x over Lion on slow Ethernet"): GPT-2 345M,
   8-16 GPUs on 10 GbE, the two-phase 1-bit transport against global Lion. Asserted here:
   only internal consistency; the predicted speedups are reported, not tuned.
"""

from __future__ import annotations

import pytest

from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.probe import probe
from lionsim.network import load_network
from lionsim.runs import parse_runs
from lionsim.steptime.timeline import price_calls

PAPER_BF16_COMM_S = 0.132


def _dlion_table(overlap: str):
    cfg = EstimateConfig(params=3_000_000_000, tokens_per_worker=1024, workers=64, network="a100x8-4hdr",
                         device="a100", overlap=overlap, kernels="ideal",  # the paper's ratio: fused kernels
                         strategies=["adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"])
    return estimate(cfg).set_index("strategy")


def test_distributed_lion_wall_clock_ratios():
    t = _dlion_table("none")
    adamw, dlion = t.loc["adamw"], t.loc["dlion-mavo"]
    assert adamw["comm_s"] == pytest.approx(PAPER_BF16_COMM_S, rel=0.10)  # 124 ms vs 132
    comm_ratio = dlion["comm_s"] / adamw["comm_s"]
    step_ratio = dlion["step_s"] / adamw["step_s"]
    assert comm_ratio == pytest.approx(0.46, abs=0.05)  # 0.501: the byte ratio
    assert 0.71 <= step_ratio <= 0.76  # 0.754; the paper's 207/291 = 0.711, or 0.756 with equal backward
    assert dlion["speedup"] == pytest.approx(1 / step_ratio)


def test_distributed_lion_with_ddp_overlap_is_reported_consistently():
    auto = _dlion_table("auto")  # each as its reference code runs: DDP's buckets; D-Lion's votes in the optimizer step
    assert (auto.loc["adamw", "overlap"], auto.loc["dlion-mavo", "overlap"]) == ("buckets", "after")
    assert auto.loc["dlion-mavo", "comm_exposed_s"] == auto.loc["dlion-mavo", "comm_s"]
    t = _dlion_table("buckets")
    adamw, dlion = t.loc["adamw"], t.loc["dlion-mavo"]
    # both all-reduces run per 25 MB bucket during backward; the int8 votes, half the bytes, hide more
    # (480 calls across 8 nodes: each pays NCCL's latency on InfiniBand, lionsim.network.fabrics)
    assert adamw["overlap"] == dlion["overlap"] == "buckets"
    assert dlion["comm_exposed_s"] / dlion["comm_s"] < adamw["comm_exposed_s"] / adamw["comm_s"]
    assert 0 < adamw["comm_exposed_s"] < adamw["comm_s"]
    assert dlion["step_s"] / adamw["step_s"] < 0.76  # 0.656


@pytest.mark.parametrize(("network", "workers"), [("10gbe", 8), ("10gbe", 16), ("h100x8-10gbe", 16)])
def test_lion_cub_regime_is_internally_consistent(network, workers):
    cfg = EstimateConfig(model="gpt2-345m", tokens_per_worker=8192, workers=workers, network=network, device="h100",
                         strategies=["lion@fp32-allreduce", "dlion-mavo@a2a-1bit"])
    lion, cub = estimate(cfg).to_dict("records")
    assert cub["speedup"] == pytest.approx(lion["step_s"] / cub["step_s"])
    assert cub["speedup"] > 1  # 14.6x, 14.9x flat; 6.9x with 8 GPUs sharing each node's 10 GbE
    assert cub["overlap"] == "after" and cub["comm_exposed_s"] == cub["comm_s"]
    assert lion["overlap"] == "buckets" and lion["comm_exposed_s"] <= lion["comm_s"]
    # wire_bytes counts the priced algorithms (the column and comm_s describe the same one)
    net = load_network(network)
    whole_lion, whole_cub = (price_calls(_calls(name, lion["params"], workers), workers, net)
                             for name in ("lion@fp32-allreduce", "dlion-mavo@a2a-1bit"))
    assert cub["wire_bytes"] == whole_cub.sent_bytes and cub["comm_s"] == pytest.approx(whole_cub.time_s)
    if "x8" not in network:  # flat: even N, 1 bit up, 2-bit codes down (ties kept) against 32 bits each way
        assert cub["wire_bytes"] / lion["wire_bytes"] == pytest.approx(3 / 64, rel=1e-3)
        assert lion["wire_bytes"] == pytest.approx(whole_lion.sent_bytes, rel=1e-6)  # 25 MB buckets ~ one call
    else:  # two-level: the hierarchical all-to-all forwards votes across nodes again, more than 1 bit up
        assert cub["wire_bytes"] / lion["wire_bytes"] > 3 / 64
    for row in (lion, cub):
        parts = row["compute_s"] + row["encode_s"] + row["comm_exposed_s"] + row["decode_s"] + row["update_s"]
        assert row["step_s"] == pytest.approx(parts)


def _calls(label: str, params: int, workers: int) -> list:
    """Every collective of one unbucketed exchange of `label` for `params` parameters."""
    p = probe(parse_runs([label])[0], params=params, tensors=1, workers=workers)
    return p.transport.plan(p.spec, workers) + list(p.extra_calls)
