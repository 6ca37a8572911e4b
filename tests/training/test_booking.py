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
from lionsim.reports import write_run
from lionsim.reports.columns import TIME_COLUMNS
from lionsim.simulator import worker_gradients
from lionsim.steptime import pass_bytes
from lionsim.strategies import STRATEGIES, flatten_parameters
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
    assert result.meta["config"]["compute"] == "h100" and result.meta["config"]["bucket_mb"] is None  # not given


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"compute": "tpu"}, "bad --compute 'tpu'; accepted: measured, a device: a100 .a100-40gb., a100-40gb"),
    ({"bucket_mb": -1.0}, "bad --bucket-mb -1; accepted: a finite number at least 0.000004"),
])
def test_bad_compute_options(kwargs, message):
    with pytest.raises(LionsimError, match=message):
        BenchConfig(**BASE, **kwargs).validate()


TINY = dict(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=12, eval_every=6)


NON_TIMING = ["strategy", "transport", "workers", "network", "backend", "step", "loss", "wire_bytes",
              "eval_loss", "eval_acc"]


def steps_of(strategies, compute="measured", **kw) -> pd.DataFrame:
    return run_bench(BenchConfig(strategies=list(strategies), compute=compute, **(TINY | kw))).steps


def test_strategy_order_does_not_change_the_booked_compute():
    forward = steps_of(["adamw", "lion", "dlion-mavo"])
    backward = steps_of(["dlion-mavo", "lion", "adamw"])
    # one forward+backward figure per bench, the same on every step of every run
    assert forward.compute_s.nunique() == 1 and backward.compute_s.nunique() == 1
    # a fresh bench measures again (noise may differ), but within a bench the order is irrelevant:
    # every run books the bench's figure, and the non-timing columns are identical either way
    key = ["strategy", "transport", "step"]
    a = forward.sort_values(key).reset_index(drop=True)
    b = backward.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[NON_TIMING], b[NON_TIMING])


@pytest.mark.parametrize("compute", ["measured", "h100"])
def test_lion_and_adamw_differ_only_by_their_update_work(compute):
    steps = steps_of(["adamw@fp32-allreduce", "lion@fp32-allreduce"], compute=compute)
    adamw, lion = (steps[steps.strategy == s].reset_index(drop=True) for s in ("adamw", "lion"))
    same = ["compute_s", "comm_s", "comm_exposed_s", "wire_bytes"]
    if compute != "measured":  # modelled encode/decode: the same (empty) work gives the same figure
        same += ["encode_s", "decode_s"]
    for col in same:
        assert (adamw[col] == lion[col]).all(), col
    if compute != "measured":
        assert (adamw.update_s > lion.update_s).all()  # AdamW passes over two moments, Lion one
        diff = adamw.step_s - lion.step_s
        assert diff.to_numpy() == pytest.approx((adamw.update_s - lion.update_s).to_numpy(), abs=1e-12)


def test_warm_up_steps_are_not_booked():
    steps = steps_of(["lion"], warmup_steps=3)
    # measured parts are medians by step kind: every step of one kind books one figure, so a slow
    # first step (allocator, first-use kernels) cannot show in any row
    for col in ("encode_s", "decode_s", "update_s"):
        assert steps[col].nunique() == 1, col


def test_device_model_times_do_not_depend_on_the_machine():
    a = steps_of(["adamw", "dlion-mavo@a2a-1bit"], compute="h100")
    b = steps_of(["dlion-mavo@a2a-1bit", "adamw"], compute="h100")
    key = ["strategy", "transport", "step"]
    a, b = (f.sort_values(key).reset_index(drop=True) for f in (a, b))
    pd.testing.assert_frame_equal(a[NON_TIMING + TIME_COLUMNS], b[NON_TIMING + TIME_COLUMNS])


@pytest.mark.parametrize("warmup", [0, 3, 50])
def test_medians_by_kind_equal_the_plain_median_of_each_steps_kind(warmup):
    """Each step's booked value against a brute-force median over the steps of its kind past the
    warm-up (all of its kind when none is past it), on 40 steps of three kinds."""
    import random
    import statistics

    from lionsim.training.booking import medians_by_kind

    rng = random.Random(7)
    kinds = [("sync",) if i % 5 == 0 else ("local",) for i in range(40)] + [("rare",)]
    values = [rng.random() for _ in kinds]

    def plain(i: int) -> float:
        same = [j for j, k in enumerate(kinds) if k == kinds[i]]
        late = [values[j] for j in same if j >= warmup]
        return statistics.median(late or [values[j] for j in same])

    assert medians_by_kind(values, kinds, warmup) == [plain(i) for i in range(len(kinds))]


def test_a_node_call_among_ranks_that_hold_a_whole_node_each_prices_without_nvls():
    """bench --backend gloo --network dgx-h100 --workers 16 --ranks 2 with a hierarchical transport
    failed after training: each rank held a node's 8 workers, so its node-scope calls were priced on
    nodes of 1 rank, which a network with nvls refuses. A node of one rank runs no NVLink SHARP."""
    from types import SimpleNamespace

    from lionsim.network import CollectiveCall, load_network, price
    from lionsim.training.booking import _network_of

    dgx = load_network("dgx-h100")
    call = CollectiveCall("all_to_all", 1 << 20, "votes", scope="intra", dtype="uint8")
    whole_nodes = _network_of(call, SimpleNamespace(network=dgx, workers=16, ranks=2))
    assert (whole_nodes.workers_per_node, whole_nodes.nvls) == (1, "")
    assert price(call, 2, whole_nodes).time_s == 0  # a node of one rank: the call has nobody to reach
    shared = _network_of(call, SimpleNamespace(network=dgx, workers=16, ranks=4))  # 4 workers a rank: 2 ranks a node
    assert (shared.workers_per_node, shared.nvls) == (2, dgx.nvls)


def test_a_calibration_that_misses_its_own_calls_says_so():
    """A new user's --calibrate over a shaped veth (a 256 KB token-bucket burst) fitted 0.23 GB/s on a
    0.12 GB/s link and missed 14 of its 15 calls by 63-80%, silently. Its median |error| (hand: the
    middle of the sorted errors) past POOR_FIT is said; a fit within it says nothing."""
    import pandas as pd

    from lionsim.training.results import POOR_FIT, calibration_fit_line

    errors = [-0.71, -0.75, -0.63, -0.80, -0.66, 0.05, -0.70, -0.72, -0.68, -0.74, -0.77, -0.65, -0.69, -0.79, -0.64]
    said = calibration_fit_line(pd.DataFrame({"error": errors}))
    assert sorted(abs(e) for e in errors)[7] == 0.70 > POOR_FIT
    assert said.startswith("this run's calibration misses its own 15 measured calls by a median |error| of 70%")
    assert calibration_fit_line(pd.DataFrame({"error": [0.05, -0.08, 0.02]})) is None
    assert calibration_fit_line(None) is None
