"""grace-allgather: sparse-allgather's exchange, decompressed as GRACE's TensorFlow
allgather communicator does it. References: sparse-allgather's aggregate (the same value, a
different order of additions), and a hand count of GRACE's decompression written here from its
code (grace_dl/tensorflow/communicator/allgather.py at 106e3de and TensorFlow's AddN)."""

from __future__ import annotations

from collections import defaultdict

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.plugins import check_transport
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

NAME = "grace-allgather"


def _payload(workers: int, numel: int, k: int, seed: int) -> Payload:
    gen = torch.Generator().manual_seed(seed)
    indices = torch.stack([torch.randperm(numel, generator=gen)[:k] for _ in range(workers)])  # each worker's own k
    values = torch.randn(workers, k, generator=gen)
    return Payload(PayloadSpec(kind="sparse", numel=numel, k=k), values, indices=indices)


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 5])
def test_its_aggregate_is_sparse_allgathers(workers):
    for seed in range(3):
        payload = _payload(workers, numel=40, k=7, seed=seed)
        ours = TRANSPORTS.get(NAME)().aggregate(payload, SimComm(workers))
        theirs = TRANSPORTS.get("sparse-allgather")().aggregate(payload, SimComm(workers))
        assert ours.shape == (workers, 40)
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-7)


def _add_n_launches(n: int) -> int:
    """TensorFlow's AddNOp, step by step: a first functor over n % 8 inputs (8 for 0, 9 for 1),
    then one Add8p per further 8 inputs."""
    r = {0: 8, 1: 9}.get(n % 8, n % 8)
    launches = 1
    while r < n:
        r, launches = r + 8, launches + 1
    return launches


def _grace_count(n: int) -> tuple[dict[str, int], float, float]:
    """(launches by kernel row, bytes per parameter, bytes per sent pair) of one tensor's decompression
    on n workers: per rank a slice and a split of its 2k int32 (read 8, write 8 a pair each), a
    dense zero float32 tensor (write 4) and a scatter of its k pairs (int32 index 4, value 4, the
    target's 32-byte sector read and written); one add_n of the n (read 4n, write 4, each further
    launch reading and writing its output); lionsim's / n (read 4, write 4)."""
    adds = _add_n_launches(n)
    launches = {"float-pass": n + n + n + adds + 1, "scatter-add": n}
    per_param = 4 * n + (4 * n + 4 + 8 * (adds - 1)) + 8
    per_pair = 16 * n + 16 * n + (4 + 4 + 32 + 32) * n
    return launches, per_param, per_pair


@pytest.mark.parametrize("workers", [2, 3, 8, 9, 10, 17, 64])
def test_its_unpack_ops_are_graces_decompression_counted_by_hand(workers):
    spec = PayloadSpec(kind="sparse", numel=10**6, k=10**4)
    t = TRANSPORTS.get(NAME)().wire_bytes(spec, workers)
    launches: dict[str, int] = defaultdict(int)
    for op in t.unpack_ops:
        launches[op.kernel] += op.kernels(tensors=1)
    expected, per_param, per_pair = _grace_count(workers)
    assert dict(launches) == expected
    assert sum(op.nbytes for op in t.unpack_ops if op.per == "param") == pytest.approx(per_param)
    assert sum(op.nbytes for op in t.unpack_ops if op.per == "pair") == pytest.approx(per_pair)
    if workers <= 9:  # GRACE's 4N + 1 kernels a tensor, and lionsim's mean
        assert sum(launches.values()) == 4 * workers + 2


@pytest.mark.parametrize("workers", [2, 8])
def test_its_wire_is_sparse_allgathers(workers):
    spec = PayloadSpec(kind="sparse", numel=10**6, k=10**4)
    ours, theirs = TRANSPORTS.get(NAME)(), TRANSPORTS.get("sparse-allgather")()
    assert ours.plan(spec, workers) == theirs.plan(spec, workers)
    assert ours.bits_per_param(spec, workers) == theirs.bits_per_param(spec, workers)
    mine, base = ours.wire_bytes(spec, workers), theirs.wire_bytes(spec, workers)
    assert (mine.pack, mine.unpack, mine.aggregate, mine.pack_ops) == (base.pack, base.unpack, base.aggregate,
                                                                        base.pack_ops)
    assert ours.overlap == theirs.overlap and ours.carries == theirs.carries


def test_it_passes_the_plugin_checks_and_takes_a_mean_over_senders_as_sparse_allgather():
    check_transport(NAME, TRANSPORTS.get(NAME))
    payload = _payload(3, numel=40, k=7, seed=5)
    spec = PayloadSpec(kind="sparse", numel=40, k=7, over_senders=True)
    payload = Payload(spec, payload.values, indices=payload.indices)
    ours, theirs = TRANSPORTS.get(NAME)(), TRANSPORTS.get("sparse-allgather")()
    assert torch.equal(ours.aggregate(payload, SimComm(3)), theirs.aggregate(payload, SimComm(3)))
    assert ours.wire_bytes(spec, 3) == theirs.wire_bytes(spec, 3)
