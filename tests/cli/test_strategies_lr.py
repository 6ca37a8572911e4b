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

