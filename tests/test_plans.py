"""What a step prices is what it sent: for every strategy over every transport it may use, the
collectives one real training step issues (recorded on the simulator, their sizes by the
calls.py convention written out here, their dtypes as handed over) equal the step's plan
(lionsim.engine.Sent.calls), call by call, in bytes and in dtype. `bench --calibrate` measures
the plan's (op, bytes, dtype) on a real group, and the model prices reductions by their
dtype, so a plan that named the wrong dtype or size would measure and price something else."""

from __future__ import annotations

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, valid_transports
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS


class RecordingComm(SimComm):
    """The simulator, noting every collective: (op, bytes by the calls.py convention, dtype)."""

    def __init__(self, world_size: int) -> None:
        super().__init__(world_size)
        self.calls: list[tuple[str, int, str]] = []

    def _note(self, op: str, nbytes: int, x: torch.Tensor) -> None:
        self.calls.append((op, nbytes, str(x.dtype).removeprefix("torch.")))

    def all_reduce(self, x, op="sum"):  # the full vector
        self._note("all_reduce", x[0].numel() * x.element_size(), x)
        return super().all_reduce(x, op)

    def all_gather(self, x):  # the total output: every worker's row
        self._note("all_gather", self.world_size * x[0].numel() * x.element_size(), x)
        return super().all_gather(x)

    def all_to_all(self, x):  # one worker's whole send buffer
        self._note("all_to_all", x[0].numel() * x.element_size(), x)
        return super().all_to_all(x)

    def gather(self, x, root=0):  # one worker's push
        self._note("ps_push", x[0].numel() * x.element_size(), x)
        return super().gather(x, root)

    def broadcast(self, x, root=0, like=None):  # the vector pulled
        self._note("ps_pull", x.numel() * x.element_size(), x)
        return super().broadcast(x, root, like)


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(13, 17), torch.nn.ReLU(), torch.nn.Linear(17, 5))


CASES = [(s, t) for s, cls in STRATEGIES.items() for t in valid_transports(cls)]


@pytest.mark.parametrize("workers", [3, 4])
@pytest.mark.parametrize(("strategy", "transport"), CASES, ids=[f"{s}@{t}" for s, t in CASES])
def test_a_steps_plan_is_what_it_sent(strategy, transport, workers):
    cls = STRATEGIES.get(strategy)
    params, layout = flatten_parameters(model())
    sync = "every:2" if cls.has_momentum_sync else "never"  # step 2 also averages the momenta
    comm = RecordingComm(workers)
    s = cls(StrategyConfig(seed=0, momentum_sync=sync, freeze_steps=1), layout, comm)
    t = TRANSPORTS.get(transport)()
    g = torch.Generator().manual_seed(workers)
    for step in (1, 2, 3):
        comm.calls.clear()
        grads = torch.randn(workers, layout.numel, generator=g)
        grads[:, :7] = 0.0  # some parameters get no gradient: abstentions where a transport carries them
        sent = train_step(s, t, comm, grads, params, step, Clock())
        planned = [(c.op, c.nbytes, c.dtype) for c in sent.calls(t, workers)]
        # the same calls; a strategy's own may come first (terngrad's scale maximum runs in encode)
        assert sorted(comm.calls) == sorted(planned), f"step {step}"
