"""A strategy that takes local steps books its inner optimizer's step as the update on every step,
a sync's too, as training does (LocalSteps.inner_step books it under "update"): the estimate's
encode of a sync step is the outer delta and the payload alone. References: the local step's own
kernels (the inner step), found again in the sync step's update and nowhere in its encode; and the
bytes conserved (moving the inner step loses or adds none)."""

from __future__ import annotations

import pytest

from lionsim.steptime.kernel_passes import part_ops
from lionsim.steptime.passes import pass_bytes, payload_bytes
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.strategies import STRATEGIES
from lionsim.transports import PayloadSpec

P = 10**6
LOCAL = [name for name, cls in STRATEGIES.items() if cls.local_step_bytes is not None]


def test_the_local_step_strategies_are_the_expected_ones():
    assert {"diloco", "localsgd", "muloco", "sparseloco", "streaming-diloco"} <= set(LOCAL)


@pytest.mark.parametrize("name", LOCAL)
def test_a_sync_steps_inner_step_is_its_update_not_its_encode(name):
    cls = STRATEGIES.get(name)
    own, spec = cls.bytes, PayloadSpec(kind="dense", numel=P)
    kwargs = dict(optimizer="fused", tensors=10, params=P, local_step_bytes=cls.local_step_bytes)
    _, _, inner = part_ops(own, "fp32-allreduce", spec, 4, local=True, **kwargs)
    encode, _, update = part_ops(own, "fp32-allreduce", spec, 4, **kwargs)
    assert inner and update[:len(inner)] == inner, name  # the inner step, first in the update
    assert not set(inner) & set(encode), name


@pytest.mark.parametrize("name", LOCAL)
def test_the_ideal_passes_move_the_inner_step_and_conserve_the_bytes(name):
    cls = STRATEGIES.get(name)
    spec = PayloadSpec(kind="dense", numel=P)
    sync, local = pass_bytes(cls, "fp32-allreduce", spec, 4), pass_bytes(cls, "fp32-allreduce", spec, 4, local=True)
    t = transport_bytes("fp32-allreduce", spec, 4)
    whole = cls.bytes.rule + cls.bytes.update + payload_bytes(spec) + t.pack + t.unpack + t.aggregate
    assert sync.encode + sync.decode + sync.update == pytest.approx(whole)
    assert sync.update == pytest.approx(local.update + cls.bytes.update + t.aggregate)  # inner + the outer step
    assert sync.encode == pytest.approx(cls.bytes.rule - local.update + payload_bytes(spec) + t.pack)
