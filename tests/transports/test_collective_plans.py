"""What a step prices is what it sent: for every strategy over every transport it may use, the
collectives one real training step issues (recorded on the simulator, their node groups'
included, their sizes by the calls.py convention written out here, their dtypes as handed
over) equal the step's plan (the transport's plan on the network's nodes plus the strategy's
own calls), call by call, in bytes, dtype and scope. `bench --calibrate` measures
the plan's (op, bytes, dtype) on a real group, and the model prices reductions by their
dtype, so a plan that named the wrong dtype or size would measure and price something else."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, valid_transports
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from lionsim.transports.base import plan_on


class Recorder:
    """Notes every collective of one group: (op, bytes by the calls.py convention, dtype, scope)."""

    def __init__(self, calls: list, scope: str) -> None:
        self.calls, self.scope = calls, scope

    def _note(self, op: str, nbytes: int, x: torch.Tensor) -> None:
        self.calls.append((op, nbytes, str(x.dtype).removeprefix("torch."), self.scope))


class RecordingGroup(Recorder):
    """A node group (intra or inter) of the simulator, recorded; sizes within the group."""

    def __init__(self, group, calls: list, scope: str) -> None:
        super().__init__(calls, scope)
        self.group, self.world_size = group, group.world_size

    def all_reduce(self, x, op="sum"):
        self._note("all_reduce", x[0].numel() * x.element_size(), x)
        return self.group.all_reduce(x, op)

    def all_gather(self, x):
        self._note("all_gather", self.world_size * x[0].numel() * x.element_size(), x)
        return self.group.all_gather(x)

    def all_to_all(self, x):
        self._note("all_to_all", x[0].numel() * x.element_size(), x)
        return self.group.all_to_all(x)


class RecordingComm(Recorder, SimComm):
    """The simulator, noting every collective, its node groups' included."""

    def __init__(self, world_size: int, workers_per_node: int = 1) -> None:
        SimComm.__init__(self, world_size, workers_per_node)
        Recorder.__init__(self, [], "world")

    def nodes(self):
        n = SimComm.nodes(self)
        return dataclasses.replace(n, intra=RecordingGroup(n.intra, self.calls, "intra"),
                                   inter=RecordingGroup(n.inter, self.calls, "inter"))

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


PAIRS = [(s, t) for s, cls in STRATEGIES.items() for t in valid_transports(cls)]
LAYOUTS = [(3, 1), (4, 1)]
"""(workers, workers per node); 4 workers as 2 nodes of 2 too for the hierarchical transports, whose calls it changes."""
CASES = [(s, t, w, g) for s, t in PAIRS for w, g in LAYOUTS + ([(4, 2)] if t.startswith("hier") else [])]


@pytest.mark.parametrize(("strategy", "transport", "workers", "per_node"), CASES,
                         ids=[f"{s}@{t}-{w}x{g}" for s, t, w, g in CASES])
def test_a_steps_plan_is_what_it_sent(strategy, transport, workers, per_node):
    cls = STRATEGIES.get(strategy)
    params, layout = flatten_parameters(model())
    sync = "every:2" if cls.has_momentum_sync else "never"  # step 2 also averages the momenta
    comm = RecordingComm(workers, per_node)
    s = cls(StrategyConfig(seed=0, momentum_sync=sync, options={"freeze_steps": 1}), layout, comm)
    t = TRANSPORTS.get(transport)()
    s.start(params)  # a local-step strategy makes its replicas here
    g = torch.Generator().manual_seed(workers)
    for step in (1, 2, 3):
        comm.calls.clear()
        grads = torch.randn(workers, layout.numel, generator=g)
        grads[:, :7] = 0.0  # some parameters get no gradient: abstentions where a transport carries them
        sent = train_step(s, t, comm, grads, params, step, Clock())
        calls = plan_on(t, sent.spec, workers, per_node) + list(sent.extra) if sent.spec is not None else []
        planned = [(c.op, c.nbytes, c.dtype, c.scope) for c in calls]
        # the same calls; a strategy's own may come first (terngrad's scale maximum runs in encode)
        assert sorted(comm.calls) == sorted(planned), f"step {step}"
