"""CUDA and NCCL paths against the CPU reference. Skipped on machines without a GPU (CI has none);
run on a GPU machine with `python -m pytest -q tests/backends/test_cuda.py`.

NCCL runs one rank per GPU, so on a one-GPU machine the real group has one rank holding W
virtual workers: the transports still combine the local rows and issue real NCCL collectives.
"""

import datetime
import os

import pandas as pd
import pytest
import torch
import torch.distributed as dist

from lionsim import pack_signs, unpack_signs
from lionsim.aggregators import VOTE_RULES
from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.bench import BenchConfig, run_bench
from lionsim.cli.app import main
from lionsim.launch import free_port
from lionsim.optim import DistributedLion
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]
CUDA = torch.device("cuda")


def test_pack_signs_on_cuda_equals_cpu():
    x = torch.randn(5, 1003)
    packed = pack_signs(x.to(CUDA))
    assert packed.device.type == "cuda"
    assert torch.equal(packed.cpu(), pack_signs(x))
    assert torch.equal(unpack_signs(packed, 1003).cpu(), unpack_signs(pack_signs(x), 1003))


@pytest.mark.parametrize("name", VOTE_TRANSPORTS)
@pytest.mark.parametrize("rule", ["mavo", "avg"])
def test_vote_transports_on_cuda_equal_cpu(name, rule):
    if name == "hier-1bit" and rule == "avg":
        pytest.skip("hier-1bit votes by majority only")
    workers, n = 6, 1001
    per_node = 2 if TRANSPORTS.get(name).hierarchical else 1  # 3 nodes of 2: the node groups on CUDA too
    votes = (torch.randint(0, 2, (workers, n), generator=torch.Generator().manual_seed(1)) * 2 - 1).to(torch.int8)
    spec = PayloadSpec(kind="votes", numel=n, rule=VOTE_RULES.get(rule)())
    cpu = TRANSPORTS.get(name)().aggregate(Payload(spec, votes), SimComm(workers, per_node), None)
    gpu = TRANSPORTS.get(name)().aggregate(Payload(spec, votes.to(CUDA)), SimComm(workers, per_node), None)
    assert gpu.device.type == "cuda" and torch.equal(gpu.cpu(), cpu)


@pytest.fixture(scope="module")
def nccl_group():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(free_port())
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1, timeout=datetime.timedelta(seconds=60),
                            device_id=torch.device("cuda", 0))
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("name", VOTE_TRANSPORTS)
def test_vote_transports_over_nccl_equal_the_simulator(name, nccl_group):
    workers, n = 4, 777
    votes = (torch.randint(0, 2, (workers, n), generator=torch.Generator().manual_seed(2)) * 2 - 1).to(torch.int8)
    spec = PayloadSpec(kind="votes", numel=n, rule=VOTE_RULES.get("mavo")())
    comm = ProcessGroupComm(None, local_workers=workers)
    real = TRANSPORTS.get(name)().aggregate(Payload(spec, votes.to(CUDA)), comm, None)
    sim = TRANSPORTS.get(name)().aggregate(Payload(spec, votes), SimComm(workers), None)
    assert torch.equal(real.cpu(), sim)
    log = comm.take_log()
    assert log and all(c.seconds >= 0 and c.nbytes > 0 for c in log)  # real calls, timed


def test_distributed_lion_on_one_nccl_rank_is_lion(nccl_group):
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4).to(CUDA)
    reference = torch.nn.Linear(16, 4).to(CUDA)
    reference.load_state_dict(model.state_dict())
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.1, transport="a2a-1bit")
    ref = DistributedLion(reference.parameters(), lr=0.01, weight_decay=0.1, process_group=None)
    for step in range(3):
        x = torch.randn(8, 16, device=CUDA)
        for m, o in ((model, opt), (reference, ref)):
            o.zero_grad()
            m(x).pow(2).mean().backward()
            o.step()
    for a, b in zip(model.parameters(), reference.parameters()):
        assert torch.equal(a, b)


def test_bench_over_nccl_measures_and_matches_the_simulator(tmp_path, capsys):
    out = tmp_path / "o"
    args = ["bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "4", "--batch-size", "8",
            "--steps", "6", "--eval-every", "3", "-s", "lion", "-s", "dlion-mavo@a2a-1bit",
            "--backend", "nccl", "--ranks", "1", "--compute", "measured", "--out", str(out)]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0, capsys.readouterr().err
    steps = pd.read_csv(out / "steps.csv")
    assert (steps.backend == "nccl").all() and steps.comm_model_s.notna().all() and (steps.compute_s > 0).all()
    sim = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=6, eval_every=3,
                                strategies=["lion", "dlion-mavo@a2a-1bit"], compute="measured")).steps
    assert steps.loss.to_numpy() == pytest.approx(sim.loss.to_numpy(), rel=1e-4)


def test_perf_kernels_times_the_gpu_as_its_preset():
    """`python -m lionsim.perf kernels --kernel-device cuda`: every kernel's case timed on the GPU,
    rows named by the GPU's preset, measured, each rate its counted bytes over a positive time."""
    from lionsim.compute.kernel_table import KERNELS
    from lionsim.perf.kernels import gpu_device, measure

    rows, figures = measure(10**6, 1, "cuda")
    preset = gpu_device()[0]
    assert {r.kernel for r in rows} == set(KERNELS) and {r.device for r in rows} == {preset}
    assert all(r.method == "measured" and r.GBps > 0 and "torch.cuda.synchronize" in r.source for r in rows)
    assert len(figures) == 2 * len(KERNELS)


def test_perf_newton_schulz_times_the_gpu_beside_its_presets_model():
    """`python -m lionsim.perf newton-schulz --kernel-device cuda`: each shape timed on the GPU and
    priced as estimate prices it (FLOPs at the preset's bf16 peak x mfu)."""
    from lionsim.compute import DEVICES
    from lionsim.perf.kernels import gpu_device
    from lionsim.perf.newton_schulz import bench_newton_schulz

    figures = bench_newton_schulz(["gpt2-124m"], 1, "cuda")
    step = {f.metric: f.value for f in figures if f.case.startswith("gpt2-124m step")}
    preset = DEVICES.get(gpu_device()[0])
    assert step["seconds"] > 0 and step["modelled_seconds"] > 0
    assert step["share_of_peak"] == pytest.approx(step["TFLOPs"] * 1e12 / preset.peak_flops)


def test_perf_compute_times_each_mode_on_the_gpu_beside_benchs_model():
    from lionsim.perf.compute import bench_compute

    figures = bench_compute(repeats=1, device="cuda", cases=(("mlp", "tiny", 4),))
    got = {f.metric: f.value for f in figures if f.case.startswith("mlp")}
    assert all(got[f"{m}_seconds"] > 0 for m in ("float32", "tf32", "bf16-autocast"))
    assert got["modelled_seconds"] > 0 and got["float32_priced_seconds"] >= got["modelled_seconds"]
    presets = {(f.case, f.metric): f.value for f in figures if f.case.startswith("gpt2")}
    assert presets[("gpt2-124m x8", "bf16-autocast_seconds")] > 0 and presets[("gpt2-124m x8", "estimate_seconds")] > 0
