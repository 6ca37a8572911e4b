"""--overlap tensors (lionsim.steptime.overlap): every parameter tensor exchanged on its own as
backward produces it, and the codec run tensor by tensor. Checked against plain references: the
step's wait against Lindley's loop (overlap.serial_end) over the tensors in backward order, the
comm against each tensor's own exchange priced one by one, PowerSGD's per-tensor payloads against
its spec for that one shape, the codec's launches against a loop over every tensor; and end to
end in estimate and in a sim bench."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.compute import MODELS
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network import Link, Network, load_network
from lionsim.network.libraries import MPI
from lionsim.steptime.kernel_passes import each_tensor, tensor_by_tensor
from lionsim.steptime.overlap import OverlapConfig, serial_end, units_exposed
from lionsim.steptime.timeline import StepWork, bucket_spec, exchange_cost, price_step, tensor_specs
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.powersgd import lowrank_spec
from lionsim.transports import TRANSPORTS, PayloadSpec

import torch

NET = Network(name="flat-10g", inter=Link(alpha_s=25e-6, bandwidth_Bps=1.17e9), traits=MPI)


@pytest.mark.parametrize("seed", range(5))
def test_the_wait_is_lindleys_loop_over_the_tensors(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 1000, size=rng.integers(1, 40))
    shares = np.cumsum(sizes) / sizes.sum()
    costs = rng.uniform(0, 0.01, size=len(sizes))
    for window in (0.0, 0.001, 0.05, rng.uniform(0, 0.1)):
        ready = [window * s for s in shares]
        plain = max(serial_end(ready, costs) - window, 0.0)
        assert max(float(units_exposed(shares, costs, window)), 0.0) == pytest.approx(plain)
    windows = rng.uniform(0, 0.1, size=7)  # elementwise, as the stragglers' Monte Carlo asks
    got = units_exposed(shares, costs, windows)
    assert np.allclose(got, [units_exposed(shares, costs, w) for w in windows])


def _specs(strategy: str, shapes, **options):
    numel = sum(math.prod(s) for s in shapes)
    layout = ParamLayout(names=[f"t{i}" for i in range(len(shapes))], numels=[math.prod(s) for s in shapes],
                         segment_ids=torch.repeat_interleave(torch.arange(len(shapes)),
                                                             torch.tensor([math.prod(s) for s in shapes])),
                         shapes=[tuple(s) for s in shapes])

    class One:
        world_size, local_workers, first_worker, ranks = 8, 1, 0, 1

    cls = STRATEGIES.get(strategy)
    made = cls(StrategyConfig(options=options), layout, One())
    return made, made.payload_spec(), numel


def test_powersgd_sends_each_tensor_as_its_own_shape_says():
    shapes = [(64, 3, 7, 7), (64,), (64,), (256, 64, 1, 1), (1000, 2048), (1000,)]
    strategy, spec, numel = _specs("powersgd", shapes, **{"powersgd.rank": 1})
    per = tensor_specs(spec, shapes, strategy)
    for shape, got in zip(shapes, per):
        assert got == lowrank_spec([shape], 1)
        calls = TRANSPORTS.get("lowrank-allreduce")().plan(got, 8)
        assert [c.label for c in calls] == (["uncompressed"] if len(shape) == 1 else ["P", "Q"])
    dense = PayloadSpec(kind="dense", numel=numel)  # a warm-up step: the tensor's share of it
    assert [t.numel for t in tensor_specs(dense, shapes, strategy)] == [math.prod(s) for s in shapes]


def test_a_strategy_that_sends_the_same_for_any_shape_splits_by_share():
    spec = PayloadSpec(kind="dense", numel=1500)
    assert tensor_specs(spec, [(1000,), (500,)]) == [bucket_spec(spec, 1000), bucket_spec(spec, 500)]


def test_a_step_per_tensor_is_its_tensors_exchanges_one_by_one():
    shapes = [(300,), (20, 30), (5000,), (7,), (2000,)]
    transport = TRANSPORTS.get("fp32-allreduce")()
    spec = PayloadSpec(kind="dense", numel=sum(math.prod(s) for s in shapes))
    per = tensor_specs(spec, shapes)
    work = StepWork(forward_s=0.01, backward_s=0.02, encode_s=0.001)
    priced = price_step(transport=transport, spec=spec, workers=8, network=NET,
                        overlap=OverlapConfig(mode="tensors"), tensors=per)
    costs = [exchange_cost(transport, t, 8, NET).time_s for t in reversed(per)]  # backward: the last first
    assert priced.count == len(shapes) and priced.comm.time_s == pytest.approx(sum(costs))
    done = np.cumsum([t.numel for t in reversed(per)]) / spec.numel
    window = work.backward_s + work.encode_s
    ready = [work.forward_s + window * s for s in done]
    plain = max(serial_end(ready, costs), work.forward_s + window) - (work.forward_s + window)
    assert priced.times(work).comm_exposed_s == pytest.approx(plain)


def test_per_tensor_needs_the_tensors_and_a_transport_that_can_bucket():
    spec = PayloadSpec(kind="dense", numel=10)
    with pytest.raises(ValueError):
        price_step(transport=TRANSPORTS.get("fp32-allreduce")(), spec=spec, workers=4, network=NET,
                   overlap=OverlapConfig(mode="tensors"))
    onebit = TRANSPORTS.get("compressed-allreduce")()  # one scale over the flat buffer: after backward
    config = OverlapConfig(mode="tensors")
    assert not config.per_tensor(onebit) and config.label(onebit) == "after"
    assert config.label(TRANSPORTS.get("fp32-allreduce")()) == "tensors"


def test_each_tensor_launches_every_codec_op_once_per_tensor():
    ops = (stream(8.0, "a flat op", 3), Op("topk", 4.0, "per tensor already", 0, per_tensor=1),
           Op("cast", 2.0, "both", 2, per_tensor=1))
    for t in (1, 7, 161):
        assert [op.kernels(t) for op in each_tensor(ops)] == [3 * t, t, 3 * t]
    assert [op.nbytes for op in each_tensor(ops)] == [op.nbytes for op in ops]


def test_the_transports_codec_per_tensor_is_its_kernels_on_each_tensor_alone():
    """PowerSGD's factor products run for each matrix, not for each of the model's tensors: the
    merged list's launches and bytes are a plain loop's over every tensor's own payload."""
    shapes = list(MODELS.get("resnet50").tensor_shapes)
    per = [lowrank_spec([s], 1) for s in shapes]
    params = sum(t.numel for t in per)
    for side in (0, 1):  # pack, unpack
        def ops_of(spec, side=side):
            t = transport_bytes("lowrank-allreduce", spec, 8, 1)
            return t.pack_ops if side == 0 else t.unpack_ops
        merged = tensor_by_tensor(ops_of, per, params)
        launches = sum(op.kernels(1) for spec in per for op in ops_of(spec) if op.nbytes > 0)
        assert sum(op.kernels(len(shapes)) for op in merged if op.nbytes > 0) == launches
        moved = sum(op.nbytes * spec.numel for spec in per for op in ops_of(spec))
        assert sum(op.nbytes * params for op in merged) == pytest.approx(moved)


def _estimate(*args: str) -> pd.DataFrame:
    result = CliRunner().invoke(app, ["estimate", "--format", "csv", *args])
    assert result.exit_code == 0, result.output
    return pd.read_csv(io.StringIO(result.stdout))


def test_estimate_exchanges_resnet50_tensor_by_tensor():
    common = ("--model", "resnet50", "--tokens-per-worker", "64", "--device", "v100", "--workers", "8",
              "--network", "10gbe", "--traits", "mpi", "-s", "sgdm@fp32-allreduce", "-s", "dgc@sparse-allgather")
    tensors, buckets = _estimate(*common, "--overlap", "tensors"), _estimate(*common, "--overlap", "buckets")
    count = len(MODELS.get("resnet50").tensor_shapes)
    assert list(tensors["overlap"]) == ["tensors", "tensors"] and list(tensors["buckets"]) == [count, count]
    # every tensor pays a call's latency and its copies: more than a few 25 MB buckets do
    assert (tensors["comm_s"] > buckets["comm_s"]).all()
    # dgc's codec launches per tensor: encode and decode at least the launch floor of every tensor's kernels
    assert tensors["decode_s"].iloc[1] > buckets["decode_s"].iloc[1]
    assert tensors["decode_s"].iloc[1] >= count * 4 * 10e-6


def test_a_sim_bench_books_per_tensor_exchanges(tmp_path):
    for mode in ("tensors", "buckets"):
        result = CliRunner().invoke(app, ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "4",
                                          "-s", "adamw@fp32-allreduce", "--compute", "v100", "--network", "10gbe",
                                          "--overlap", mode, "--out", str(tmp_path / mode)])
        assert result.exit_code == 0, result.output
    tensors = pd.read_csv(tmp_path / "tensors" / "steps.csv")
    buckets = pd.read_csv(tmp_path / "buckets" / "steps.csv")
    layers = 2 * 3  # the tiny mlp's weights and biases (more tensors than its one bucket)
    net = load_network("10gbe")
    one = exchange_cost(TRANSPORTS.get("fp32-allreduce")(), PayloadSpec(kind="dense", numel=1), 4, net).time_s
    assert tensors["comm_s"].iloc[-1] > buckets["comm_s"].iloc[-1] + (layers - 2) * 0.5 * one


def test_a_real_backend_refuses_per_tensor_in_one_line(tmp_path, capsys):
    from lionsim.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(["bench", "-w", "mlp", "--steps", "1", "--backend", "gloo", "--overlap", "tensors",
              "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "--overlap tensors needs --backend sim" in err


def test_asking_a_strategy_for_each_tensors_payload_leaves_it_as_it_was():
    """muon-dist sizes its own all-gather in spec_for: a per-tensor question must not resize it."""
    shapes = [(128, 64), (64,), (64, 32)]  # the last one alone would size the all-gather smaller
    strategy, spec, _ = _specs("muon-dist", shapes)
    before = strategy.extra_calls(1)
    tensor_specs(spec, shapes, strategy)
    assert strategy.extra_calls(1) == before
