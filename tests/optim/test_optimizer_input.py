"""DistributedLion refuses a bad hyperparameter wherever it is given (the constructor, a parameter
group, add_param_group), naming the value and what is accepted; an option of the whole optimizer
in a group (where it would be ignored) is refused; and ranks holding different parameters raise on
every rank instead of aborting gloo ("Received data size doesn't match expected size")."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lionsim.errors import LionsimError
from lionsim.optim import DistributedLion


def param(n: int = 3) -> nn.Parameter:
    return nn.Parameter(torch.zeros(n))


@pytest.mark.parametrize("kwargs, says", [
    (dict(lr=-1), "invalid learning rate -1; accepted: a finite number > 0"),
    (dict(lr="0.1"), "invalid learning rate '0.1'; accepted: a finite number > 0"),
    (dict(lr=float("nan")), "invalid learning rate nan"),
    (dict(weight_decay=-0.5), "invalid weight_decay -0.5; accepted: a finite number >= 0"),
    (dict(betas=(1.5, 0.99)), "invalid betas (1.5, 0.99); accepted: two numbers (beta1, beta2), each in [0, 1)"),
    (dict(betas=0.9), "invalid betas 0.9"),
    (dict(betas=(0.9,)), "invalid betas (0.9,)"),
    (dict(process_group="x"), "invalid process_group 'x'; accepted: a torch.distributed.ProcessGroup"),
])
def test_a_bad_argument_is_refused_naming_it(kwargs, says):
    with pytest.raises(ValueError) as e:
        DistributedLion([param()], **kwargs)
    assert says in str(e.value)


@pytest.mark.parametrize("group, says", [
    ({"lr": -1}, "invalid learning rate -1 in parameter group 0"),
    ({"betas": (2.0, 0.5)}, "invalid betas (2.0, 0.5) in parameter group 0"),
    ({"vote": "avg"}, "vote in parameter group 0 is the whole optimizer's option"),
    ({"transport": "a2a-1bit", "tie": "random"}, "transport, tie in parameter group 0"),
])
def test_a_bad_group_is_refused_naming_it(group, says):
    with pytest.raises(ValueError) as e:
        DistributedLion([{"params": [param()], **group}], lr=0.1)
    assert says in str(e.value)


def test_add_param_group_checks_the_new_group_and_keeps_the_good_ones():
    opt = DistributedLion([param()], lr=0.1)
    with pytest.raises(ValueError, match="invalid learning rate -5 in parameter group 1"):
        opt.add_param_group({"params": [param(2)], "lr": -5})
    assert len(opt.param_groups) == 1  # the refused group is not kept
    opt.add_param_group({"params": [param(2)], "lr": 0.5, "name": "head"})  # a key of the user's own: kept
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5] and opt.param_groups[-1]["name"] == "head"


def _mismatched(rank: int):
    torch.manual_seed(0)
    model = nn.Linear(4, 3 if rank == 0 else 4)  # rank 1 built another head
    opt = DistributedLion(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    try:
        opt.step()
    except LionsimError as e:
        return str(e)
    return "stepped"


def test_ranks_with_different_parameters_raise_on_every_rank(gloo_group):
    said = gloo_group(2).run(_mismatched)
    assert all(s.startswith("the ranks hold different parameters (group 0: 2 tensors") for s in said), said
    assert "15 parameters on rank 0" in said[0] and "20 parameters on rank 1" in said[1]
