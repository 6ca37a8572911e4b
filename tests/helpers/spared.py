"""A model some batches never touch (embedding rows 6..11 no batch uses, a layer no forward calls)
and a bare workload around it, trained on the simulator: what strategies do to parameters
without a gradient."""

import torch

from lionsim.backends import SimComm
from lionsim.runs import RunSpec
from lionsim.strategies import StrategyConfig
from lionsim.strategies.core.given import flags
from lionsim.training.loop import Place, train_run


class Spared(torch.nn.Module):
    """An embedding whose rows 6..11 no batch uses, a head, and a layer no forward calls."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(12, 4)
        self.head = torch.nn.Linear(4, 1)
        self.spare = torch.nn.Linear(3, 3)  # never used: its grad stays None

    def forward(self, idx):
        return self.head(self.emb(idx)).squeeze(-1)


class Tiny:
    """Just what lionsim.training.loop.train_run asks of a workload."""

    gradients = "loop"

    def __init__(self) -> None:
        self.model = Spared()

    def batches(self, step, workers, device=None):
        return [(torch.randint(0, 6, (8,), generator=torch.Generator().manual_seed(100 * step + w)), None)
                for w in workers]

    def loss(self, model, inputs, targets):
        return model(inputs).pow(2).mean()

    def evaluate(self, model):
        return {}


def train(strategy: str, transport: str, workers: int, steps: int, **cfg) -> dict[str, torch.Tensor]:
    options = {k: cfg.pop(k) for k in list(cfg) if k in flags()}  # strategy options (their modules' Options)
    wl = Tiny()
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    record = train_run(RunSpec(strategy, transport), workload=wl, initial=initial, place=Place(SimComm(workers)),
                       strategy_cfg=StrategyConfig(**cfg, options=options), steps=steps, eval_every=10**6)
    assert record.diverged_at is None
    return {k: v.detach().clone() for k, v in wl.model.state_dict().items()}


INITIAL = {k: v.clone() for k, v in Spared().state_dict().items()}
