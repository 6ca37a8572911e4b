"""Memory-pass accounting and the no-training probe of what a strategy sends."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote
from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.estimate import probe
from lionsim.steptime import pass_bytes
from lionsim.runs import parse_runs
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig, valid_transports
from lionsim.transports import TRANSPORTS, PayloadSpec, Transport


def test_every_strategy_and_transport_is_accounted():
    assert [n for n, cls in STRATEGIES.items() if cls.bytes is None] == []  # each module declares its bytes
    assert [n for n, cls in TRANSPORTS.items() if cls.wire_bytes is Transport.wire_bytes] == []  # each declares its own


@pytest.mark.parametrize(
    ("strategy", "transport", "spec", "workers", "expected"),
    [
        # AdamW: cast fp32 -> bf16 (4 + 2); update reads p, m, v and the bf16 sum, writes p, m, v (24 + 2)
        ("adamw", "bf16-allreduce", PayloadSpec(kind="dense", numel=10), 8, (6, 0, 26)),
        # Lion over fp32: nothing to pack; update reads p, m and the fp32 sum, writes p, m (16 + 4)
        ("lion", "fp32-allreduce", PayloadSpec(kind="dense", numel=10), 8, (0, 0, 20)),
        # D-Lion over the int8 container: rule reads g, m, writes m and the int8 vote (12 + 1);
        # the int8 sum is read by the update (8 + 1)
        ("dlion-mavo", "int8-allreduce", PayloadSpec(kind="votes", numel=10, rule=MajorityVote()), 64, (13, 0, 9)),
        # past 127 workers the container is int32: a cast (read 1, write 4) and a 4-byte read
        ("dlion-mavo", "int8-allreduce", PayloadSpec(kind="votes", numel=10, rule=MajorityVote()), 200, (18, 0, 12)),
        # a2a, 16 workers, MaVo with even N: 2-bit codes. pack 1 + 1/8 + (1 + 2/8)/16;
        # unpack 1/8 + 1/16 + 2/8 + 1
        ("dlion-mavo", "a2a-1bit", PayloadSpec(kind="votes", numel=10, rule=MajorityVote()), 16,
         (13 + 1.125 + 1.25 / 16, 0.125 + 1 / 16 + 0.25 + 1, 9)),
        # p-bit, 7 workers: 3-bit fields, 10 per int32 word (0.4 bytes per parameter)
        ("dlion-avg", "pbit-allreduce", PayloadSpec(kind="votes", numel=10, rule=MeanVote()), 7, (13 + 1.4, 0.4 + 1, 9)),
        # all-gather, 8 workers: read 8 workers' bits (1 byte per parameter), write the int8 sum
        ("signum-mv", "allgather-1bit", PayloadSpec(kind="votes", numel=10, rule=MajorityVote()), 8, (14.125, 2, 9)),
    ],
)
def test_pass_bytes_by_hand(strategy, transport, spec, workers, expected):
    got = pass_bytes(STRATEGIES.get(strategy), transport, spec, workers)
    assert (got.encode, got.decode, got.update) == pytest.approx(expected)


def test_a_lone_worker_packs_nothing():
    got = pass_bytes(STRATEGIES.get("dlion-mavo"), "a2a-1bit", PayloadSpec(kind="votes", numel=10, rule=MajorityVote()), 1)
    assert (got.encode, got.decode, got.update) == (13, 0, 9)


def test_unknown_names_fail():
    with pytest.raises(LionsimError, match="unknown transport 'nope'"):
        pass_bytes(STRATEGIES.get("adamw"), "nope", PayloadSpec(kind="dense", numel=1), 2)


@pytest.mark.parametrize("workers", [2, 7, 200])
@pytest.mark.parametrize("name", STRATEGIES.names())
def test_probe_matches_the_strategy_built_on_a_real_layout(name, workers):
    """What the probe reads from a stand-in layout equals what the strategy says on a real one."""
    shapes = [(3, 10), (50,), (4, 5)]
    # the vector named as a norm: `estimate` sees shapes only, and muloco counts a vector as a norm there
    layout = ParamLayout.of([(name, torch.zeros(s)) for name, s in zip(("p0", "p1.norm", "p2"), shapes)])
    cls = STRATEGIES.get(name)
    for transport in valid_transports(cls):
        run = parse_runs([f"{name}@{transport}"])[0]
        real = cls(StrategyConfig(options={"topk_ratio": 0.1}), layout, SimComm(workers))
        got = probe(run, params=100, tensors=3, workers=workers, options={"topk_ratio": 0.1}, shapes=shapes)
        # where each fragment lies depends on the real tensors' sizes, which the stand-in does not have
        # (estimate prices the mean fragment): both place P fragments that cover the model once
        assert dataclasses.replace(got.spec, hidden_pieces=()) == dataclasses.replace(real.payload_spec(),
                                                                                      hidden_pieces=())
        for pieces in (got.spec.hidden_pieces, real.payload_spec().hidden_pieces):
            assert sum(b - a for fragment in pieces for a, b in fragment) == pytest.approx(1.0 if pieces else 0.0)
        assert list(got.extra_calls) == real.extra_calls(max(1, real.sync_every))  # a local-step strategy's sync
        assert got.transport.plan(got.spec, workers) == TRANSPORTS.get(transport)().plan(real.payload_spec(), workers)
