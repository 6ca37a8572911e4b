"""A run records the CPU its losses were computed on (the model and the kernels torch dispatches to:
another CPU rounds differently), and its report shows them; an older run's report says they were
not recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from lionsim.cli.app import main


def _model_name() -> str:
    """The plain reference: /proc/cpuinfo's first "model name" line."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return " ".join(line.split(":", 1)[1].split())
    pytest.skip("no model name in /proc/cpuinfo")


def _environment(run: Path) -> dict[str, str]:
    with pytest.raises(SystemExit) as done:
        main(["report", str(run)])
    assert done.value.code == 0
    text = (run / "report.md").read_text()
    section = text.split("## Environment", 1)[1].split("\n## ", 1)[0]
    cells = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    return {k.strip(): v.strip() for k, v in cells}


def test_the_run_records_the_cpu_and_its_report_shows_it(tiny_run, tmp_path):
    run = tmp_path / "r"
    shutil.copytree(tiny_run, run)
    host = json.loads((run / "run.json").read_text())["host"]
    want = {"cpu_model": _model_name(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    assert {k: host[k] for k in want} == want
    env = _environment(run)
    assert {k: env[k] for k in want} == want


def test_a_run_from_before_says_not_recorded(tiny_run, tmp_path):
    run = tmp_path / "r"
    shutil.copytree(tiny_run, run)
    meta = json.loads((run / "run.json").read_text())
    for key in ("cpu_model", "cpu_capability"):
        meta["host"].pop(key, None)
    (run / "run.json").write_text(json.dumps(meta))
    env = _environment(run)
    assert (env["cpu_model"], env["cpu_capability"]) == ("not recorded", "not recorded")
