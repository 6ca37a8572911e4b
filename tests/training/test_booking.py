"""`lionsim bench --compute DEVICE` and the overlap booking in bench's step rows."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from lionsim.aggregators import MajorityVote
from lionsim.bench import BenchConfig, run_bench
from lionsim.compute import DEVICES, compute_time, memory_pass_time
from lionsim.errors import LionsimError
from lionsim.steptime import pass_bytes
from lionsim.strategies import STRATEGIES
from lionsim.reports import write_run
from lionsim.simulator import worker_gradients
from lionsim.strategies import flatten_parameters
from lionsim.transports import PayloadSpec
from lionsim.workloads import WorkloadConfig, build_workload

def ops_of(run) -> list:
    """Every aten op `run()` dispatches, recorded by a plain dispatch mode (the kernel count's reference)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    with Record() as rec:
        run()
    return rec.ops


BASE = dict(workload="mlp", model_size="tiny", workers=2, batch_size=8, steps=2, eval_every=2,
            strategies=["adamw", "dlion-mavo"])


def test_device_compute_keeps_the_losses_and_models_the_times():
    measured = run_bench(BenchConfig(**BASE, compute="measured")).steps
    on_h100 = run_bench(BenchConfig(**BASE, compute="h100")).steps
    assert on_h100["loss"].tolist() == measured["loss"].tolist()  # counting FLOPs changes nothing

    # the FLOPs of one worker's forward + backward, counted independently
    torch.manual_seed(0)
    workload = build_workload(WorkloadConfig(name="mlp", workers=2, batch_size=8, seed=0, size="tiny"))
    _, layout = flatten_parameters(workload.model)
    with FlopCounterMode(display=False) as counter:
        worker_gradients(workload.model, workload.loss, workload.batches(0), torch.zeros(2, layout.numel))
    h100 = DEVICES.get("h100")
    flops = counter.get_total_flops() / 2
    inputs, targets = workload.batches(0)[0]
    kernels = sum(not f.is_view for f in ops_of(lambda: workload.loss(workload.model, inputs, targets).backward()))
    dlion = on_h100[on_h100["strategy"] == "dlion-mavo"]
    # a model this small is launch-bound: its kernels x the per-kernel floor, not its FLOPs
    assert kernels * h100.kernel_s > compute_time(flops, h100)
    assert dlion["compute_s"].tolist() == pytest.approx([kernels * h100.kernel_s] * 2)
    passes = pass_bytes(STRATEGIES.get("dlion-mavo"), "int8-allreduce", PayloadSpec(kind="votes", numel=layout.numel,
                                                                     rule=MajorityVote()), 2)
    for part in ("encode", "update"):  # each pass at least one kernel's floor, and at least its bytes' time
        booked = dlion[f"{part}_s"].tolist()
        floor = memory_pass_time(getattr(passes, part) * layout.numel, h100)
        assert booked[0] == booked[1] and booked[0] >= max(floor, h100.kernel_s)
        assert booked[0] / h100.kernel_s == pytest.approx(round(booked[0] / h100.kernel_s))  # whole kernels

    # one bucket (a tiny model): nothing overlaps, the step adds the exposed communication
    for frame in (measured, on_h100):
        assert (frame["comm_exposed_s"] == frame["comm_s"]).all()
        parts = frame[["compute_s", "encode_s", "comm_exposed_s", "decode_s", "update_s"]].sum(axis=1)
        assert frame["step_s"].tolist() == pytest.approx(parts.tolist())


def test_small_buckets_overlap_in_bench():
    steps = run_bench(BenchConfig(**{**BASE, "strategies": ["adamw"]}, compute="a100", bucket_mb=1e-4)).steps
    assert (steps["comm_exposed_s"] < steps["comm_s"]).all()
    parts = steps[["compute_s", "encode_s", "comm_exposed_s", "decode_s", "update_s"]].sum(axis=1)
    assert steps["step_s"].tolist() == pytest.approx(parts.tolist())
    assert steps["sim_time_s"].tolist() == pytest.approx(steps["step_s"].cumsum().tolist())


def test_steps_csv_carries_comm_exposed(tmp_path):
    result = run_bench(BenchConfig(**{**BASE, "steps": 1, "eval_every": 1}, compute="h100"))
    write_run(tmp_path, result.steps, result.summary, result.meta)
    header = pd.read_csv(tmp_path / "steps.csv").columns.tolist()
    assert "comm_exposed_s" in header
    assert result.meta["config"]["compute"] == "h100" and result.meta["config"]["bucket_mb"] == 25.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"compute": "tpu"}, "bad --compute 'tpu'; accepted: measured or a device: v100, a10g"),
    ({"bucket_mb": -1.0}, "bad --bucket-mb -1.0"),
])
def test_bad_compute_options(kwargs, message):
    with pytest.raises(LionsimError, match=message):
        BenchConfig(**BASE, **kwargs).validate()
