"""One resolved plan: the configuration flows one way, command -> plan -> training -> files.
Once the plan is made, training, booking and the run record never call back into BenchConfig."""

import dataclasses

import pytest

from lionsim.bench import Bench, BenchConfig
from lionsim.errors import LionsimError
from lionsim.plan import plan


def config(**kw) -> BenchConfig:
    return BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=2, batch_size=8, eval_every=2,
                       compute="h100", **kw)


def test_training_and_its_record_read_the_plan_never_the_config(monkeypatch):
    made = plan(config(strategies=["adamw", "demo", "diloco"], options={"demo_topk": 3, "diloco.local_steps": 1}))
    for name in ("validate", "strategy_config", "workload_config"):
        monkeypatch.setattr(BenchConfig, name, lambda *a, name=name, **k: pytest.fail(f"BenchConfig.{name} after the plan"))
    result = Bench(made).run()
    runs = {r["strategy"]: r for r in result.meta["runs"]}
    assert runs["demo"]["options"] == {"topk": 3, "chunk": 64}  # given, else the module's default
    assert runs["diloco"]["options"]["local_steps"] == 1 and runs["adamw"]["options"] == {}
    assert runs["demo"]["lr"] == 1e-2  # demo's own default, as resolved in the plan
    assert set(result.steps.strategy) == {"adamw", "demo", "diloco"}


def test_the_plan_is_frozen_and_resolves_each_run_once():
    made = plan(config(strategies=["powersgd", "adamw"], options={"powersgd_rank": 2}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.runs = ()
    first = made.runs[0]
    assert first.label == "powersgd@lowrank-allreduce" and first.options.rank == 2
    assert first.strategy.options == {"powersgd_rank": 2} and made.runs[1].strategy.options == {}
    assert made.extra_rows == 0 and made.workload.name == "mlp"


def test_a_bad_configuration_fails_before_a_plan_exists():
    with pytest.raises(LionsimError, match="bad --demo-topk 0"):
        plan(config(strategies=["demo"], options={"demo_topk": 0}))
    with pytest.raises(LionsimError, match="unknown strategy 'nope'"):
        plan(config(strategies=["nope"]))
