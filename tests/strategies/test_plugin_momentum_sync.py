"""A plug-in takes --momentum-sync as the built-ins do, by subclassing MomentumSyncing with its
per-worker momentum in self.exp_avg (docs/writing-a-strategy.md): a plug-in author found no way to,
and `reads = ("momentum_sync",)`, accepted, synced nothing. The mixin's sync is checked against a
plain average of the workers' momenta; `reads` alone is refused as the file loads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from lionsim.backends import SimComm
from lionsim.plugins import load_plugin
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from tests.helpers.cli import one_line_exit_2, run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "lion_vote.py"


def _variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = EXAMPLE.read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new).replace("from lionsim.strategies import STRATEGIES, Strategy",
                                                   "from lionsim.strategies import STRATEGIES, Strategy\n"
                                                   "from lionsim.strategies.core.momentum_sync import MomentumSyncing"))
    return path


def test_a_plugin_that_subclasses_momentum_syncing_syncs_its_momenta(tmp_path, capsys, forget_plugins):
    path = _variant(tmp_path, "lion_vote_sync.py", "class LionVote(Strategy):", "class LionVote(MomentumSyncing, Strategy):")
    load_plugin(path)
    layout = ParamLayout.of([("w", torch.zeros(2, 3))])
    strategy = STRATEGIES.get("lion-vote")(StrategyConfig(momentum_sync="every:2"), layout, SimComm(3))
    strategy.exp_avg.copy_(torch.arange(18, dtype=torch.float32).view(3, 6))
    strategy.sync(SimComm(3), 2, Clock())  # step 2 syncs under every:2
    assert torch.equal(strategy.exp_avg, torch.arange(18, dtype=torch.float32).view(3, 6).mean(0).expand(3, 6))
    code, _, err = run_cli(["bench", "--plugin", path, "-w", "mlp", "--model-size", "tiny", "-n", "2", "--steps", "4",
                            "-s", "lion-vote", "--momentum-sync", "every:2", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    synced = steps.loc[steps["step"].isin([2, 4]), "wire_bytes"]
    plain = steps.loc[steps["step"].isin([1, 3]), "wire_bytes"]
    assert (synced.to_numpy() > plain.to_numpy()).all()  # the sync's fp32 all-reduce, on its steps only


def test_reads_momentum_sync_without_the_mixin_is_refused_as_it_loads(tmp_path, capsys, forget_plugins):
    path = _variant(tmp_path, "lion_vote_reads.py", "    payload_kind = \"votes\"\n",
                    "    payload_kind = \"votes\"\n    reads = (\"momentum_sync\",)\n")
    one_line_exit_2(["strategies", "--plugin", str(path)], capsys,
                    "strategy 'lion-vote': reads 'momentum_sync', which a strategy takes by subclassing "
                    "lionsim.strategies.core.momentum_sync.MomentumSyncing")
