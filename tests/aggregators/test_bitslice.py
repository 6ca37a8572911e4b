"""Bit-sliced vote counting on packed words against the plain unpack -> sum reference."""

import pytest
import torch

from lionsim.aggregators.bitslice import count_set, vote_sum_packed
from lionsim.packing import pack_bools, pack_signs, unpack_bools, unpack_signs


def votes(workers: int, numel: int, seed: int, abstain: bool) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    low = -1 if abstain else 0
    v = torch.randint(low, 2, (workers, numel), generator=g).float()
    return v if abstain else v * 2 - 1  # strictly +/-1 without abstentions


SIZES = [(1, 1003), (2, 1003), (3, 77), (127, 1001), (128, 999), (1000, 61)]


METHODS = ["bitslice", "plain", "auto"]


@pytest.mark.parametrize("workers,numel", SIZES)
@pytest.mark.parametrize("abstain", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_vote_sum_equals_unpack_sum(workers, numel, abstain, method):
    v = votes(workers, numel, seed=workers * 7 + numel, abstain=abstain)
    signs, voted = pack_signs(v), pack_bools(v != 0)
    plain = unpack_signs(signs, numel, torch.int8)
    if abstain:
        cast = unpack_bools(voted, numel)
        s, voted_any = vote_sum_packed(signs, numel, voted=voted, method=method)
        assert torch.equal(s, (plain * cast).sum(0, dtype=torch.int32))
        assert torch.equal(voted_any, cast.any(0))
    else:
        s, voted_any = vote_sum_packed(signs, numel, method=method)
        assert torch.equal(s, plain.sum(0, dtype=torch.int32))
        assert voted_any is None
    assert torch.equal(torch.sign(s), torch.sign(v.sum(0)).int())  # ties (S = 0) stay 0


def test_ties_at_even_workers_give_zero():
    v = torch.tensor([[1.0, 1, -1, 0, 1], [-1.0, 1, -1, 0, 0]])
    s, voted_any = vote_sum_packed(pack_signs(v), 5, voted=pack_bools(v != 0))
    assert s.tolist() == [0, 2, -2, 0, 1]
    assert voted_any.tolist() == [True, True, True, False, True]


@pytest.mark.parametrize("workers", [1, 3, 128])
@pytest.mark.parametrize("method", METHODS)
def test_count_set_over_leading_dims_and_strided_views(workers, method):
    numel = 203
    g = torch.Generator().manual_seed(workers)
    bits = torch.rand(4, workers, numel, generator=g) > 0.5
    packed = pack_bools(bits)
    assert torch.equal(count_set(packed, numel, method=method), bits.sum(1, dtype=torch.int32))
    shared = packed[0].unsqueeze(0).expand(3, *packed[0].shape)  # the simulator's all-gather view
    assert torch.equal(count_set(shared, numel, method=method), bits[0].sum(0, dtype=torch.int32).expand(3, -1))
    half = packed[..., : packed.shape[-1] // 2]  # a byte slice, as a transport cuts its planes
    n_half = half.shape[-1] * 8 - 3
    assert torch.equal(count_set(half, n_half, method=method), bits[..., :n_half].sum(1, dtype=torch.int32))


def test_auto_picks_the_plain_count_in_cache_and_the_adders_beyond(monkeypatch):
    import lionsim.aggregators.bitslice as bs

    calls = []
    monkeypatch.setattr(bs, "count_set_plain", lambda *a: calls.append("plain") or bs.count_set(*a, method="bitslice"))
    small = pack_bools(torch.rand(8, 1000) > 0.5)
    big = pack_bools(torch.rand(64, bs.PLAIN_MAX_BITS // 64 + 8) > 0.5)
    bs.count_set(small, 1000)
    assert calls == ["plain"]
    bs.count_set(big, big.shape[-1] * 8)
    assert calls == ["plain"]  # the adders ran
    from lionsim.packing import reference_paths

    with reference_paths():  # a device's kernels are counted on the plain path
        bs.count_set(big, big.shape[-1] * 8)
    assert calls == ["plain", "plain"]


def test_count_set_refuses_bad_input():
    with pytest.raises(TypeError):
        count_set(torch.zeros(2, 3, dtype=torch.int64), 8)
    with pytest.raises(ValueError):
        count_set(torch.zeros(2, 3, dtype=torch.uint8), 25)
    with pytest.raises(ValueError):
        count_set(torch.zeros(3, dtype=torch.uint8), 8)


@pytest.mark.parametrize("abstain", [False, True])
def test_allgather_1bit_in_the_simulator_never_unpacks_w_by_w(abstain):
    """N = 1000, n = 8001 once asked for a [W, W, n] tensor (8 GB as int8): now the shared
    all-gather view is counted once, on the packed words."""
    from lionsim.aggregators import MajorityVote
    from lionsim.backends import SimComm
    from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

    workers, numel = 1000, 8001
    v = votes(workers, numel, seed=3, abstain=abstain)
    spec = PayloadSpec(kind="votes", numel=numel, rule=MajorityVote())
    out = TRANSPORTS.get("allgather-1bit")().aggregate(Payload(spec, v), SimComm(workers))
    assert out.shape == (workers, numel)
    assert torch.equal(out[0], torch.sign(v.sum(0))) and torch.equal(out[-1], out[0])
