"""The one run loop on real gloo ranks against the simulator, which is the reference.

Same seed and configuration: the same losses and the same final parameters, for 2 ranks x 1
worker and 2 ranks x 2 virtual workers (4 workers over 2 ranks), every deterministic strategy
and every vote transport. Exact, except where the maths differs: a float all-reduce of w > 1
rows per rank adds (g0 + g1) + (g2 + g3) where the simulator adds ((g0 + g1) + g2) + g3, so
dense gradients agree to float32 rounding there (stated tolerance below).
"""

from __future__ import annotations

import pytest
import torch

from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.bench import BenchConfig, plan
from lionsim.strategies import STRATEGIES
from lionsim.training.loop import Place, train_run
from lionsim.training.runner import Runner

VOTE_RUNS = ["dlion-mavo@a2a-1bit", "dlion-mavo@allgather-1bit", "dlion-mavo@pbit-allreduce",
             "dlion-mavo@param-server", "dlion-avg@a2a-1bit", "dlion-avg@pbit-allreduce"]
RUNS = STRATEGIES.names() + VOTE_RUNS  # terngrad and qsgd too: they draw per virtual worker
DENSE = {"adamw", "lion", "sgdm", "onebit-adam", "powersgd", "localsgd", "diloco", "diloco-sign", "muon", "muon-dist", "dion", "muloco"}
"""Float sums of several local rows (diloco-sign: its per-tensor scale is one; dion: its low-rank factors; muloco: its fp32 vectors)."""
STEPS = 4


def config(workers: int) -> BenchConfig:
    return BenchConfig(workload="mlp", model_size="tiny", workers=workers, batch_size=8, steps=STEPS,
                       eval_every=STEPS, strategies=RUNS, compute="measured", backend="gloo",
                       options={"local_steps": 2, "powersgd_warmup_steps": 1})


def train_all(bench: Runner) -> dict[str, tuple[list[float], torch.Tensor]]:
    """Each run's per-step losses and final parameters."""
    out = {}
    for planned in bench.plan.runs:
        record = train_run(planned.run, workload=bench.workload, initial=bench.initial, place=bench.place,
                           strategy_cfg=planned.strategy, steps=STEPS, eval_every=STEPS)
        params = torch.cat([p.detach().reshape(-1) for p in bench.workload.model.parameters()]).clone()
        out[planned.label] = ([s.loss for s in record.steps], params)
    return out


def rank_main(rank: int, ranks: int, workers: int) -> dict:
    place = Place(ProcessGroupComm(None, local_workers=workers // ranks))
    return train_all(Runner(plan(config(workers)), place))


@pytest.fixture(scope="session", params=[(2, 2), (4, 2)], ids=["2x1", "2x2"])
def results(request, gloo_group):
    workers, ranks = request.param
    on_ranks = gloo_group(ranks).run(rank_main, ranks, workers)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the ranks and `lionsim bench` train: a GEMM's sums split by thread count
    try:
        sim = train_all(Runner(plan(config(workers)), Place(SimComm(workers))))
    finally:
        torch.set_num_threads(threads)
    return workers, sim, on_ranks


def test_ranks_hold_identical_replicas(results):
    _, _, ranks = results
    for label, (losses, params) in ranks[0].items():
        for other in ranks[1:]:
            assert other[label][0] == losses and torch.equal(other[label][1], params), label


def test_gloo_equals_the_simulator(results):
    workers, sim, ranks = results
    for label, (losses, params) in sim.items():
        real_losses, real_params = ranks[0][label]
        if label.split("@")[0] in DENSE and workers // len(ranks) > 1:  # float sum order (module doc)
            assert real_losses == pytest.approx(losses, rel=1e-6), label
            torch.testing.assert_close(real_params, params, rtol=1e-5, atol=1e-6)
        else:
            assert real_losses == losses, label
            assert torch.equal(real_params, params), label
