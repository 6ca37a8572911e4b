"""Every option a strategy accepts acts: its own Options fields and the common lr, weight decay,
betas, momentum sync (and its tensor selection) and tie rule where it accepts them. Each is given
another valid value on a tiny model for a few steps of fixed gradients; the parameters (or the
workers' replicas) must end elsewhere than with the default. An option that only prices (it
changes what `estimate` or the step time say, not what is trained) is named in its strategy's
`pricing_only`, and its help says so."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.bench import BenchConfig
from lionsim.engine import train_step
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.core.form import option_specs
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.steps import layout_of

# a tall and a wide hidden matrix, a bias, an embedding and a norm: every kind of tensor a strategy may treat apart
TENSORS = [("h.weight", (16, 12)), ("w.weight", (8, 16)), ("h.bias", (16,)), ("embed.weight", (5, 4)),
           ("ln.weight", (12,))]
WORKERS, STEPS = 2, 6
BASE = {"local_steps": 2, "warmup_steps": 0, "rank": 1, "precision": "fp32"}
"""Given to every strategy with the field: a 6-step run syncs three times (muloco's default H is 30),
compresses from the first step (PowerSGD: no warm-up, rank 1, so that its matrices are worth
compressing), and orthogonalises in fp32 (bf16 matrix products are slow on a CPU)."""
STREAMING_BASE = {"local_steps": 4}  # H = 4 with its 2 fragments: a send every 2 steps

NUMBERS = (0.0, 0.5, 1.0, 2.0, 3.0, 0.1, 0.99, 1e-3)
"""Values tried for a numeric option (the first valid one that differs from the default and
moves the training is enough: the option acts)."""


def layout() -> ParamLayout:
    return layout_of(TENSORS)


def trained(name: str, options: dict, **common) -> list[torch.Tensor]:
    """The global parameters and, where the strategy keeps them, the workers' replicas after STEPS
    steps of fixed gradients (the same draws for every call)."""
    cls = STRATEGIES.get(name)
    base = STREAMING_BASE if name == "streaming-diloco" else BASE
    fields = {s.field for s in option_specs(name, cls.Options)}
    given = {f"{name}.{k}": v for k, v in {**base, **options}.items() if k in fields}
    comm = SimComm(WORKERS)
    strategy = cls(StrategyConfig(options=given, **common), layout(), comm)
    gen = torch.Generator().manual_seed(0)
    total = sum(math.prod(s) for _, s in TENSORS)
    x = torch.randn(total, generator=gen)
    strategy.start(x)
    transport = TRANSPORTS.get(cls.default_transport)()
    for step in range(1, STEPS + 1):
        train_step(strategy, transport, comm, torch.randn(WORKERS, total, generator=gen), x, step, Clock())
    return [x] + ([strategy.replicas.clone()] if strategy.replicas is not None else [])


@functools.cache
def default_run(name: str) -> list[torch.Tensor]:
    return trained(name, {})


def moved(name: str, reference: list[torch.Tensor], options: dict | None = None, **common) -> bool:
    try:
        got = trained(name, options or {}, **common)
    except LionsimError:  # a value this strategy refuses with the base options (H not a multiple of P)
        return False
    return any(not torch.equal(a, b) for a, b in zip(got, reference))


def candidates(spec, current) -> list:
    """Valid values of an option field other than `current` (the value the reference run had)."""
    if spec.rule.choices:
        values = list(spec.rule.choices)
    elif spec.type is bool:
        values = [not spec.default]
    elif spec.type is int:
        values = [1, 2, 3, 4, 0, spec.default + 1, spec.default * 2]
    else:
        values = [*NUMBERS, spec.default * 2, spec.default / 2]
    out = []
    for v in values:
        try:
            ok = spec.rule.check(v)
        except TypeError:
            ok = False
        if ok and v != current and v not in out:
            out.append(v)
    return out


def common_options(cls) -> list[tuple[str, list[dict]]]:
    """(name, alternatives) of the common options the strategy accepts (momentum sync and the tie
    rule only where bench does not refuse them)."""
    out = [("lr", [{"lr": 0.05}, {"lr": 1e-4}]), ("weight_decay", [{"weight_decay": 0.3}, {"weight_decay": 0.0}]),
           ("betas", [{"betas": (0.5, 0.6)}, {"betas": (0.0, 0.3)}])]
    if cls.has_momentum_sync:
        out.append(("momentum_sync", [{"momentum_sync": "every:1"}, {"momentum_sync": "every:2"}]))
    if "tie" in cls.reads:
        out.append(("tie", [{"tie": "alternate"}, {"tie": "random"}]))
    return out


def cases():
    for name in STRATEGIES.names():
        cls = STRATEGIES.get(name)
        for field, alternatives in common_options(cls):
            yield pytest.param(name, field, None, alternatives, id=f"{name}-{field}")
        for spec in option_specs(name, cls.Options):
            yield pytest.param(name, spec.field, spec, None, id=f"{name}-{spec.field}")


@pytest.mark.parametrize("name,field,spec,alternatives", list(cases()))
def test_every_accepted_option_changes_the_training(name, field, spec, alternatives):
    cls = STRATEGIES.get(name)
    if field in cls.pricing_only:
        assert spec is not None and "pricing only" in spec.help.lower(), f"{name}.{field}: say so in its help"
        return
    if field in cls.ignores:  # refused in one line instead
        given = dict(alternatives[0])
        with pytest.raises(LionsimError, match=f"--{field.replace('_', '-')} applies to none of these runs"):
            BenchConfig(workload="mlp", strategies=[name], **given).validate()
        with pytest.raises(LionsimError, match=f"hyper.{name}.{field}: {name} takes no {field}"):
            BenchConfig(workload="mlp", strategies=[name, "adamw"], hyper={name: given}).validate()
        return
    reference = default_run(name)
    if spec is None:
        acted = any(moved(name, reference, **given) for given in alternatives)
    else:
        base = STREAMING_BASE if name == "streaming-diloco" else BASE
        tried = candidates(spec, base.get(field, spec.default))
        assert tried, f"{name}.{field}: no other valid value to try"
        acted = any(moved(name, reference, {field: v}) for v in tried)
    assert acted, f"{name} accepts {field} but trains the same whatever it is"


def test_the_sync_tensors_selection_acts_with_a_momentum_sync():
    for name in STRATEGIES.names():
        if not STRATEGIES.get(name).has_momentum_sync:
            continue
        reference = trained(name, {}, momentum_sync="every:1")
        assert moved(name, reference, momentum_sync="every:1", sync_tensors="min-numel:100"), name
