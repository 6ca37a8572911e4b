"""One resolved plan: the configuration flows one way, command -> plan -> runner -> records -> files.
Once the plan is made, training, booking and the run record never call back into BenchConfig; a
plan that crosses a process boundary is rebuilt from its record, equal to the original."""

import dataclasses
import json
import pickle

import pytest

from lionsim.bench import BenchConfig, plan, run_plan
from lionsim.errors import LionsimError
from lionsim.plan import BenchPlan


def config(**kw) -> BenchConfig:
    return BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=2, batch_size=8, eval_every=2,
                       compute="h100", **kw)


def test_training_and_its_record_read_the_plan_never_the_config(monkeypatch):
    made = plan(config(strategies=["adamw", "demo", "diloco"], options={"demo_topk": 3, "diloco.local_steps": 1}))
    for name in ("validate", "strategy_config", "workload_config", "to_dict"):
        monkeypatch.setattr(BenchConfig, name, lambda *a, name=name, **k: pytest.fail(f"BenchConfig.{name} after the plan"))
    result = run_plan(made)
    runs = {r["strategy"]: r for r in result.meta["runs"]}
    assert runs["demo"]["options"] == {"topk": 3, "chunk": 64}  # given, else the module's default
    assert runs["diloco"]["options"]["local_steps"] == 1 and runs["adamw"]["options"] == {}
    assert runs["demo"]["lr"] == 1e-2  # demo's own default, as resolved in the plan
    assert set(result.steps.strategy) == {"adamw", "demo", "diloco"}


def test_the_plan_is_frozen_all_the_way_down_and_resolves_each_run_once():
    made = plan(config(strategies=["powersgd", "adamw"], options={"powersgd_rank": 2},
                       hyper={"adamw": {"betas": [0.9, 0.95]}}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.runs = ()
    first = made.runs[0]
    assert first.label == "powersgd@lowrank-allreduce" and first.options.rank == 2
    assert first.strategy.options == {"powersgd_rank": 2} and made.runs[1].strategy.options == {}
    assert made.extra_rows == 0 and made.workload.name == "mlp"
    parts = [made.choices, made.workload, made.training, made.network, made.backend, made.compute, made.overlap,
             made.rule, first, first.strategy, first.hyper, first.run]
    for part in parts:  # every part a frozen dataclass
        name = dataclasses.fields(part)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(part, name, getattr(part, name))
    with pytest.raises(TypeError):  # the given mappings are read-only too
        first.strategy.options["powersgd_rank"] = 4
    with pytest.raises(TypeError):
        made.choices.hyper["adamw"]["lr"] = 1.0


def test_the_plan_records_the_options_exactly_as_the_config_gave_them():
    cfg = config(strategies=["dlion-mavo@a2a-1bit", "demo"], transport=None, lr=0.01, betas=(0.9, 0.95),
                 hyper={"demo": {"lr": 0.02}}, momentum_sync="every:2", tie="random", options={"demo.topk": "4"},
                 compute_spread=["slow:1:2"], target_loss=2.0, bucket_mb=0.5, overlap="buckets", trace=True)
    made = plan(cfg)
    assert made.options() == cfg.to_dict()  # run.json, --resume and the ranks' check read these
    assert list(made.options()) == list(cfg.to_dict())  # in the same order: run.json's keys stay put
    # sim on a device measures nothing: no warm-up to leave out (given, it is refused: test_warmup_steps below)
    assert made.rule.target_loss == 2.0 and made.rule.warmup_steps is None and made.overlap.bucket_mb == 0.5
    assert made.compute.device.name == "h100" and made.compute.spread.describe() == "slow:1:2"


def test_a_plan_crosses_a_process_boundary_as_its_record_and_comes_back_equal(monkeypatch):
    made = plan(config(strategies=["adamw", "demo", "dlion-mavo"], options={"demo_topk": 3, "demo.chunk": 32},
                       momentum_sync="every:2",
                       hyper={"adamw": {"lr": 0.005}}, compute_spread=["lognormal:0.1"]))
    record = made.record()
    assert json.loads(json.dumps(record)) == record  # plain JSON values
    for name in ("validate", "strategy_config", "to_dict"):  # rebuilt without validating a config again
        monkeypatch.setattr(BenchConfig, name, lambda *a, name=name, **k: pytest.fail(f"BenchConfig.{name}"))
    again = pickle.loads(pickle.dumps(made))  # what a spawned rank or a pool worker receives
    assert again == made and BenchPlan.from_record(record) == made
    assert again.runs[1].options.topk == 3 and again.runs[1].options.chunk == 32 and again.runs[0].hyper.lr == 0.005
    assert again.record() == record


def test_with_network_books_the_same_bench_on_another_network():
    made = plan(config(strategies=["adamw"], network="1gbe"))
    other = made.with_network("10gbe")
    assert other.network.spec == "10gbe" and other.network.network.name == "10gbe"
    assert other.options()["network"] == "10gbe" and made.options()["network"] == "1gbe"
    assert dataclasses.replace(other, network=made.network) == made


def test_a_bad_configuration_fails_before_a_plan_exists():
    with pytest.raises(LionsimError, match="bad --demo-topk 0"):
        plan(config(strategies=["demo"], options={"demo_topk": 0}))
    with pytest.raises(LionsimError, match="unknown strategy 'nope'"):
        plan(config(strategies=["nope"]))
