"""A plug-in's sweep: run in shards, it merges as its shards print it (`lionsim sweep merge ROOT`,
with no --plugin, loads the plug-in the parts recorded); rerun after the plug-in file was edited, it
does not resume the cells the earlier code trained (sweep.json records each file's SHA-256)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from tests.helpers.cli import run_cli


def test_a_plugin_sweeps_parts_merge_with_the_plugin_they_recorded(tmp_path, capsys, forget_plugins):
    """`sweep merge ROOT`, as a plug-in sweep's shard prints it, loads the plug-in its parts recorded
    (as --resume and --from-run do): it said the parts held options "this lionsim does not know"
    (the plug-in's --randomk-ef-ratio) and to merge "with the lionsim version that ran the sweep"."""
    plugin = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py"
    root = tmp_path / "root"
    for shard in ("1/2", "2/2"):
        code, _, err = run_cli(["sweep", "--plugin", plugin, "-w", "mlp", "--model-size", "tiny", "-s", "adamw",
                                "-s", "randomk-ef", "--workers", "2,4", "--steps", "2", "--shard", shard,
                                "--out", root], capsys)
        assert code == 0, err
    code, out, err = run_cli(["sweep", "merge", root, "--format", "csv"], capsys)
    assert code == 0, err
    merged = pd.read_csv(root / "sweep_summary.csv")
    assert sorted(merged["strategy"].unique()) == ["adamw", "randomk-ef"] and len(merged) == 4


def test_a_rerun_after_the_plugin_was_edited_does_not_take_the_old_cells(tmp_path, capsys, forget_plugins):
    """A user edited the plug-in's default and reran: "every cell was already finished", with the
    earlier code's numbers, and a new worker count trained the new code beside them, unsaid."""
    plugin = tmp_path / "randomk_ef.py"
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py", plugin)
    common = ["sweep", "--plugin", plugin, "-w", "mlp", "--model-size", "tiny", "-s", "adamw", "-s", "randomk-ef",
              "--steps", "2", "--out", tmp_path / "root"]
    argv = [*common, "--workers", "2"]
    assert run_cli(argv, capsys)[0] == 0
    assert run_cli(argv, capsys)[0] == 0  # the same file: resumes (nothing to train)
    before = (tmp_path / "root" / "sweep_summary.csv").read_text()
    plugin.write_text(plugin.read_text().replace("option(0.05", "option(0.06"))
    code, _, err = run_cli([*common, "--workers", "2,4"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"--plugin {plugin.resolve()} changed since the sweep in" in err and "use a new --out" in err
    assert (tmp_path / "root" / "sweep_summary.csv").read_text() == before  # nothing trained, nothing written
