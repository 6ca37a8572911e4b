"""`lionsim strategies` without -w lists the lr and weight decay a bench run of each strategy gets:
bench's default workload's (vit), not the strategy's generic defaults (sgdm's 0.05 beside the
0.2 `bench -s sgdm` trains with)."""

import io

import pandas as pd
import pytest

from lionsim.bench import BenchConfig, plan
from tests.helpers.cli import run_cli


@pytest.mark.parametrize("strategy", ["sgdm", "muloco", "streaming-diloco", "adamw"])
def test_the_lr_column_is_what_bench_trains_with_by_default(strategy, capsys):
    code, out, err = run_cli(["strategies", "--format", "csv"], capsys)
    assert code == 0, err
    listed = pd.read_csv(io.StringIO(out)).drop_duplicates("strategy").set_index("strategy").loc[strategy]
    hyper = plan(BenchConfig(strategies=[strategy])).runs[0].hyper  # what `lionsim bench -s STRATEGY` resolves
    assert (listed["lr"], listed["weight_decay"]) == (pytest.approx(hyper.lr), pytest.approx(hyper.weight_decay))


def test_the_title_says_whose_lr_it_shows(capsys):
    code, out, err = run_cli(["strategies"], capsys)
    assert code == 0, err
    assert "lr and wd as a bench on vit gets them" in " ".join(out.split())


@pytest.mark.parametrize("flag, upstream, default", [("--freeze-steps", "DeepSpeed's freeze_step", "15"),
                                                     ("--powersgd-warmup-steps", "torch's start_powerSGD_iter", "10")])
def test_a_default_that_is_lionsims_own_says_so_beside_the_upstream_name(flag, upstream, default, capsys):
    """The help named the upstream parameter alone, read as if its default were upstream's
    (torch's start_powerSGD_iter is 1,000; DeepSpeed sizes freeze_step to its runs)."""
    code, out, err = run_cli(["bench", "--help"], capsys)
    text = " ".join(out.split())
    at = text.index(flag + " ")
    own = text[at:at + 400]
    assert code == 0 and upstream in own and f"The default {default} is lionsim's, not" in own, own
