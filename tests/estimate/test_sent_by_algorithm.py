"""`sent` counts the bytes of the algorithms comm was priced with, so it moves with the network."""

from __future__ import annotations

import math

from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.config import resolve
from lionsim.estimate.probe import probe
from lionsim.network.cost import price
from lionsim.steptime.overlap import Buckets
from lionsim.steptime.timeline import bucket_spec
from lionsim.transports.base import plan_on

WORKERS = 64


def closed_form(algorithm: str, n: float, p: int) -> float:
    """Bytes the busiest rank sends in an all-reduce of n bytes among p ranks, p a power of two
    (Thakur, Rabenseifner & Gropp 2005; the pipelined double binary tree 2n)."""
    return {"ring": 2 * (p - 1) / p * n, "rabenseifner": 2 * (p - 1) / p * n,
            "recursive_doubling": math.log2(p) * n, "tree": 2 * n}[algorithm]


def test_powersgd_sends_what_its_calls_algorithms_send_on_each_network():
    """powersgd on llama-7b sends 87 MB a step on 1gbe and 253 MB on ib-ndr: ib-ndr's latency makes
    recursive doubling (log2 64 = 6 n) the cheapest for more of its bucket calls, where 1gbe's
    bandwidth makes Rabenseifner (2 (63/64) n) the cheapest for most. Each call's bytes by its algorithm's closed form, summed over the
    buckets, are the row's wire_bytes."""
    sent, chosen = {}, {}
    for name in ("1gbe", "ib-ndr"):
        cfg = EstimateConfig(model="llama-7b", workers=WORKERS, network=name, strategies=["powersgd"])
        r = resolve(cfg)
        run = r.runs[0]
        p = probe(run, params=r.params, tensors=r.tensors, workers=WORKERS, tie=r.tie, shapes=r.shapes,
                  options=r.options)
        buckets = Buckets.of(p.spec.numel, r.overlap.bucket_params)
        total, names = 0, set()
        for size, count in ((buckets.first, 1), (buckets.size, buckets.count)):
            if not size or not count:
                continue
            for call in plan_on(p.transport, bucket_spec(p.spec, size), WORKERS, 1):
                algorithm = price(call, WORKERS, r.network).algorithm
                names.add(algorithm)
                total += count * math.ceil(closed_form(algorithm, call.nbytes, WORKERS) - 1e-9)
        row = estimate(cfg).iloc[0]
        assert row["wire_bytes"] == total, name
        sent[name], chosen[name] = total, names
    assert "recursive_doubling" in chosen["ib-ndr"]
    assert sent["ib-ndr"] > 2.5 * sent["1gbe"]


def test_the_caption_says_sent_moves_with_the_algorithm():
    from lionsim.cli.estimate_view import breakdown_table

    cfg = EstimateConfig(model="gpt2-124m", workers=8, network="10gbe", strategies=["adamw"])
    caption = " ".join(str(breakdown_table(estimate(cfg)).caption).split())
    assert "sent: bytes per worker per step, as the priced algorithms move them (estimate.csv: algorithm)" in caption
