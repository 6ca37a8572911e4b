"""The worked example of docs/time-to-target.md: its cached sweep still records what the page's sweep
command plans (lionsim.docgen.to_target), and its table of measured steps renders from the cache alone.
The estimate blocks run `lionsim estimate` (tests/docs/test_generated_tables.py checks every block, slow tier)."""

from __future__ import annotations

import json
import shutil

import pandas as pd

import lionsim.docgen.to_target as example


def test_the_cached_sweep_still_records_the_pages_command():
    assert example.config_differences() == []


def test_a_cache_of_another_command_is_named(tmp_path, monkeypatch):
    copy = tmp_path / example.CACHE
    shutil.copytree(example.cache_dir(example.CACHE), copy)
    record = json.loads((copy / "sweep.json").read_text())
    record["bench"]["steps"] = 50
    record["grid"]["workers"] = [4, 8]
    (copy / "sweep.json").write_text(json.dumps(record))
    monkeypatch.setattr(example, "cache_dir", lambda name: tmp_path / name)
    differ = example.config_differences()
    assert any(d.startswith("bench.steps: 50 cached, 100 now") for d in differ)
    assert any(d.startswith("grid.workers: [4, 8] cached, [4, 8, 16, 32] now") for d in differ)


def test_the_measured_table_is_the_caches_steps_to_target_with_its_machine_and_date():
    summary = pd.read_csv(example.cache_dir(example.CACHE) / "sweep_summary.csv")
    facts = json.loads((example.cache_dir(example.CACHE) / example.PROVENANCE).read_text())
    body = example.measured()
    flat = " ".join(body.split())
    assert facts["cpu"] in flat and facts["date"] in flat and f"{facts['wall_s'] // 60}m" in flat
    for run, rows in summary.groupby("run", sort=False):
        at4 = rows[rows["workers"] == 4]["steps_to_target"]
        assert f"| {run} | " + ", ".join("-" if s != s else str(int(s)) for s in at4) + " |" in body
