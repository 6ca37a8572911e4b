"""A transport lionsim does not ship, loaded as a plug-in (examples/plugins/sparse_as_dense.py:
Horovod's sparse_as_dense, a sparse payload scattered into a dense vector and all-reduced),
against a plain reference written here; its bytes against their closed form; end to end on sim
(N > 1), gloo and estimate, with no lionsim edit. And the rest of the contract a plug-in relies
on: a transport that declares no overlap runs after backward, a kernel the table lacks is priced
as float-pass, a plug-in may register its own payload kind, and every built-in passes the checks
a plug-in file gets."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.strategy_flags import refresh
from lionsim.engine import train_step
from lionsim.plugins import LOADED, check_strategy, check_transport, load_plugin, unload_plugin
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import PAYLOAD_KINDS, TRANSPORTS, Payload, PayloadSpec
from tests.helpers.cli import exit_code, sim_and_gloo_steps

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "sparse_as_dense.py"


@pytest.fixture(scope="module")
def plugin():
    """The example loaded for this file's tests, forgotten after them (the registries are the process's)."""
    key = load_plugin(EXAMPLE)
    refresh()
    yield TRANSPORTS.get("sparse-as-dense")
    unload_plugin(key)
    refresh()


def reference(indices, values, numel, over_senders):
    """The mean of N sparse vectors, plain floats: over all N, or per position over those that sent it."""
    total, senders = [0.0] * numel, [0] * numel
    for idx, val in zip(indices, values):
        for i, v in zip(idx, val):
            total[i] += v
            senders[i] += 1
    workers = len(indices)
    return [t / (max(s, 1) if over_senders else workers) for t, s in zip(total, senders)]


@pytest.mark.parametrize("over_senders", [False, True])
@pytest.mark.parametrize("workers", [1, 3])
def test_it_averages_the_pairs_as_the_plain_sum_does(plugin, workers, over_senders):
    gen = torch.Generator().manual_seed(workers)
    numel, k = 40, 9
    indices = torch.stack([torch.randperm(numel, generator=gen)[:k] for _ in range(workers)])
    values = torch.randn(workers, k, generator=gen, dtype=torch.float64).float()
    payload = Payload(PayloadSpec(kind="sparse", numel=numel, k=k, over_senders=over_senders), values, indices=indices)
    out = plugin().aggregate(payload, SimComm(workers))
    expected = reference(indices.tolist(), values.double().tolist(), numel, over_senders)
    assert out.shape == (workers, numel)
    for row in out:
        assert row.tolist() == pytest.approx(expected, abs=1e-6)
    assert torch.equal(out, TRANSPORTS.get("sparse-allgather")().aggregate(payload, SimComm(workers)))


def test_its_plan_and_bits_are_the_dense_vector_and_the_counts(plugin):
    t = plugin()
    spec = PayloadSpec(kind="sparse", numel=1000, k=10)
    assert [(c.op, c.nbytes) for c in t.plan(spec, 4)] == [("all_reduce", 4000)]
    assert t.bits_per_param(spec, 4) == (32.0, 32.0)
    demo = PayloadSpec(kind="sparse", numel=1000, k=10, over_senders=True)
    assert [(c.op, c.nbytes, c.dtype) for c in t.plan(demo, 200)] == [("all_reduce", 4000, "float32"),
                                                                      ("all_reduce", 4000, "int32")]  # > 127 senders
    assert t.bits_per_param(demo, 4) == (40.0, 40.0)


def test_bench_trains_and_books_it_on_sim(plugin, tmp_path):
    """N = 2: the same losses as sparse-allgather (the same aggregate), and a 2-worker all-reduce of
    the dense float32 vector sends P x 4 bytes per worker per step (2 (N - 1) / N = 1)."""
    out = tmp_path / "sad"
    assert exit_code(["bench", "--plugin", str(EXAMPLE), "-w", "mlp", "-n", "2", "--steps", "3", "-b", "8",
                "--eval-every", "3", "-s", "dgc@sparse-as-dense", "-s", "dgc", "--out", str(out)]) == 0
    steps = pd.read_csv(out / "steps.csv")
    dense, pairs = (steps[steps.transport == t] for t in ("sparse-as-dense", "sparse-allgather"))
    assert dense.loss.tolist() == pytest.approx(pairs.loss.tolist(), rel=1e-6)
    assert dense.wire_bytes.tolist() == [4 * int(dense.params.iloc[0])] * 3
    assert (dense.comm_s > 0).all() and (dense.comm_exposed_s <= dense.comm_s).all()
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["plugin"] == [str(EXAMPLE)] and record["config"]["overlap"] == "auto"
    assert exit_code(["report", str(out)]) == 0


def test_estimate_prices_it_and_finds_the_crossover(plugin, capsys):
    """P = 1e8 on N = 4: a bandwidth-optimal all-reduce of 4 P bytes sends 2 (N - 1) / N x 4 P; DGC
    runs per bucket (its code's schedule), which the transport can. Densifying beats the pairs' all-gather
    once each worker sends more than P / N pairs."""
    assert exit_code(["estimate", "--plugin", str(EXAMPLE), "-s", "dgc@sparse-as-dense", "-s", "dgc", "--params", "1e8",
                "--tokens-per-worker", "1000", "--workers", "4", "--network", "10gbe", "--topk-ratio", "0.5",
                "--format", "csv"]) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("transport")
    dense, pairs = rows.loc["sparse-as-dense"], rows.loc["sparse-allgather"]
    assert dense.wire_bytes == 2 * 3 / 4 * 4 * 10**8
    assert dense.overlap == "buckets" and dense.buckets == 16  # 400 MB of fp32 gradients in 25 MB buckets
    assert dense.comm_s < pairs.comm_s  # k = P / 2 > P / N pairs each
    assert "priced as float-pass" not in dense.kernels  # scatter-add and float-pass are the table's own


@pytest.mark.slow
def test_gloo_ranks_load_it_and_train_what_sim_trains(plugin, tmp_path):
    argv = ["-w", "mlp", "-n", "2", "--steps", "3", "-b", "8", "--eval-every", "3", "-s", "demo@sparse-as-dense",
            "--compute", "h100"]
    sim, gloo = sim_and_gloo_steps(EXAMPLE, argv, tmp_path)
    assert gloo.loss.tolist() == pytest.approx(sim.loss.tolist(), rel=1e-5)
    assert gloo.wire_bytes.tolist() == sim.wire_bytes.tolist()  # DeMo averages over senders: counts too


def test_listed_with_the_strategies_that_send_sparse(plugin, capsys):
    assert exit_code(["strategies", "--plugin", str(EXAMPLE), "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    users = set(frame[frame.transport == "sparse-as-dense"].strategy)
    assert {"dgc", "demo"} <= users and users <= {n for n, c in STRATEGIES.items() if c.payload_kind == "sparse"}
    rows = frame[frame.transport == "sparse-as-dense"].set_index("strategy")
    assert rows.loc["dgc", "overlap"] == "buckets" and rows.loc["demo", "overlap"] == "after"


# -- the rest of the contract --------------------------------------------------------------------

BARE = '''
import torch
from lionsim.network.calls import CollectiveCall
from lionsim.transports import TRANSPORTS, Transport
from lionsim.transports.base import F32, TransportBytes


@TRANSPORTS.register("bare-allreduce")
class Bare(Transport):
    """A float all-reduce that declares neither overlap nor kernels the table has."""

    name = "bare-allreduce"
    summary = "a float32 all-reduce, declaring the least"
    carries = ("dense",)
    kernels = ("my-pack", "my-unpack")

    def aggregate(self, payload, comm, clock=None):
        return comm.all_reduce(payload.values.float()) / comm.world_size

    def plan(self, spec, workers):
        return [CollectiveCall("all_reduce", 4 * spec.numel, "gradients")]

    def bits_per_param(self, spec, workers):
        return 32.0, 32.0

    def wire_bytes(self, spec, workers):
        return TransportBytes(pack=F32, unpack=F32, aggregate=F32)
'''


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_a_transport_that_declares_nothing_runs_after_backward_and_its_kernels_stand_in(tmp_path, capsys):
    """The base class's defaults are the safe ones: after backward, whatever --overlap asks; its
    kernels, which the table lacks, priced as float-pass and said so."""
    path = _write(tmp_path, "bare.py", BARE)
    try:
        assert exit_code(["estimate", "--plugin", str(path), "-s", "adamw@bare-allreduce", "-s", "adamw", "--params", "1e8",
                    "--tokens-per-worker", "1000", "--workers", "4", "--device", "h100", "--overlap", "buckets",
                    "--format", "csv"]) == 0
        rows = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("transport")
        bare, ddp = rows.loc["bare-allreduce"], rows.loc["fp32-allreduce"]
        assert (bare.overlap, bare.buckets, ddp.overlap) == ("after", 1, "buckets")
        assert bare.comm_exposed_s == bare.comm_s and bare.comm_s == pytest.approx(ddp.comm_s, rel=0.05)
        assert bare.kernels.endswith("; my-pack, my-unpack priced as float-pass")
        out = tmp_path / "bench"
        assert exit_code(["bench", "--plugin", str(path), "-w", "mlp", "-n", "2", "--steps", "2", "-b", "8",
                    "--eval-every", "2", "-s", "adamw@bare-allreduce", "--out", str(out)]) == 0
        steps = pd.read_csv(out / "steps.csv")
        assert (steps.comm_exposed_s == steps.comm_s).all()  # after backward: nothing hidden
    finally:
        if str(path.resolve()) in LOADED:
            unload_plugin(str(path))
        refresh()


KIND = '''
from dataclasses import dataclass
from lionsim.network.calls import CollectiveCall
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.strategies.core.base import Hyper
from lionsim.transports import PAYLOAD_KINDS, PER_BUCKET, AFTER_BACKWARD, TRANSPORTS, Payload, PayloadKind, PayloadSpec, Transport
from lionsim.transports.base import TransportBytes

PAYLOAD_KINDS.add("halves", PayloadKind("float16 values, averaged in float32", lambda p: p.values.float(),
                                        lambda spec: 2.0, 2.0))


@TRANSPORTS.register("halves-allreduce")
class HalvesAllReduce(Transport):
    name = "halves-allreduce"
    summary = "float16 values summed in float32"
    carries = ("halves",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})
    kernels = ("cast", "float-pass")

    def aggregate(self, payload, comm, clock=None):
        return comm.all_reduce(payload.values.float()) / comm.world_size

    def plan(self, spec, workers):
        return [CollectiveCall("all_reduce", 4 * spec.numel, "halves")]

    def bits_per_param(self, spec, workers):
        return 32.0, 32.0

    def wire_bytes(self, spec, workers):
        return TransportBytes(pack=2.0 + F32, unpack=0.0, aggregate=F32)


@STRATEGIES.register("sgd-halves")
class SgdHalves(Strategy):
    name = "sgd-halves"
    summary = "SGD whose gradients travel as float16"
    payload_kind = "halves"
    default_transport = "halves-allreduce"
    schedule = PER_BUCKET
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))
    bytes = StrategyBytes(F32, 2 * F32, "rule reads g (writes the halves: the kind's bytes); update reads p, writes p")

    def payload_spec(self):
        return PayloadSpec(kind="halves", numel=self.layout.numel)

    def encode(self, grads, params, comm, clock):
        return Payload(self.payload_spec(), grads.half())

    def apply(self, params, aggregate):
        params.sub_(aggregate[0], alpha=self.hyper.lr)
'''


def test_a_plugin_may_bring_its_own_payload_kind(tmp_path, capsys):
    """A kind registered beside its strategy and transport: a lone worker decodes it by the kind's
    own rule, N > 1 trains over its transport, estimate reads the bytes its rule writes; unloading
    forgets it."""
    path = _write(tmp_path, "halves.py", KIND)
    try:
        out = tmp_path / "n2"
        assert exit_code(["bench", "--plugin", str(path), "-w", "mlp", "-n", "2", "--steps", "2", "-b", "8",
                    "--eval-every", "2", "-s", "sgd-halves", "--out", str(out)]) == 0
        assert pd.read_csv(out / "steps.csv").loss.notna().all()
        load_plugin(path)  # the command's plug-ins went with it (lionsim.cli.app.main): loaded here to build it
        layout = ParamLayout.of([("w", torch.zeros(2, 3))])
        alone = STRATEGIES.get("sgd-halves")(StrategyConfig(lr=0.5), layout, SimComm(1))
        params, grads = torch.ones(6), torch.full((1, 6), 0.25)
        train_step(alone, TRANSPORTS.get("halves-allreduce")(), SimComm(1), grads, params, 1, Clock())
        assert params.tolist() == [1 - 0.5 * 0.25] * 6  # the kind's own decoding of one worker's halves
        capsys.readouterr()
        assert exit_code(["estimate", "--plugin", str(path), "-s", "sgd-halves", "--params", "1e6", "--tokens-per-worker",
                    "100", "--workers", "1", "--kernels", "ideal", "--format", "csv"]) == 0
        row = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
        assert row.strategy == "sgd-halves" and row.comm_s == 0
    finally:
        key = str(path.resolve())
        if key in LOADED:
            unload_plugin(key)
        refresh()
    assert "halves" not in PAYLOAD_KINDS


def test_a_bad_overlap_declaration_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, "odd.py", BARE.replace('kernels = ("my-pack", "my-unpack")',
                                                   'overlap = frozenset({"buckets"})'))
    before = TRANSPORTS.names()
    assert exit_code(["estimate", "--plugin", str(path), "-s", "adamw@bare-allreduce", "--params", "1e6"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "transport 'bare-allreduce': overlap frozenset({'buckets'}); accepted" in err
    assert TRANSPORTS.names() == before


def test_every_built_in_passes_the_checks_a_plugin_gets():
    for name, cls in TRANSPORTS.items():
        check_transport(name, cls)
    for name, cls in STRATEGIES.items():
        check_strategy(name, cls)


INNER = """
from lionsim.strategies.core.inner import INNER_OPTIMIZERS, InnerRule

INNER_OPTIMIZERS.add("plain-sgd", InnerRule(0, lambda p, g, states, steps, lr, wd, b1, b2: p.add_(g, alpha=-lr)))
"""


def test_a_plugin_may_add_an_inner_optimizer(tmp_path, capsys):
    """--inner-optimizer takes a registered name, a plug-in's too: plain SGD steps as lionsim's sgd
    with no momentum and no weight decay; a bad name lists the registered ones."""
    path = _write(tmp_path, "inner.py", INNER)
    key = load_plugin(path)
    try:
        layout = ParamLayout.of([("w", torch.zeros(3, 4))])
        gen = torch.Generator().manual_seed(1)
        grads = [torch.randn(2, layout.numel, generator=gen) for _ in range(4)]
        finals = []
        for inner in ("plain-sgd", "sgd"):
            cfg = StrategyConfig(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0),
                                 options={"localsgd.inner_optimizer": inner, "localsgd.local_steps": 2})
            comm = SimComm(2)
            strategy = STRATEGIES.get("localsgd")(cfg, layout, comm)
            params = torch.ones(layout.numel)
            strategy.start(params)
            for step, g in enumerate(grads, 1):
                train_step(strategy, TRANSPORTS.get("fp32-allreduce")(), comm, g.clone(), params, step, Clock())
            finals.append(params)
        assert torch.allclose(finals[0], finals[1], atol=1e-7)
        capsys.readouterr()
        assert exit_code(["bench", "--plugin", str(path), "-s", "diloco", "--inner-optimizer", "nadam",
                    "--out", str(tmp_path / "out")]) == 2
        assert "bad --inner-optimizer 'nadam'; accepted: adamw, lion, sgd, plain-sgd" in capsys.readouterr().err
    finally:
        unload_plugin(key)
        refresh()
    from lionsim.strategies.core.inner import INNER_OPTIMIZERS

    assert "plain-sgd" not in INNER_OPTIMIZERS


NOTED = EXAMPLE.read_text().replace("sparse-as-dense", "noted-sad2") + '''


def _footnote(self, spec, workers, workers_per_node=1):
    """Written to the documented signature: footnote(spec, workers, workers_per_node=1) -> str."""
    return f"noted-sad2: a note on {workers} workers."


SparseAsDense.footnote = _footnote
'''


def test_a_footnote_written_to_the_documented_signature_prints_in_bench_and_estimate(tmp_path, capsys):
    """docs/writing-a-strategy.md's contract is footnote(spec, workers, workers_per_node=1): the
    callers pass nothing else (estimate's wording without a bits column is another, optional method)."""
    path = _write(tmp_path, "noted.py", NOTED)
    try:
        out = tmp_path / "bench"
        assert exit_code(["bench", "--plugin", str(path), "-w", "mlp", "--model-size", "tiny", "-n", "2",
                          "--steps", "2", "-b", "8", "--eval-every", "2", "-s", "dgc@noted-sad2", "--out", str(out)]) == 0
        assert json.loads((out / "run.json").read_text())["notes"] == ["noted-sad2: a note on 2 workers."]
        capsys.readouterr()
        assert exit_code(["estimate", "--plugin", str(path), "--model", "gpt2-124m", "-s", "dgc@noted-sad2",
                          "--workers", "4"]) == 0
        assert "noted-sad2: a note on 4 workers." in " ".join(capsys.readouterr().out.split())
    finally:
        if str(path.resolve()) in LOADED:
            unload_plugin(str(path))
        refresh()
