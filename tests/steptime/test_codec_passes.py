"""The kernels each codec declares it runs (Transport.wire_bytes' pack_ops and unpack_ops).

References: a hand count per codec written here, term by term; and, for the codecs whose
implementation is lionsim's own GPU path, the brute-force count of that path's ops on one
worker of N (lionsim.perf.bytecount.count_step, under lionsim.packing.reference_paths)."""

from __future__ import annotations

import math

import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote
from lionsim.packing import (pack_codes, pack_codes_passes, pack_signs, pack_signs_passes, reference_paths,
                             unpack_codes, unpack_codes_passes, unpack_signs, unpack_signs_passes)
from lionsim.perf.bytecount import count, count_step
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.transports import TRANSPORTS, PayloadSpec

N = 1 << 16


def _sums(transport: str, spec: PayloadSpec, workers: int, share: float = 0.0) -> tuple[float, float]:
    t = transport_bytes(transport, spec, workers)
    return (sum(op.per_param(share) for op in t.pack_ops), sum(op.per_param(share) for op in t.unpack_ops))


def test_every_transport_declares_its_kernels():
    spec = {"votes": PayloadSpec(kind="votes", numel=10**6, rule=MajorityVote()),
            "dense": PayloadSpec(kind="dense", numel=10**6)}
    for name, cls in TRANSPORTS.items():
        kind = cls.carries[0]
        if kind not in spec:
            continue
        t = transport_bytes(name, spec[kind], 8, 4)
        assert all(op.what and op.nbytes >= 0 for op in t.pack_ops + t.unpack_ops), name
        assert t.pack_ops or t.unpack_ops, name


@pytest.mark.parametrize(("bits",), [(1,), (2,), (3,), (5,)])
def test_the_packing_closed_forms_are_the_ops_counted(bits):
    votes = torch.randint(-1, 2, (N,), dtype=torch.int8)
    floats = torch.randn(N)
    codes = torch.randint(0, 2**bits, (N,), dtype=torch.int8)
    wide = codes.to(torch.int64)
    with reference_paths():
        packed, fields = pack_signs(votes), pack_codes(codes, bits)
        for fn, (nbytes, ops) in [(lambda: pack_signs(votes), pack_signs_passes(1)),
                                  (lambda: pack_signs(floats), pack_signs_passes(4)),
                                  (lambda: unpack_signs(packed, N, torch.int8), unpack_signs_passes(1)),
                                  (lambda: unpack_signs(packed, N), unpack_signs_passes(4)),
                                  (lambda: pack_codes(codes, bits), pack_codes_passes(bits)),
                                  (lambda: pack_codes(wide, bits), pack_codes_passes(bits, in_bytes=8)),
                                  (lambda: unpack_codes(fields, N, bits), unpack_codes_passes(bits))]:
            counted = count(fn)
            assert (counted.nbytes / N, counted.ops) == (pytest.approx(nbytes, abs=0.01), ops)


def test_hand_counts():
    """Per parameter, N = 8 workers, n a multiple of 8N."""
    n, w = 8 * 8 * 1000, 8
    votes = PayloadSpec(kind="votes", numel=n, rule=MajorityVote())
    # fp32: nothing packed; the sum / N reads and writes float32
    assert _sums("fp32-allreduce", PayloadSpec(kind="dense", numel=n), w) == (0, 8)
    # bf16: the cast (4 + 2); the bf16 sum back to float32 (2 + 4), / N (4 + 4)
    assert _sums("bf16-allreduce", PayloadSpec(kind="dense", numel=n), w) == (6, 14)
    # int8 container: nothing to cast; sign(S) (1 + 1) and to float32 (1 + 4); past 127 workers an int32 cast
    assert _sums("int8-allreduce", votes, w) == (0, 7)
    assert _sums("int8-allreduce", votes, 200) == (5, 4 + 4 + 4 + 4)
    # allgather-1bit: > 0 (1 + 1), the int64 gather, >> 56 (1 + 1 each), to uint8 (1 + 1/8); N rows unpacked
    # (1/8 + 1, 1 + 1, 1 + 1 each), summed to int32 (N + 4), x 2 - N (8 + 8), sign and to float32 (8 + 8)
    assert _sums("allgather-1bit", votes, w) == (7.125, w * 5.125 + w + 4 + 16 + 16)
    # a2a-1bit, MaVo at even N (3 levels, 2-bit codes): the votes packed (7.125); on my n/N chunk the
    # rule's codes (sign 8, to float32 8, to int64 12, + 1 16) packed from int64 (8 + 33 x 2 + 7.125 x 2);
    # back: N chunk bits -> bools -> int32 sums (5.125 + 1 + 20/N), the chunk's coordinates (24/N), every
    # chunk's 2-bit fields (5.125 x 2 + 9 x 2 + 16 x 2 + 8 x 2 + 8) and the rule's decode (16 + 12)
    assert _sums("a2a-1bit", votes, w) == pytest.approx(
        (7.125 + (44 + 8 + 33 * 2 + 7.125 * 2) / w, 5.125 + 1 + 20 / w + 24 / w + 5.125 * 2 + 33 * 2 + 8 + 28))
    # the mean: N + 1 levels, 4 bits at N = 8; encode to int64, + N, // 2 (12 + 16 + 16); decode 2c, - N,
    # to float32, / N (16 + 16 + 12 + 8)
    mean = PayloadSpec(kind="votes", numel=n, rule=MeanVote())
    assert _sums("a2a-1bit", mean, w) == pytest.approx(
        (7.125 + (44 + 8 + 33 * 4 + 7.125 * 4) / w, 5.125 + 1 + 44 / w + 5.125 * 4 + 33 * 4 + 8 + 52))
    # sparse-allgather, k = n / 100: int64 -> int32 indices (12 a pair); back: zeros (4), N k indices to
    # int64 (12 each), scattered (index 8, value 4, a 32-byte sector read and written), / N (8)
    sparse = PayloadSpec(kind="sparse", numel=n, k=n // 100)
    assert _sums("sparse-allgather", sparse, w, share=0.01) == pytest.approx(
        (12 * 0.01, 4 + 0.01 * w * (12 + 8 + 4 + 64) + 8))


def test_deepspeeds_compressed_allreduce_hand_count():
    """DeepSpeed's compressed_allreduce (deepspeed/runtime/comm/nccl.py), op by op, N = 8, float32:
    worker: add_ error (12), norm (4), sign/add_/bool/float/add_/mul_ (8 8 5 5 8 8), x scale (8), the
    new error (12); signs: sign_/add_ (8 8), bool (5), to uint8 (2), packbits (1.125), stack (0.25);
    the server's chunk (/ N): sign_/add_/bool/uint8 (23), packbits (1.125).
    server: unpackbits of N chunks (1.125), float (5), add_/mul_/mul_ (24), sum (4 + 4/N); its error
    feedback on the chunk (/ N): add_ (12), norm (4), new error (62); phase 2: stack (0.25), unpackbits
    (1.125), float (5), add_/mul_/mul_ (24), copy_ into the momentum (8)."""
    w, n = 8, 8 * 8 * 1000
    worker = 12 + 4 + (8 + 8 + 5 + 5 + 8 + 8) + 8 + 12
    signs = 8 + 8 + 5 + 2 + 1.125 + 0.25
    server_pack = (23 + 1.125) / w
    server = 1.125 + 5 + 24 + 4 + 4 / w + (12 + 4 + 62) / w
    phase2 = 0.25 + 1.125 + 5 + 24 + 8
    assert _sums("compressed-allreduce", PayloadSpec(kind="onebit", numel=n), w) == pytest.approx(
        (worker + signs + server_pack, server + phase2))
    # a size that is no multiple of 8N pads the buffer first: zeros and a cat (read 4, write 4)
    padded = _sums("compressed-allreduce", PayloadSpec(kind="onebit", numel=n + 1), w)
    assert padded[0] == pytest.approx(worker + signs + server_pack + 8)


def test_powersgd_counts_the_matrices_and_the_qr_launches():
    """Two 512 x 256 matrices at rank 4 and 1024 values sent whole: P = M Q and Q = M^T P each read M
    (one product per matrix); P Q^T is written and copied; above rank 2 torch's hook orthogonalizes
    by a QR per matrix (two kernels at least: geqrf, orgqr), not column by column."""
    spec = PayloadSpec(kind="lowrank", numel=2 * 512 * 256 + 1024, uncompressed=1024,
                       factors=(2 * 512 * 4, 2 * 256 * 4), columns=8, matrices=2)
    t = transport_bytes("lowrank-allreduce", spec, 8)
    share = 2 * 512 * 256 / spec.numel
    assert t.pack_ops[0].nbytes == pytest.approx(4 * share + 4 * 2 * 512 * 4 / spec.numel)
    assert t.pack_ops[0].launches == 2 and t.unpack_ops[2].launches == 2 and t.unpack_ops[-1].launches == 4
    assert t.pack_ops[1].launches == 2 * 2 and t.unpack_ops[1].launches == 2 * 2
    assert t.unpack_ops[-1].nbytes == pytest.approx(12 * share)


def test_powersgd_at_rank_2_counts_the_gram_schmidt_launches():
    """At rank <= 2 torch's hook runs Gram-Schmidt: 3 kernels a column and 4 per later column."""
    spec = PayloadSpec(kind="lowrank", numel=2 * 512 * 256, uncompressed=0,
                       factors=(2 * 512 * 2, 2 * 256 * 2), columns=4, matrices=2)
    t = transport_bytes("lowrank-allreduce", spec, 8)
    assert t.pack_ops[1].launches == 2 * (7 * 2 - 4) == t.unpack_ops[1].launches


def test_orthogonalizing_a_7b_models_factors_costs_launches_per_matrix_not_per_column():
    """Dion at rank 512 on 224 matrices: a QR each (448 launches), not 7 r - 4 per matrix (802,816)."""
    from lionsim.transports.lowrank_allreduce import orthogonalize_ops

    spec = PayloadSpec(kind="lowrank", numel=224 * 4096 * 4096, uncompressed=0,
                       factors=(224 * 4096 * 512, 224 * 4096 * 512), columns=224 * 512, matrices=224)
    assert orthogonalize_ops(spec) == 2 * 224


SHAPES = [(256, 512), (1024,), (512, 256)]
PARAMS = sum(math.prod(s) for s in SHAPES)


@pytest.mark.parametrize(("strategy", "transport", "workers", "spec"), [
    ("signsgd", "a2a-1bit", 8, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("signsgd", "a2a-1bit", 7, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("dlion-avg", "a2a-1bit", 8, PayloadSpec(kind="votes", numel=PARAMS, rule=MeanVote())),
    ("signsgd", "allgather-1bit", 8, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("ef-signsgd", "allgather-1bit", 8, PayloadSpec(kind="scaled-signs", numel=PARAMS, segments=3)),
    ("signsgd", "int8-allreduce", 8, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("dlion-avg", "int8-allreduce", 200, PayloadSpec(kind="votes", numel=PARAMS, rule=MeanVote())),
    ("signsgd", "pbit-allreduce", 8, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("signsgd", "param-server", 7, PayloadSpec(kind="votes", numel=PARAMS, rule=MajorityVote())),
    ("lioncub-l1", "packed-allreduce", 8, PayloadSpec(kind="levels", numel=PARAMS, max_level=127 // 8)),
    ("qsgd", "allgather-levels", 8, PayloadSpec(kind="scaled-levels", numel=PARAMS, max_level=7, segments=3)),
    ("adamw", "fp8-allreduce", 8, PayloadSpec(kind="dense", numel=PARAMS)),
])
def test_lionsims_own_codecs_declare_what_their_gpu_path_runs(strategy, transport, workers, spec):
    counted = count_step(strategy, transport, workers, SHAPES, steps=2)
    t = transport_bytes(transport, spec, workers)
    for part, ops in (("pack", t.pack_ops), ("unpack", t.unpack_ops)):
        got = counted.get(part)
        assert (got.nbytes / PARAMS if got else 0.0) == pytest.approx(sum(op.nbytes for op in ops), rel=0.01), part
        assert (got.ops if got else 0) == sum(op.launches for op in ops), part
