"""SparseLoCo against a plain reference of its authors' code (tests/reference/sparseloco.py: CCLoco's
chunks, per-chunk top-k, the statistical 2-bit quantizer with centroid tables, error feedback, the
mean over the workers that sent each position, outer SGD), its bytes per round against the closed
form, and its options' bad values."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.bench import BenchConfig, run_bench
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.transports import TRANSPORTS
from tests.helpers.steps import run_seeded
from tests.reference.sparseloco import chunk_k, chunk_view, ref_sparseloco

# a matrix of 8 x 8 tiles, a vector (one chunk of 12, k = round(12 * 4 / 64) = 1), a 3-d tensor
# viewed as (10, 6) (two tiles of 5 x 6), a prime-sided matrix (one tile of 7 x 5)
SHAPES = [(16, 24), (12,), (10, 3, 2), (7, 5)]
CHUNK, TOPK, H = 8, 4, 3


def _views(shapes):
    """The reference takes matrices and vectors: a tensor of more dimensions as (first, rest)."""
    return [s if len(s) <= 2 else (s[0], math.prod(s[1:])) for s in shapes]


def _run(workers, steps, transport="sparseloco-allgather", seed=0, **options):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(SHAPES)])
    given = {"sparseloco.chunk": CHUNK, "sparseloco.topk": TOPK, "sparseloco.local_steps": H, **options}
    cfg = StrategyConfig(lr=1e-2, weight_decay=0.1, betas=(0.9, 0.999), options=given)
    return layout, *run_seeded("sparseloco", transport, layout, cfg, workers, steps, seed)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_sparseloco_equals_the_authors_code_reference(workers):
    layout, grads, x0, x, _, _ = _run(workers, 2 * H, seed=workers)
    views = _views(SHAPES)
    params0 = [x0[s].reshape(v) for s, v in zip(layout.slices, views)]
    per_worker = [[[g[i][s].reshape(v) for s, v in zip(layout.slices, views)] for g in grads] for i in range(workers)]
    trajectory, _ = ref_sparseloco(per_worker, params0, 2 * H, H=H, outer_lr=1.0, error_decay=0.95, top_k=TOPK,
                                   chunk_size=CHUNK, use_quantization=True, quantization_bins=4, inner="adamw",
                                   inner_lr=1e-2, inner_wd=0.1, dtype=torch.float32)
    expected = torch.cat([p.reshape(-1) for p in trajectory[-1]])
    torch.testing.assert_close(x, expected, rtol=0, atol=1e-6)
    assert not torch.equal(x, x0)


def test_eight_bit_codes_and_decay_one_equal_the_reference_too():
    layout, grads, x0, x, _, _ = _run(2, 2 * H, sparseloco_bits=8, sparseloco_error_decay=1.0)
    views = _views(SHAPES)
    params0 = [x0[s].reshape(v) for s, v in zip(layout.slices, views)]
    per_worker = [[[g[i][s].reshape(v) for s, v in zip(layout.slices, views)] for g in grads] for i in range(2)]
    trajectory, _ = ref_sparseloco(per_worker, params0, 2 * H, H=H, error_decay=1.0, top_k=TOPK, chunk_size=CHUNK,
                                   quantization_bins=256, inner="adamw", inner_lr=1e-2, inner_wd=0.1,
                                   dtype=torch.float32)
    torch.testing.assert_close(x, torch.cat([p.reshape(-1) for p in trajectory[-1]]), rtol=0, atol=1e-6)


def test_packed_pairs_decode_to_what_plain_pairs_carry():
    """The packed offsets and codes give exactly the aggregate of the same pairs sent as int32 + float32."""
    *_, packed, _, _ = _run(3, H)
    *_, plain, _, _ = _run(3, H, transport="sparse-allgather")
    assert torch.equal(packed, plain)


def _pairs(shapes, chunk, topk):
    """Brute force: every chunk of every tensor as the reference cuts it, k pairs each."""
    total = 0
    for shape in _views(shapes):
        chunks, info = chunk_view(torch.zeros(shape), chunk, chunk * chunk)
        total += chunks.shape[0] * chunk_k(len(shape), chunks.shape[1], topk, chunk, "ccloco")
    return total


def test_bytes_per_round_are_the_closed_form(tmp_path):
    """Per sync each worker sends ceil(K (12 + 2) / 8) bytes of pairs (64-value chunks: 6-bit
    offsets here) and 4 T (4 + 1) bytes of tables, and an all-gather hands it to the N - 1 others;
    nothing between syncs."""
    layout, _, _, _, strategy, sent = _run(4, 2 * H)
    spec = strategy.payload_spec()
    pairs = _pairs(SHAPES, CHUNK, TOPK)
    assert spec.k == pairs == 6 * TOPK + 1 + 2 * TOPK + TOPK
    message = math.ceil(pairs * (6 + 2) / 8) + 4 * len(SHAPES) * 5
    calls = TRANSPORTS.get("sparseloco-allgather")().plan(spec, 4)
    assert sum(c.nbytes for c in calls) == 4 * message and [c.op for c in calls] == ["all_gather"] * 2
    assert [s.local for s in sent] == [True, True, False] * 2
    # at the authors' 64 x 64 tiles, top 32: 12-bit offsets, 0.109 bits per parameter of a big matrix
    default = STRATEGIES.get("sparseloco")(StrategyConfig(), layout, SimComm(8))
    big = default.spec_for([(4096, 4096)])
    assert (big.k, big.index_bits) == (4096 * 4096 // 4096 * 32, 12)
    bits = TRANSPORTS.get("sparseloco-allgather")().bits_per_param(big, 8)[0]
    assert bits == pytest.approx((math.ceil(big.k * 14 / 8) + 20) * 8 / 4096 ** 2)
    # a bench on a link without latency: a ring all-gather, each worker sends (N - 1) messages
    profile = tmp_path / "net.toml"
    profile.write_text('traits = "ideal"\n[inter]\nalpha_us = 0.0\nbandwidth_GBps = 1.0\n')
    cfg = BenchConfig(workload="mlp", workers=4, steps=4, strategies=["sparseloco"], options={"local_steps": 2},
                      batch_size=8, eval_every=100, network=str(profile))
    frame = run_bench(cfg).steps
    from lionsim.workloads import WorkloadConfig, build_workload

    model = build_workload(WorkloadConfig(name="mlp", workers=4, batch_size=8, seed=0)).model
    shapes = [tuple(p.shape) for p in model.parameters()]
    k, chunk = _pairs(shapes, 64, 32), max(chunks.shape[1] for chunks, _ in
                                           (chunk_view(torch.zeros(s), 64, 4096) for s in _views(shapes)))
    message = math.ceil(k * (math.ceil(math.log2(chunk)) + 2) / 8) + 4 * len(shapes) * 5
    assert frame["wire_bytes"].tolist() == [0, 3 * message, 0, 3 * message]


@pytest.mark.parametrize("flag,value,accepted", [
    ("--sparseloco-bits", "9", "a whole number from 1 to 8"),
    ("--sparseloco-topk", "0", "a whole number at least 1"),
    ("--sparseloco-chunk", "0", "a whole number at least 1"),
    ("--sparseloco-error-decay", "1.5", "a number from 0 to 1"),
])
def test_bad_options_are_refused_in_one_line(flag, value, accepted, tmp_path, monkeypatch, capsys):
    from lionsim.cli.app import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(["bench", "-w", "mlp", "-s", "sparseloco", "--steps", "1", flag, value])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: bad {flag}") or f"bad {flag}" in err, err
    import re

    assert re.search(f"accepted: {accepted}", err), err
    assert list(tmp_path.iterdir()) == []
