"""The footnote naming a flat compressing transport's hierarchical form on multi-GPU nodes, priced,
and `across` of flat fp8-allreduce on such nodes by its calls' closed forms."""

from __future__ import annotations

import math

from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.config import resolve
from lionsim.estimate.probe import probe
from lionsim.numbers import ms_text, speedup_text
from lionsim.steptime.overlap import Buckets
from lionsim.steptime.timeline import bucket_spec
from lionsim.transports.base import plan_on

NODES = dict(model="gpt2-124m", workers=64, network="h100x8-100gbe")


def caption_notes(cfg: EstimateConfig) -> str:
    return " ".join(estimate(cfg).attrs.get("caption_notes", []))


def test_a_flat_fp8_allreduce_on_nodes_of_8_names_its_hierarchical_form_priced():
    flat = EstimateConfig(**NODES, strategies=["adamw", "adamw@fp8-allreduce"])
    both = estimate(EstimateConfig(**NODES, strategies=["adamw", "adamw@hier:fp8-allreduce"]))
    hier = both.iloc[1]
    assert hier["step_s"] < estimate(flat).iloc[1]["step_s"]
    said = caption_notes(flat)
    assert (f"adamw@hier:fp8-allreduce {ms_text(hier['step_s'] * 1e3)} ms" in said
            and speedup_text(hier["speedup"]) in said), said


def test_the_note_counts_workers_where_a_worker_is_several_devices():
    """With --replica-gpus 8 the 64 workers are 512 GPUs: the note said "all 64 GPUs"."""
    plain = caption_notes(EstimateConfig(**NODES, strategies=["adamw", "adamw@fp8-allreduce"]))
    replicas = caption_notes(EstimateConfig(**NODES, replica_gpus=8, strategies=["adamw", "adamw@fp8-allreduce"]))
    assert "Flat transports run over all 64 GPUs" in plain
    assert "Flat transports run over all 64 workers" in replicas and "64 GPUs" not in replicas


def test_no_note_on_one_gpu_a_node_nor_where_the_form_is_priced_already_nor_for_a_float_allreduce():
    assert "hier:" not in caption_notes(EstimateConfig(model="gpt2-124m", workers=64, network="10gbe",
                                                       strategies=["adamw", "adamw@fp8-allreduce"]))
    assert "hier:" not in caption_notes(EstimateConfig(**NODES, strategies=["adamw@fp8-allreduce",
                                                                           "adamw@hier:fp8-allreduce"]))
    assert "hier:" not in caption_notes(EstimateConfig(**NODES, strategies=["adamw", "adamw@bf16-allreduce"]))


def test_flat_fp8_across_nodes_is_its_all_to_all_uncombined_plus_a_rings_hop():
    """On M = 8 nodes of g = 8 GPUs flat fp8-allreduce's all-to-all reduce-scatter of n fp8 bytes runs in
    two levels, each of a node's g GPUs sending (M-1)/M n across: g (M-1)/M n a node, nothing combined
    first; its all-gather's ring carries (N-1)/N n through the node's one hop out. About 7 n + n, 8.1 bytes
    a parameter against fp32's ring 2 (N-1)/N 4 = 7.9: so llama-7b's across (54.7 GB) exceeds fp32's
    (53.1 GB). Each call's bytes round up, as the wire does."""
    g, m = 8, 8
    n_workers = g * m
    cfg = EstimateConfig(model="llama-7b", workers=n_workers, network="h100x8-100gbe",
                         strategies=["adamw@fp32-allreduce", "adamw@fp8-allreduce"])
    r = resolve(cfg)
    p = probe(r.runs[1], params=r.params, tensors=r.tensors, workers=n_workers, tie=r.tie, shapes=r.shapes,
              options=r.options)
    buckets = Buckets.of(p.spec.numel, r.overlap.bucket_params)
    across = 0
    for size, count in ((buckets.first, 1), (buckets.size, buckets.count)):
        a2a, gather = plan_on(p.transport, bucket_spec(p.spec, size), n_workers, g)
        assert (a2a.op, gather.op) == ("all_to_all", "all_gather")
        across += count * (math.ceil(g * (m - 1) / m * a2a.nbytes - 1e-9)
                           + math.ceil((n_workers - 1) / n_workers * gather.nbytes - 1e-9))
    rows = estimate(cfg)
    assert rows.iloc[1]["inter_bytes"] == across
    assert rows.iloc[1]["inter_bytes"] > rows.iloc[0]["inter_bytes"]


def test_a_baseline_named_among_the_runs_still_prices_the_note_and_its_speedup_is_against_that_baseline():
    """--baseline named a run of the table, and the note priced each hier: form alone with it: "unknown
    baseline 'dlion-mavo@a2a-1bit'; choose from: dlion-mavo@hier:a2a-1bit", so no estimate with --baseline
    on such nodes ran. The note's speedup is the table's baseline's step over the form's, as the table
    with the form among its runs gives it."""
    runs = ["adamw", "dlion-mavo@a2a-1bit"]
    said = caption_notes(EstimateConfig(**NODES, strategies=runs, baseline="dlion-mavo@a2a-1bit"))
    both = estimate(EstimateConfig(**NODES, strategies=[*runs, "dlion-mavo@hier:a2a-1bit"],
                                   baseline="dlion-mavo@a2a-1bit"))
    hier = both.iloc[2]
    assert f"dlion-mavo@hier:a2a-1bit {ms_text(hier['step_s'] * 1e3)} ms" in said
    assert speedup_text(hier["speedup"]) in said, said
