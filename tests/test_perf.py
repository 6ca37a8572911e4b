"""`python -m lionsim.perf` on tiny sizes: it runs, prints, and writes every figure it printed
to the CSV, each ratio computed from its two times (no timing is asserted: figures only)."""

import csv
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    path = tmp_path_factory.mktemp("perf") / "perf.csv"
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", "codecs", "votes", "--numel", "4096",
                          "--repeats", "1", "--vote-workers", "2,3", "--csv", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "unpack_signs" in out.stdout and "bit-sliced" in out.stdout
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_figure_has_a_value_and_says_how(figures):
    assert {r["benchmark"] for r in figures} == {"codecs", "votes"}
    for r in figures:
        assert float(r["value"]) > 0 and r["how"], r


def test_ratios_are_computed_from_the_times_beside_them(figures):
    by_case = {}
    for r in figures:
        by_case.setdefault((r["benchmark"], r["case"]), {})[r["metric"]] = float(r["value"])
    for (bench, case), m in by_case.items():
        if bench == "codecs":
            assert m["numpy_over_ours"] == pytest.approx(m["numpy_s"] / m["ours_s"]), case
        else:
            assert m["unpack_sum_over_bitslice"] == pytest.approx(m["unpack_sum_s"] / m["bitslice_s"]), case
    # both settings were run: one thread, and the default threads beside a busy core
    assert any("1 thread" in c for _, c in by_case) and any("busy" in c for _, c in by_case)


def test_unknown_benchmark_is_refused():
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", "nope"], capture_output=True, text=True)
    assert out.returncode == 2 and "nope" in out.stderr
