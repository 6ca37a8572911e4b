"""`lionsim.cli.main(argv)`, called from Python (a test, a notebook), ends as a shell command does:
the plug-ins its --plugin loaded go with it. A strategy one call registered trained the next call's
`-s` without --plugin and wrote a run.json naming no plug-in, which `--config` and `--from-run` then
could not replay; on gloo the ranks, which load only what is recorded, died with tracebacks."""

from __future__ import annotations

from pathlib import Path

from lionsim.plugins import LOADED
from lionsim.strategies import STRATEGIES
from tests.helpers.cli import one_line_exit_2, run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py"
BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "-s", "randomk-ef"]


def test_a_second_call_knows_only_its_own_plugins(tmp_path, capsys):
    before = (set(LOADED), STRATEGIES.names())
    code, _, err = run_cli([*BENCH, "--plugin", EXAMPLE, "--out", tmp_path / "a"], capsys)
    assert code == 0, err
    assert (set(LOADED), STRATEGIES.names()) == before  # gone with the call
    one_line_exit_2([*BENCH, "--out", tmp_path / "b"], capsys, "randomk-ef")  # as the shell refuses it
    assert not (tmp_path / "b").exists()
    # what the first call wrote replays, its plug-in reloaded from its record
    code, _, err = run_cli(["bench", "--config", tmp_path / "a" / "run.json", "--out", tmp_path / "c"], capsys)
    assert code == 0, err
