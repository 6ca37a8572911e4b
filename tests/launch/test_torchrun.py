"""DistributedLion in a user's own script under torchrun (2 gloo ranks) against the simulator.

The script (tests/helpers/torchrun_script.py) trains with every vote transport and both vote rules;
here the simulator replays the same per-rank batches. Votes are exact, so the replicas must
match each other and the simulator bit for bit.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.launch import free_port
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, frozen_positions, gather_grads
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.torchrun_script import CASES, HYPER, STEPS, loss_of, make_model

RANKS = 2
SCRIPT = Path(__file__).resolve().parents[1] / "helpers" / "torchrun_script.py"


@pytest.fixture(scope="session")
def rank_params(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("torchrun")
    # `python -m torch.distributed.run` is the torchrun entry point, run by this interpreter.
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={RANKS}",
           "--master-addr=127.0.0.1", f"--master-port={free_port()}", str(SCRIPT), str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its own group: a hang is killed with every rank
    try:
        output, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"torchrun hung:\n{output[-3000:]}")
    assert proc.returncode == 0, output[-3000:]
    return [torch.load(out / f"rank{r}.pt") for r in range(RANKS)]


def simulated(model_kind: str, transport: str, vote: str) -> dict[str, torch.Tensor]:
    """Algorithm 1 in one process on the ranks' batches; rank 1's skipped branch has a zero
    gradient, and `spare`, with a gradient on no rank, is left alone as the loop leaves it."""
    model = make_model()
    params, layout = flatten_parameters(model)
    comm = SimComm(RANKS)
    strategy = STRATEGIES.get(f"dlion-{vote}")(StrategyConfig(**HYPER), layout, comm)
    grads = torch.zeros(RANKS, layout.numel)
    for step in range(STEPS):
        used = torch.zeros(layout.segments, dtype=torch.bool)
        for rank in range(RANKS):
            model.zero_grad(set_to_none=True)
            loss_of(model, model_kind, rank, step).backward()
            used |= torch.tensor(gather_grads(model, grads[rank]))  # zeros where the rank has no gradient
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock(),
                   frozen_positions(layout, used))
    return {name: p.detach() for name, p in model.named_parameters()}


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_ranks_stay_identical_and_equal_the_simulator(rank_params, case):
    first, second = rank_params[0][case], rank_params[1][case]
    for name in first:
        assert torch.equal(first[name], second[name]), f"ranks differ on {name}"
    expected = simulated(*case)
    initial = dict(make_model().named_parameters())
    for name, p in first.items():
        assert torch.equal(p, expected[name]), f"{name} differs from the simulator"
        if name.startswith("spare"):  # no gradient on any rank: skipped, not even decayed
            assert torch.equal(p, initial[name]), name
        else:
            assert not torch.equal(p, initial[name]), f"{name} never moved"
