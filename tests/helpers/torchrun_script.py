"""A user's own training script with DistributedLion, launched by torchrun (tests/launch/test_torchrun.py).

    torchrun --nproc-per-node 2 --master-addr 127.0.0.1 --master-port PORT tests/helpers/torchrun_script.py OUT_DIR

Each rank trains a small model on its own batches with every vote transport and both vote
rules, then saves its parameters to OUT_DIR/rank{R}.pt. Two models: `plain` (every rank
uses every layer) and `branch` (rank 1's forward skips `branch`). Both carry a `spare`
layer no rank ever uses. Not collected by pytest (no test_ prefix); the test imports the
model and batches from here to run the simulator on the same data.
"""

from __future__ import annotations

import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

from lionsim.group.join import leave
from lionsim.optim import DistributedLion
from lionsim.transports import TRANSPORTS

VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]
VOTES = ("mavo", "avg")
MODELS = ("plain", "branch")
CASES = [(m, t, v) for m in MODELS for t in VOTE_TRANSPORTS for v in VOTES
         if not (t == "hier-1bit" and v == "avg")]  # hier-1bit votes by majority only
STEPS = 4
HYPER = dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.99))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(5, 8)
        self.branch = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)
        self.spare = nn.Linear(3, 3)  # never used by any rank: DistributedLion must leave it alone

    def forward(self, x: torch.Tensor, use_branch: bool) -> torch.Tensor:
        h = torch.tanh(self.body(x))
        if use_branch:
            h = h + torch.tanh(self.branch(h))
        return self.head(h)


def make_model() -> Net:
    torch.manual_seed(0)
    return Net()


def uses_branch(model_kind: str, rank: int) -> bool:
    return model_kind == "plain" or rank == 0


def batch_for(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(8, 5, generator=g), torch.randn(8, 1, generator=g)


def loss_of(model: Net, model_kind: str, rank: int, step: int) -> torch.Tensor:
    x, y = batch_for(rank, step)
    return (model(x, uses_branch(model_kind, rank)) - y).pow(2).mean()


def train(model_kind: str, transport: str, vote: str, rank: int) -> dict[str, torch.Tensor]:
    model = make_model()
    opt = DistributedLion(model.parameters(), vote=vote, transport=transport, **HYPER)
    for step in range(STEPS):
        opt.zero_grad()  # set_to_none: rank 1's skipped branch has grad None
        loss_of(model, model_kind, rank, step).backward()
        opt.step()
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def main(out_dir: str) -> None:
    torch.set_num_threads(1)  # two ranks share two cores
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))  # torchrun's env://
    rank = dist.get_rank()
    results = {(m, t, v): train(m, t, v, rank) for m, t, v in CASES}
    torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))
    dist.barrier()  # gloo: no rank tears the group down while a peer still uses it
    leave()  # a pause first: the teardown races a peer still finishing the barrier


if __name__ == "__main__":
    main(sys.argv[1])
