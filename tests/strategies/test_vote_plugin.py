"""A strategy that sends votes, loaded as a plug-in (examples/plugins/lion_vote.py: Lion's local
update, its sign voted over a2a-1bit by the rule --lion-vote-rule names): its rule against a plain
reference written here; its bytes against the closed form of a 1-bit vote per parameter on a2a-1bit;
end to end through strategies, estimate and bench, loaded from a file or installed (an entry point);
and a votes spec without a rule refused as the file or the entry point loads, in every command, one
line, exit 2."""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.strategy_flags import refresh
from lionsim.engine import train_step
from lionsim.plugins import load_plugin, unload_plugin
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import exit_code, one_line_exit_2
from tests.helpers.installed import fake_distribution

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "lion_vote.py"
RULES = "MajorityVote() (mavo), MeanVote() (avg)"


@pytest.fixture
def plugin():
    """The example loaded for one test, forgotten after it (the registries are the process's)."""
    key = load_plugin(EXAMPLE)
    refresh()
    yield
    unload_plugin(key)
    refresh()


def a2a_bytes(numel: int, workers: int, down_bits: int) -> int:
    """Bytes one worker sends per step on a2a-1bit (docs/strategies.md): its 1-bit votes split in N
    chunks of ceil(P / 8N) bytes, N - 1 of them to the others (all-to-all), its chunk's result in
    d bits to the N - 1 others (all-gather), and the 1-byte abstention flag all-reduced by recursive
    doubling at N = 4, log2 N bytes (docs/time-model.md)."""
    chunk = math.ceil(numel / (8 * workers))  # bytes of one chunk's 1-bit votes
    return (workers - 1) * chunk * (1 + down_bits) + int(math.log2(workers))


def reference(x, grads, lr, wd, betas, rule):
    """Distributed Lion (Liu et al. 2024, Algorithm 1), plain floats: c = b1 m + (1 - b1) g, vote
    sign(c), m = b2 m + (1 - b2) g; x = x (1 - lr wd) - lr rule(sum of the votes)."""
    b1, b2 = betas
    workers, numel = len(grads[0]), len(x)
    m = [[0.0] * numel for _ in range(workers)]
    sign = lambda v: (v > 0) - (v < 0)  # noqa: E731
    for g in grads:
        votes = [[sign(b1 * m[i][j] + (1 - b1) * g[i][j]) for j in range(numel)] for i in range(workers)]
        m = [[b2 * m[i][j] + (1 - b2) * g[i][j] for j in range(numel)] for i in range(workers)]
        total = [sum(v[j] for v in votes) for j in range(numel)]
        step = [sign(s) if rule == "mavo" else s / workers for s in total]
        x = [x[j] * (1 - lr * wd) - lr * step[j] for j in range(numel)]
    return x


@pytest.mark.parametrize("workers,rule", [(1, "mavo"), (3, "mavo"), (4, "avg")])
def test_lion_vote_equals_distributed_lion(plugin, workers, rule):
    layout = ParamLayout.of([("w", torch.zeros(3, 4)), ("b", torch.zeros(3))])
    gen = torch.Generator().manual_seed(workers)
    grads = [torch.randn(workers, layout.numel, generator=gen) for _ in range(4)]
    x0 = torch.randn(layout.numel, generator=gen)
    expected = reference(x0.double().tolist(), [g.double().tolist() for g in grads], 0.01, 0.1, (0.9, 0.99), rule)
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=0.01, weight_decay=0.1, options={"lion-vote.rule": rule})
    strategy = STRATEGIES.get("lion-vote")(cfg, layout, comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(strategy, TRANSPORTS.get("a2a-1bit")(), comm, g.clone(), x, step, Clock())
    assert x.tolist() == pytest.approx(expected, abs=1e-6)


def test_listed_with_a_one_bit_vote_up(plugin, capsys):
    """mlp's 11,018 parameters on 4 workers: 1 bit up; down, MaVo's 3 levels at an even N (2 bits)."""
    assert exit_code(["strategies", "--plugin", str(EXAMPLE), "-w", "mlp", "-n", "4", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    row = frame[(frame.strategy == "lion-vote") & frame.default_transport].iloc[0]
    assert (row.transport, row.sends, row.bits_per_param_up, row.bits_per_param_down) == ("a2a-1bit", "votes", 1, 2)


@pytest.mark.parametrize("rule,down_bits", [("mavo", 2), ("avg", 3)])  # ceil(log2 levels): 3 and N + 1 = 5
def test_estimate_prices_a_one_bit_vote(plugin, capsys, rule, down_bits):
    assert exit_code(["estimate", "--plugin", str(EXAMPLE), "-s", "lion-vote", "--params", "1e8", "--tokens-per-worker",
                      "1000", "--workers", "4", "--lion-vote-rule", rule, "--format", "csv"]) == 0
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    assert (row.strategy, row.transport, row.bits_per_param_up, row.bits_per_param_down) == (
        "lion-vote", "a2a-1bit", 1, down_bits)
    assert row.wire_bytes == a2a_bytes(10**8, 4, down_bits)


def test_bench_books_a_one_bit_vote_every_step(plugin, tmp_path):
    out, workers = tmp_path / "lv", 4
    assert exit_code(["bench", "--plugin", str(EXAMPLE), "-w", "mlp", "-n", str(workers), "--steps", "3", "-b", "8",
                      "--eval-every", "3", "-s", "lion-vote", "--out", str(out)]) == 0
    steps = pd.read_csv(out / "steps.csv")
    numel = int(steps["params"].iloc[0])
    assert steps.bits_per_param_up.tolist() == [1.0] * 3  # nobody abstained: no "voted" plane
    assert steps.wire_bytes.tolist() == [a2a_bytes(numel, workers, 2)] * 3
    assert steps.loss.notna().all()


def _without_rule(tmp_path: Path) -> Path:
    """The example as a user first wrote it: a votes spec with no rule."""
    text = EXAMPLE.read_text()
    assert "numel=self.layout.numel, rule=self.rule)" in text
    path = tmp_path / "scaled_sign.py"
    path.write_text(text.replace("numel=self.layout.numel, rule=self.rule)", "numel=self.layout.numel)"))
    return path


@pytest.mark.parametrize("command", [
    ["strategies"],
    ["estimate", "-s", "lion-vote", "--params", "1e8", "--tokens-per-worker", "1000"],
    ["bench", "-s", "lion-vote", "-w", "mlp", "--steps", "1"],
    ["sweep", "-s", "lion-vote", "-w", "mlp", "-n", "2,4", "--steps", "1"],
])
def test_a_votes_spec_without_a_rule_is_refused_as_it_loads(tmp_path, capsys, command):
    path = _without_rule(tmp_path)
    before = STRATEGIES.names()
    err = one_line_exit_2([command[0], "--plugin", str(path), *command[1:], "--out", str(tmp_path / "out")]
                          if command[0] in ("bench", "sweep") else [command[0], "--plugin", str(path), *command[1:]],
                          capsys, f"plugin {path}: strategy 'lion-vote': its payload_spec() returns a votes spec with "
                                  "no rule; accepted: PayloadSpec(kind='votes', numel=..., rule=R)")
    assert err.rstrip().endswith(RULES)
    assert STRATEGIES.names() == before and not (tmp_path / "out").exists()


def test_a_rule_that_is_no_vote_rule_is_refused(tmp_path, capsys):
    path = tmp_path / "named_rule.py"
    path.write_text(EXAMPLE.read_text().replace("rule=self.rule)", 'rule="mavo")'))
    one_line_exit_2(["strategies", "--plugin", str(path)], capsys, "a votes spec with rule 'mavo', not a VoteRule; "
                    f"accepted: PayloadSpec(kind='votes', numel=..., rule=R), R one of lionsim.aggregators' vote rules: {RULES}")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """install(TEXT): TEXT as the module ep_lion_vote of an installed package announcing it as the
    entry point lion-vote of lionsim.strategies, imported at the registry's next read as in a fresh
    process; forgotten after the test."""
    from lionsim.registry_tables import announced

    def install(text: str) -> None:
        (tmp_path / "ep_lion_vote.py").write_text(text)
        fake_distribution(tmp_path, "lionsim.strategies", {"lion-vote": "ep_lion_vote"})
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(STRATEGIES, "_group", "lionsim.strategies")
        announced.cache_clear()  # the flags come from the registry, not the built-ins' table

    yield install
    STRATEGIES.forget(["lion-vote"])
    sys.modules.pop("ep_lion_vote", None)
    monkeypatch.undo()  # the package gone, the group read, before the flags are built again
    announced.cache_clear()
    refresh()


@pytest.mark.parametrize("command", [
    ["strategies"],
    ["estimate", "-s", "lion-vote", "--params", "1e8", "--tokens-per-worker", "1000"],
    ["bench", "-s", "lion-vote", "-w", "mlp", "--steps", "1"],
    ["sweep", "-s", "lion-vote", "-w", "mlp", "-n", "2,4", "--steps", "1"],
])
def test_an_installed_votes_spec_without_a_rule_is_refused_as_the_registry_loads_it(installed, tmp_path, capsys,
                                                                                     command):
    """The entry point gets the load check `--plugin` gets, when the registry imports it: one line
    naming the entry point and its module, exit 2, before anything runs; it stays refused."""
    from lionsim.errors import LionsimError

    installed(_without_rule(tmp_path).read_text())
    out = ["--out", str(tmp_path / "out")] if command[0] in ("bench", "sweep") else []
    message = ("plugin ep_lion_vote (entry point 'lion-vote' of lionsim.strategies): strategy 'lion-vote': its "
               "payload_spec() returns a votes spec with no rule; accepted: PayloadSpec(kind='votes', numel=..., rule=R)")
    err = one_line_exit_2([*command, *out], capsys, message)
    assert err.rstrip().endswith(RULES) and not (tmp_path / "out").exists()
    assert "lion-vote" not in STRATEGIES._items  # nothing left registered; the next read refuses it again
    with pytest.raises(LionsimError, match="entry point 'lion-vote'"):
        STRATEGIES.names()


def test_an_installed_strategy_that_passes_the_check_lists_and_trains(installed, tmp_path, capsys):
    installed(EXAMPLE.read_text())
    assert exit_code(["strategies", "-w", "mlp", "-n", "4", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    row = frame[(frame.strategy == "lion-vote") & frame.default_transport].iloc[0]
    assert (row.transport, row.sends, row.bits_per_param_up, row.bits_per_param_down) == ("a2a-1bit", "votes", 1, 2)
    out = tmp_path / "lv"
    assert exit_code(["bench", "-w", "mlp", "-n", "4", "--steps", "2", "-b", "8", "--eval-every", "2", "-s",
                      "lion-vote", "--lion-vote-rule", "avg", "--out", str(out)]) == 0
    steps = pd.read_csv(out / "steps.csv")
    assert steps.wire_bytes.tolist() == [a2a_bytes(int(steps["params"].iloc[0]), 4, 3)] * 2  # avg at N = 4: 3 bits


def test_strategies_and_estimate_refuse_a_rule_less_strategy_registered_without_loading(tmp_path, capsys):
    """A module imported by the user's own code registers with no load check (neither `--plugin`
    nor an entry point): `strategies` and `estimate` read its spec and refuse it in one line, not
    an AttributeError in a transport."""
    from lionsim.plugins import LOADED

    path = _without_rule(tmp_path)
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("entry_point_votes", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["entry_point_votes"] = module
    try:
        spec.loader.exec_module(module)  # registers lion-vote, unchecked
        refresh()
        assert not LOADED or all("entry_point_votes" != name for name, _ in LOADED.values())
        message = "strategy 'lion-vote': what it sends is a votes spec with no rule; accepted: "
        one_line_exit_2(["strategies"], capsys, message)
        one_line_exit_2(["estimate", "-s", "lion-vote", "--params", "1e8", "--tokens-per-worker", "1000"], capsys, message)
    finally:
        STRATEGIES.forget(["lion-vote"])
        sys.modules.pop("entry_point_votes", None)
        refresh()


def test_the_docs_show_the_example_as_it_is():
    docs = (EXAMPLE.parents[2] / "docs" / "writing-a-strategy.md").read_text()
    section = docs.split("## A strategy that sends votes", 1)[1]
    assert section.split("```python\n", 1)[1].split("```\n", 1)[0] == EXAMPLE.read_text()
