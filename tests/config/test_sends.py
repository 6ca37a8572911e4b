"""A transport plug-in's answers for every payload a run sends (wire_bytes, plan, bits_per_param)
are asked when the bench is planned, not when its steps are booked after training: a wrong one is
one line naming the plug-in, the payload and what is accepted, exit 2, before any step (bench on
sim and on gloo, sweep), and estimate says the same line. The plug-ins count their own aggregate calls,
so "no step ran" is what they saw; the payload's size is the model's, counted here by hand."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace

import pandas as pd
import pytest

from lionsim.aggregators import VOTE_RULES
from lionsim.backends import SimComm
from lionsim.cli.strategy_flags import refresh
from lionsim.strategies.core.sends import sent_specs
from lionsim.plugins import LOADED, load_plugin, unload_plugin
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.transports import PayloadSpec
from tests.helpers.cli import exit_code, one_line_exit_2

FORGETFUL = '''
from lionsim.transports import TRANSPORTS
from lionsim.transports.compressed_allreduce import CompressedAllReduce

AGGREGATED = []  # one entry per aggregate call: the test reads it


@TRANSPORTS.register("onebit-only")
class OnebitOnly(CompressedAllReduce):
    """1-bit Adam's compressed all-reduce, whose wire_bytes forgets the warm-up's dense payload."""

    name = "onebit-only"
    summary = "compressed all-reduce pricing only the 1-bit phase"

    def aggregate(self, payload, comm, clock=None):
        AGGREGATED.append(1)
        return super().aggregate(payload, comm, clock)

    def wire_bytes(self, spec, workers):
        return super().wire_bytes(spec, workers) if spec.kind == "onebit" else None
'''

ANSWERS = '''
from lionsim.transports import TRANSPORTS
from lionsim.transports.allreduce_float import Fp32AllReduce

AGGREGATED = []


class Counted(Fp32AllReduce):
    def aggregate(self, payload, comm, clock=None):
        AGGREGATED.append(1)
        return super().aggregate(payload, comm, clock)


@TRANSPORTS.register("noplan-allreduce")
class NoPlan(Counted):
    name = "noplan-allreduce"
    summary = "an all-reduce whose plan returns None"

    def plan(self, spec, workers):
        return None


@TRANSPORTS.register("onebits-allreduce")
class OneBits(Counted):
    name = "onebits-allreduce"
    summary = "an all-reduce whose bits_per_param returns one number"

    def bits_per_param(self, spec, workers):
        return 32.0


@TRANSPORTS.register("raising-allreduce")
class Raising(Counted):
    name = "raising-allreduce"
    summary = "an all-reduce whose plan raises"

    def plan(self, spec, workers):
        return {"dense": []}[spec.kind + "!"]
'''

RAISES = 1 + ANSWERS.splitlines().index('        return {"dense": []}[spec.kind + "!"]')
"""The line of ANSWERS where raising-allreduce's plan raises."""
P = 32 * 64 + 64 + 64 * 10 + 10
"""mlp tiny's parameters: 32 inputs -> 64 hidden -> 10 classes, weights and biases."""
BENCH = ["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "3", "--eval-every", "3"]
FIX = ("so the modelled compute cannot time its packing and unpacking; return TransportBytes(pack, unpack, "
       "aggregate) for every spec it carries, or run bench or sweep with --compute measured, which times the passes "
       "on the clock\n")


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """The plug-in files, loaded (a command's --plugin finds them loaded), forgotten after."""
    folder = tmp_path_factory.mktemp("sends")
    paths = {}
    for name, source in (("forgetful.py", FORGETFUL), ("answers.py", ANSWERS)):
        paths[name] = folder / name
        paths[name].write_text(textwrap.dedent(source))
    keys = [load_plugin(p) for p in paths.values()]
    refresh()
    yield paths
    for key in keys:
        if key in LOADED:
            unload_plugin(key)
    refresh()


def aggregated(path) -> list:
    return sys.modules[LOADED[str(path.resolve())][0]].AGGREGATED


def test_a_wire_bytes_that_forgets_the_warm_up_is_refused_before_training(plugins, tmp_path, capsys):
    # it trained every step (the 1-bit steps' bytes are declared), then failed booking the warm-up's
    path = plugins["forgetful.py"]
    plug = ["--plugin", str(path), "-s", "onebit-adam@onebit-only", "--freeze-steps", "1"]
    line = (f"error: plugin {path}: transport 'onebit-only': its wire_bytes returned None for a 'dense' payload of "
            f"{P:,} values on 2 workers, which this run sends, {FIX}")
    aggregated(path).clear()
    sim = one_line_exit_2(["bench", *plug, *BENCH, "--out", tmp_path / "sim"], capsys)
    gloo = one_line_exit_2(["bench", *plug, *BENCH, "--backend", "gloo", "--ranks", "2", "--compute", "h100",
                            "--out", tmp_path / "gloo"], capsys)
    sweep = one_line_exit_2(["sweep", *plug, *BENCH, "--out", tmp_path / "sweep"], capsys)
    assert sim == gloo == sweep == line
    assert aggregated(path) == [] and not any((tmp_path / d).exists() for d in ("sim", "gloo", "sweep"))
    # estimate prices the warm-up where it prices a whole run: the same line at its model's size
    priced = ["estimate", *plug, "--params", "1000000", "--tokens-per-worker", "100", "-n", "2"]
    assert one_line_exit_2([*priced, "--steps", "10"], capsys) == line.replace(f"{P:,}", "1,000,000")
    assert exit_code([p for p in priced if p not in ("--freeze-steps", "1")]) == 0  # a steady step: 1-bit alone
    # measured compute times the passes on the clock, asking no wire_bytes: it trains
    assert exit_code(["bench", *plug, *BENCH, "--compute", "measured", "--out", str(tmp_path / "m")]) == 0
    assert len(pd.read_csv(tmp_path / "m" / "steps.csv")) == 3 and len(aggregated(path)) == 3


def test_the_refusal_names_the_size_a_gpt_run_sends(plugins, tmp_path, capsys):
    """The plan asked gpt's probe model, whose vocabulary is 128 for any text: the line named a
    payload the run never sends. It names the trained model's own size now, from a text file (its
    65 characters) and from the generated corpus."""
    from lionsim.workloads import WorkloadConfig, build_workload

    path = plugins["forgetful.py"]
    book = tmp_path / "book.txt"
    book.write_text("".join(chr(c) for c in range(32, 97)) * 40, encoding="utf-8")  # 65 characters
    gpt = ["-w", "gpt", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "3", "--eval-every", "3"]
    for data in ([], ["--data", str(book)]):
        cfg = WorkloadConfig(name="gpt", workers=2, batch_size=8, size="tiny", data=book if data else None)
        params = build_workload(cfg).params  # the trained model's, counted by building it
        line = one_line_exit_2(["bench", "--plugin", str(path), "-s", "onebit-adam@onebit-only", "--freeze-steps",
                                "1", *gpt, *data, "--out", tmp_path / "o"], capsys)
        assert f"for a 'dense' payload of {params:,} values on 2 workers, which this run sends" in line, line


A_LIST = "a list of lionsim.network.CollectiveCall ([] where it sends nothing)"


@pytest.mark.parametrize(("transport", "answer", "accepted"), [
    ("noplan-allreduce", "its plan returned None", A_LIST),
    ("onebits-allreduce", "its bits_per_param returned 32.0",
     "(up, down): two finite numbers of bits per parameter, at least 0"),
    ("raising-allreduce", f"its plan raised KeyError: 'dense!' (line {RAISES})", A_LIST),
])
def test_a_wrong_plan_or_bits_is_one_line_before_training_not_a_traceback_after(plugins, tmp_path, capsys, transport,
                                                                                answer, accepted):
    # each was a TypeError (or the plug-in's KeyError) with its traceback, from booking the trained run
    path = plugins["answers.py"]
    line = (f"error: plugin {path}: transport '{transport}': {answer} for a 'dense' payload of {{}} values on 2 "
            f"workers, which this run sends; accepted: {accepted}\n")
    aggregated(path).clear()
    for compute in ("h100", "measured"):  # bench and estimate price every step's collectives either way
        out = tmp_path / compute
        bench = ["bench", "--plugin", str(path), "-s", f"adamw@{transport}", *BENCH, "--compute", compute]
        assert one_line_exit_2([*bench, "--out", out], capsys) == line.format(f"{P:,}")
        assert not out.exists()
    assert aggregated(path) == []
    assert one_line_exit_2(["estimate", "--plugin", str(path), "-s", f"adamw@{transport}", "--params", "1000000",
                            "--tokens-per-worker", "100", "-n", "2"], capsys) == line.format("1,000,000")


def test_the_specs_a_run_sends_are_its_steps_each_once_a_vote_also_with_abstentions():
    layout = ParamLayout.meta([("w", (4, 3)), ("b", (4,))])
    onebit = STRATEGIES.get("onebit-adam")(StrategyConfig(options={"freeze_steps": 2}), layout, SimComm(2))
    steady = onebit.payload_spec()
    assert sent_specs(onebit, steady, 5) == [PayloadSpec(kind="onebit", numel=16), PayloadSpec(kind="dense", numel=16)]
    assert sent_specs(onebit, steady, 1) == [steady, PayloadSpec(kind="dense", numel=16)]  # the steady one always
    mavo = STRATEGIES.get("dlion-mavo")(StrategyConfig(), layout, SimComm(3))
    votes = PayloadSpec(kind="votes", numel=16, rule=VOTE_RULES.get("mavo")())
    assert sent_specs(mavo, mavo.payload_spec(), 4) == [votes, replace(votes, abstain=True)]
    assert onebit.exp_avg.device.type == "meta"  # built on the shapes, without their storage


VARIANTS = [
    {},  # each strategy's defaults
    {"onebit-adam.freeze_steps": 7, "dgc.warmup_steps": 6, "powersgd.warmup_steps": 5, "local_steps": 4,
     "streaming-diloco.fragments": 2, "streaming-diloco.delay": 1},
    {"onebit-adam.freeze_steps": 1, "dgc.warmup_steps": 2, "powersgd.warmup_steps": 0, "local_steps": 1,
     "streaming-diloco.local_steps": 2},
    {"dgc.warmup_steps": 40, "local_steps": 9, "streaming-diloco.fragments": 3, "streaming-diloco.delay": 2},
]
"""Warm-ups and sync periods below, at and past the step counts walked."""
SYNCS = ["never", "every:3", "every:50", "schedule:2"]


def full_walk(strategy, steady, steps):
    """Every step 1..steps, walked in the plainest way: the specs (steady first, each vote also with
    abstentions), each as the payloads it stands for (Strategy.sent_payloads), and the strategy's
    own calls, each once, in the order first met."""
    specs = [steady] + [s for step in range(1, steps + 1) if (s := strategy.run_spec(step, steady)) is not None]
    specs = list(dict.fromkeys(p for s in specs for p in strategy.sent_payloads(s)))
    specs = [v for s in specs for v in ([s, replace(s, abstain=True)] if s.kind == "votes" and not s.abstain else [s])]
    calls = list(dict.fromkeys(c for step in range(1, steps + 1) for c in strategy.extra_calls(step)))
    return specs, calls


@pytest.mark.parametrize("name", [n for n, cls in STRATEGIES.items() if cls.__module__.startswith("lionsim.")])
def test_the_walk_goes_from_change_to_change_and_finds_what_every_step_sends(name):
    """sent_specs and sent_calls go from change to change (Strategy.next_change) over a warm-up and a
    sync period (Strategy.repeats), not to the run's last step: the same specs and calls, in the same
    order, as walking every step (brute force), at step counts below, at and past each warm-up and
    period; at 10^7 steps, with a sync every 10^6 steps too, they ask a few hundred steps at most."""
    from lionsim.strategies.core.sends import sent_calls

    layout = ParamLayout.meta([("w1", (16, 8)), ("b1", (16,)), ("w2", (8, 16)), ("b2", (8,))])
    cls = STRATEGIES.get(name)
    syncs = SYNCS if getattr(cls, "has_momentum_sync", False) else ["never"]
    for options in [*VARIANTS, {"local_steps": 10**6, "streaming-diloco.fragments": 3}]:
        for sync in [*syncs, *(["every:1000000"] if len(syncs) > 1 else [])]:
            strategy = cls(StrategyConfig(options=dict(options), momentum_sync=sync), layout, SimComm(4))
            steady = strategy.payload_spec()
            for steps in (1, 2, 3, 5, 8, 13, 60, 200):
                assert (sent_specs(strategy, steady, steps), sent_calls(strategy, steps)) == \
                    full_walk(strategy, steady, steps), (options, sync, steps)
            for steps in (10**7, 10**6 - 1):
                asked = asking(strategy)
                sent_specs(strategy, steady, steps), sent_calls(strategy, steps)
                assert len(asked) <= 300, (name, options, sync, steps)  # the walk does not grow with --steps


def test_streaming_diloco_is_asked_about_each_fragment_it_sends_after_its_steady_mean():
    """The plan-time check asked fp4-allreduce about the mean fragment alone, which prices a step but
    is never sent. Closed form: tensors of 128, 16, 128 and 8 values cut in 2 runs, the largest as
    small as can be: 144 and 136 values; the mean, ceil(280 / 2) = 140, first (the run loop checks
    it, bench's footer reads it)."""
    from types import SimpleNamespace

    from lionsim.config.sends import run_sends

    layout = ParamLayout.meta([("w1", (16, 8)), ("b1", (16,)), ("w2", (8, 16)), ("b2", (8,))])
    r = SimpleNamespace(run=SimpleNamespace(strategy_class=STRATEGIES.get("streaming-diloco")),
                        strategy=StrategyConfig(options={"local_steps": 4}))
    assert [s.numel for s in run_sends(r, layout, 4, 1, 10)] == [140, 144, 136]


def asking(strategy):
    """The steps `strategy`'s run_spec and extra_calls are asked about from now on (a list they fill)."""
    asked, run_spec, extra_calls = [], strategy.run_spec, strategy.extra_calls
    strategy.run_spec = lambda step, steady: asked.append(step) or run_spec(step, steady)
    strategy.extra_calls = lambda step: asked.append(step) or extra_calls(step)
    return asked


def test_a_period_stated_above_an_overridden_run_spec_is_not_trusted():
    """A plug-in that subclasses a built-in and overrides run_spec under its declarations is walked
    whole."""
    from lionsim.strategies.core.schedule import horizon

    layout = ParamLayout.meta([("w", (4, 3))])
    onebit = STRATEGIES.get("onebit-adam")

    class Later(onebit):  # dense again from step 100: past onebit-adam's warm-up
        def run_spec(self, step, steady):
            return PayloadSpec(kind="dense", numel=steady.numel) if step >= 100 else super().run_spec(step, steady)

    later = Later(StrategyConfig(options={"freeze_steps": 2}), layout, SimComm(2))
    assert horizon(onebit(StrategyConfig(options={"freeze_steps": 2}), layout, SimComm(2)), 1000) == 3
    assert horizon(later, 1000) == 1000
    assert PayloadSpec(kind="dense", numel=12) in sent_specs(later, later.payload_spec(), 150)


@pytest.mark.parametrize("workload", ["mlp", "gpt", "vit"])
def test_every_built_in_strategy_is_asked_at_plan_time_on_every_workload(workload):
    """run_sends gave None for any strategy that failed on the meta device, which switched its
    plan-time checks off without a word; lionsim's own all build there, on each workload's shapes."""
    from types import SimpleNamespace

    from lionsim.config.sends import run_sends
    from lionsim.docgen.run import bench_plan
    from lionsim.workloads import workload_class

    bench = bench_plan(["-w", workload, "-n", "4", "--steps", "3", "--eval-every", "3"])
    layout = ParamLayout.meta(workload_class(workload).param_shapes(bench.workload))
    built_in = [(n, c) for n, c in STRATEGIES.items() if c.__module__.startswith("lionsim.")]
    assert len(built_in) >= 28
    for name, cls in built_in:
        r = SimpleNamespace(run=SimpleNamespace(strategy_class=cls), strategy=StrategyConfig(workload=workload))
        specs = run_sends(r, layout, 4, 1, 3)
        assert specs and specs[0] == cls(StrategyConfig(workload=workload), layout, SimComm(4)).payload_spec(), name


def test_a_built_in_strategy_that_fails_on_meta_is_a_bug_raised_a_plug_ins_is_asked_as_it_trains(monkeypatch):
    from types import SimpleNamespace

    from lionsim.config.sends import run_sends

    layout = ParamLayout.meta([("w", (4, 3))])
    adamw = STRATEGIES.get("adamw")

    def broken(self):
        raise RuntimeError("a regression on meta")

    monkeypatch.setattr(adamw, "payload_spec", broken)
    with pytest.raises(RuntimeError, match="a regression on meta"):
        run_sends(SimpleNamespace(run=SimpleNamespace(strategy_class=adamw), strategy=StrategyConfig()), layout, 2, 1, 3)
    plugin = type("Reads", (adamw,), {"__module__": "my_plugin"})  # a plug-in's, reading a tensor's values
    assert run_sends(SimpleNamespace(run=SimpleNamespace(strategy_class=plugin), strategy=StrategyConfig()),
                     layout, 2, 1, 3) is None
