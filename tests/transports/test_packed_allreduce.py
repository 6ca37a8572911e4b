"""packed-allreduce: levels summed exactly in fields that widen with N."""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.packed_allreduce import field_bits


@pytest.mark.parametrize("workers", [1, 2, 5, 7, 8, 15, 16, 40])
@pytest.mark.parametrize("numel", [1, 13, 29])
def test_packed_allreduce_sums_ternary_levels_exactly(workers, numel):
    gen = torch.Generator().manual_seed(workers * 100 + numel)
    levels = torch.randint(-1, 2, (workers, numel), generator=gen).to(torch.int8)
    levels[:, 0] = 1  # the extreme sums: all +1 ...
    if numel > 1:
        levels[:, -1] = -1  # ... and all -1
    spec = PayloadSpec(kind="levels", numel=numel, max_level=1)
    out = TRANSPORTS.get("packed-allreduce")().aggregate(Payload(spec, levels), SimComm(workers))
    expected = [sum(int(levels[w, j]) for w in range(workers)) for j in range(numel)]
    assert out[0].tolist() == expected and all(row == expected for row in out.tolist())


def test_packed_allreduce_field_is_4_bits_to_n_7_then_widens():
    assert [field_bits(1, n) for n in (1, 2, 7, 8, 15, 16, 31, 32)] == [4, 4, 4, 5, 5, 6, 6, 7]
    bits = TRANSPORTS.get("packed-allreduce")().bits_per_param
    assert bits(PayloadSpec(kind="levels", numel=70, max_level=1), 7) == (32 / 7, 32 / 7)  # 7 fields a word
    with pytest.raises(LionsimError, match="cannot hold"):
        TRANSPORTS.get("packed-allreduce")().check(PayloadSpec(kind="levels", numel=70, max_level=2**20), 2**11)
