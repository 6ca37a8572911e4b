"""`lionsim regress` on a CPU other than the one that recorded the baselines.

"Another CPU" is emulated, and says so: the checks run in a process with ATEN_CPU_CAPABILITY=
default, so torch dispatches its portable (non-AVX2) kernels, which round differently (their
reductions and exp/log differ in the last bits): `--mode strict` fails there on untouched code
(as the issue saw on an AVX-512 machine), the fingerprint differs, and auto mode picks float.
The float tolerances were measured at --update with injected float noise (lionsim.regress.
noise), never with this kernel set. Must hold: untouched code PASSES there, and each of the
five breaks (weight decay x1.05, lr x1.1, beta2 0.98 for 0.99, a2a-1bit losing 1% of a chunk,
D-Lion's default lr 3.3e-3) FAILS, naming only runs it touches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lionsim.regress import update_suite

CASES = ["mlp-n8-iid", "mlp-n8-defaults"]  # 8 workers: vmap kernels, which the other kernel set rounds differently
BREAKS = Path(__file__).resolve().parents[1] / "helpers" / "regress_breaks.py"
LION = {"lion@fp32-allreduce", "dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit", "dlion-avg@int8-allreduce",
        "lioncub-l1@int8-allreduce"}


@pytest.fixture(scope="session")
def baseline_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("baselines")
    result = update_suite(directory, CASES, seeds=1)  # the float tolerances do not use the seed spread
    assert result.ok, result.problems
    return directory


def on_another_cpu(brk: str, baseline_dir: Path, tmp_path: Path, *args: str) -> tuple[int, str, set[str]]:
    """`lionsim regress` with `brk` applied, on the other kernel set; (exit code, stdout,
    failing case/run pairs from the JUnit file)."""
    junit = tmp_path / f"{brk}.xml"
    done = subprocess.run([sys.executable, str(BREAKS), brk, "regress", "--baseline-dir", str(baseline_dir),
                           "--junit", str(junit), *args],
                          env={**os.environ, "ATEN_CPU_CAPABILITY": "default"}, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode in (0, 1), done.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    failing = {(tc.get("classname").removeprefix("regress."), tc.get("name"))
               for tc in suite.iter("testcase") if tc.find("failure") is not None}
    return done.returncode, done.stdout, failing


@pytest.mark.slow
def test_untouched_code_passes_on_another_cpu_where_strict_fails(baseline_dir, tmp_path):
    code, out, failing = on_another_cpu("none", baseline_dir, tmp_path, "--case", CASES[0], "--mode", "strict")
    assert code == 1 and failing, out  # the emulated CPU really rounds differently
    code, out, failing = on_another_cpu("none", baseline_dir, tmp_path, *(a for c in CASES for a in ("--case", c)))
    text = " ".join(out.split())  # the console wraps its lines
    recorded = json.loads((baseline_dir / "regress.json").read_text())["fingerprint"]["cpu_capability"]
    assert recorded != "DEFAULT"  # the machine that recorded the baseline (AVX2, AVX512, ...) is not the emulated one
    assert "mode: float:" in text and f"cpu_capability {recorded} -> DEFAULT" in text, out  # which mode, and why
    assert (code, failing) == (0, set()), out
    assert "PASS: 2 cases" in out


@pytest.mark.parametrize("brk, case, touched", [
    ("wd-x1.05", "mlp-n8-iid", LION),
    ("lr-x1.1", "mlp-n8-iid", LION),
    ("beta2-0.98", "mlp-n8-iid", LION),
    ("a2a-drops-1pct", "mlp-n8-iid", {"dlion-mavo@a2a-1bit"}),
    ("dlion-default-lr-3.3e-3", "mlp-n8-defaults", {"dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit",
                                                     "dlion-avg@int8-allreduce"}),
])
@pytest.mark.slow
def test_each_break_fails_on_another_cpu(brk, case, touched, baseline_dir, tmp_path):
    code, out, failing = on_another_cpu(brk, baseline_dir, tmp_path, "--case", case)
    assert code == 1 and "mode: float:" in " ".join(out.split()), out
    runs = {run for c, run in failing}
    assert runs and runs <= touched and {c for c, _ in failing} == {case}, out
    summary = out[out.index("FAIL: "):]  # the count, then per case its worst few: short, whatever the count
    assert len(summary.splitlines()) <= 20 and f"  {case}: " in summary
