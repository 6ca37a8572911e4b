"""`python -m lionsim.perf` on tiny sizes: it runs, prints, and writes every figure it printed
to the CSV, each ratio computed from its two times (no timing is asserted: figures only)."""

import csv
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # several processes, or many trainings: pytest -m slow


@pytest.fixture(scope="session")
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


@pytest.mark.parametrize("args,named", [
    (["nope"], "nope"),
    (["votes", "--csv", "{tmp}/no/such/dir/x.csv"], "--csv"),
    (["votes", "--csv", "{tmp}"], "--csv"),
    (["votes", "--csv", ""], "--csv"),
    (["codecs", "--numel", "0"], "--numel"),
    (["codecs", "--repeats", "0"], "--repeats"),
    (["votes", "--vote-workers", "0"], "--vote-workers"),
    (["sim", "--workers", "2,-1"], "--workers"),
    (["sim", "--steps", "3"], "--steps"),
    (["sim", "--workloads", "foo"], "foo"),
    (["sim", "--strategy", "foo"], "foo"),
    (["sim", "--size", "huge"], "huge"),
    (["sweep", "--executors", "jobs1,nope"], "nope"),
    (["sweep", "--sweep-steps", "0"], "--sweep-steps"),
    (["sweep", "--runs", "0"], "--runs"),
])
def test_bad_input_is_one_line_before_anything_runs(tmp_path, args, named):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", *args], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and named in lines[0], out.stderr
    assert out.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == []  # nothing ran, nothing left


def test_spread_benchmark_prints_the_extra_time_per_step(tmp_path):
    """The --compute-spread booking benchmark: its extra ms per step is the difference of the two beside it."""
    path = tmp_path / "perf.csv"
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", "spread", "--spread-workers", "2,3", "--repeats", "1",
                          "--csv", str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "extra ms/step" in out.stdout
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], {})[r["metric"]] = float(r["value"])
    assert set(by_case) == {"N=2", "N=3"}
    for m in by_case.values():
        assert m["extra_ms_per_step"] == pytest.approx(m["uneven_ms_per_step"] - m["even_ms_per_step"])
        assert m["even_ms_per_step"] > 0 and m["uneven_ms_per_step"] > 0


def test_sweep_throughput_figures_are_computed_from_the_walls(tmp_path):
    """One executor, one run, 2 steps (a whole sweep command costs seconds even so): cells per
    hour come from the wall time, and the load average is recorded beside it."""
    path = tmp_path / "perf.csv"
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", "sweep", "--sweep-steps", "2", "--runs", "1",
                          "--executors", "jobs1", "--csv", str(path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    m = {r["metric"]: float(r["value"]) for r in rows}
    assert {r["case"] for r in rows} == {"sweep jobs1"} and all("load average" in r["how"] for r in rows)
    assert m["cells_per_hour"] == pytest.approx(8 / m["wall_s"] * 3600) and m["speedup_over_jobs1"] == 1.0
    assert "cells/h" in out.stdout
