"""A plug-in sweep run in shards merges as its shards print it: `lionsim sweep merge ROOT`, with
no --plugin, loads the plug-in the parts recorded."""

from __future__ import annotations

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
