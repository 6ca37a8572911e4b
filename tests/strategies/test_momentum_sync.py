"""Selective momentum sync (--momentum-sync, --sync-tensors): which tensors are averaged, the
bytes they send, the bad selections, and the copy a sync step books."""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from tests.helpers.steps import BOUNDS, SEGMENTS, random_grads, run_strategy


class RecordingClock(Clock):
    def __init__(self):
        super().__init__()
        self.scales = []

    def section(self, name, scale=1.0):
        self.scales.append((name, scale))
        return super().section(name, scale)


H100_SYNC = dict(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=4, eval_every=4,
                 strategies=["dlion-mavo@a2a-1bit"], momentum_sync="every:2", compute="h100")


MLP_TINY = {"net.0.weight": 2048, "net.0.bias": 64, "net.2.weight": 640, "net.2.bias": 10}


@pytest.mark.parametrize("rule, synced", [("b", ["b"]), ("min-numel:6", ["w"]), ("w,b", ["w", "b"]), ("all", ["w", "b"])])
def test_selective_momentum_sync_averages_only_the_picked_tensors_and_sends_their_bytes(rule, synced):
    grads = random_grads(3, 2, seed=40)
    strategy, sent = run_strategy("dlion-mavo", "int8-allreduce", grads, torch.zeros(26), momentum_sync="every:2", sync_tensors=rule)
    _, unsynced = run_strategy("dlion-mavo", "int8-allreduce", grads, torch.zeros(26))
    plain, _ = run_strategy("dlion-mavo", "int8-allreduce", grads, torch.zeros(26))
    for name, (lo, hi) in zip(["w", "b"], BOUNDS):
        part = strategy.exp_avg[:, lo:hi]
        if name in synced:
            torch.testing.assert_close(part, plain.exp_avg[:, lo:hi].mean(0).expand_as(part))
        else:
            assert torch.equal(part, plain.exp_avg[:, lo:hi])
    numel = sum(hi - lo for name, (lo, hi) in zip(["w", "b"], BOUNDS) if name in synced)
    assert [c.nbytes for c in sent[1].extra] == [4 * numel] and sent[0].extra == ()


@pytest.mark.parametrize("bad", ["", "min-numel:0", "min-numel:x", "w,,b"])
def test_bad_sync_tensors_is_one_clear_error(bad):
    with pytest.raises(LionsimError, match="accepted: all, min-numel:N"):
        run_strategy("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), momentum_sync="every:1", sync_tensors=bad)


def test_sync_tensors_that_pick_nothing_or_lack_a_sync_fail():
    with pytest.raises(LionsimError, match="picks no tensor of this model; its tensors .*w \\(21\\), b \\(5\\)"):
        run_strategy("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), momentum_sync="every:1",
            sync_tensors="head.*")
    with pytest.raises(LionsimError, match="give --momentum-sync"):
        run_strategy("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), sync_tensors="b")


@pytest.mark.parametrize("workers", [2, 4])
def test_momentum_sync_books_one_workers_share_of_its_copies(workers):
    layout = ParamLayout.of(SEGMENTS)
    strategy = STRATEGIES.get("lioncub-l1")(StrategyConfig(momentum_sync="every:1"), layout, SimComm(workers))
    clock = RecordingClock()
    strategy.sync(SimComm(workers), 1, clock)
    updates = [scale for name, scale in clock.scales if name == "update"]
    assert updates and all(scale == pytest.approx(1 / workers) for scale in updates)
    assert ("collective", 1.0) in clock.scales


@pytest.mark.parametrize("tensors, copy_bytes, kernels", [
    ("all", 8 * sum(MLP_TINY.values()), 1),  # in place: read m, write m / N
    ("net.*.weight", 16 * (2048 + 640), 2),  # gather to a buffer, scatter back / N
])
def test_device_update_books_the_momentum_sync_copy_on_sync_steps_only(tensors, copy_bytes, kernels):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.compute import DEVICES

    steps = run_bench(BenchConfig(**H100_SYNC, sync_tensors=tensors)).steps
    h100 = DEVICES.get("h100")
    copy_s = max(copy_bytes / (h100.memory_bandwidth_Bps * h100.memory_efficiency), kernels * h100.kernel_s)
    update = steps["update_s"].tolist()  # steps 2 and 4 sync
    assert update[0] == update[2] and update[1] == update[3]
    assert update[1] - update[0] == pytest.approx(copy_s, rel=1e-9)


def test_the_sync_copy_is_its_bytes_at_the_memory_bandwidth_past_the_kernel_floor():
    from dataclasses import replace

    from lionsim.compute import DEVICES
    from lionsim.steptime import NO_SYNC, PassBytes, device_work, sync_copy

    device = replace(DEVICES.get("h100"), kernel_s=0.0)
    bandwidth = device.memory_bandwidth_Bps * device.memory_efficiency
    passes = PassBytes(encode=13.0, decode=2.0, update=9.0)
    plain = device_work(1e12, 10**9, passes, device, sync=NO_SYNC)
    for synced, per_param in ((10**9, 8), (10**8, 16)):
        synced_step = device_work(1e12, 10**9, passes, device, sync=sync_copy(synced, 10**9))
        assert synced_step.update_s - plain.update_s == pytest.approx(per_param * synced / bandwidth, rel=1e-12)
        assert (synced_step.encode_s, synced_step.decode_s) == (plain.encode_s, plain.decode_s)


def test_the_documented_schedule_is_the_codes():
    """docs/strategies.md says what schedule:K's K means with the steps it syncs after: the code's."""
    import re
    from pathlib import Path

    from lionsim.forms import MomentumSync

    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "strategies.md").read_text().split())
    for k, upto in ((5, 40), (1, 31)):
        said = re.search(rf"`schedule:{k}`(?: syncs)? after (?:steps )?([\d, ]+)", doc)
        assert said, f"schedule:{k}'s sync steps are not documented"
        steps = [int(x) for x in said.group(1).replace(" ", "").strip(",").split(",") if x]
        assert steps == sorted(MomentumSync.parse(f"schedule:{k}").sync_steps(upto)), k
