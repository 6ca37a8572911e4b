"""--threads beyond the machine's cores: accepted, with one note where the run measures times."""

from __future__ import annotations

import os

import pytest

from lionsim.training import threads
from lionsim.training.threads import machine_cores, oversubscribed
from tests.helpers.cli import run_cli


def test_machine_cores_is_the_affinity_mask_where_there_is_one(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert machine_cores() == 3  # a container's share, not the 64 the machine has


@pytest.mark.parametrize("counted, cores", [(64, 64), (None, 1)])
def test_machine_cores_falls_back_to_the_cpu_count_where_there_is_no_mask(monkeypatch, counted, cores):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS and Windows keep none
    monkeypatch.setattr(os, "cpu_count", lambda: counted)
    assert machine_cores() == cores  # cpu_count's None (unknown): one core


@pytest.mark.parametrize("threads, measures, cores, noted", [
    (64, True, 2, True), (3, True, 2, True), (2, True, 2, False), (1, True, 1, False),
    (64, False, 2, False),  # every time modelled: the threads set no reported figure
])
def test_the_note_comes_only_past_the_cores_of_a_measuring_run(threads, measures, cores, noted):
    note = oversubscribed(threads, measures, cores)
    assert (note is not None) == noted
    if noted:
        assert note == (f"note: --threads {threads} exceeds the {cores} core{'s' if cores > 1 else ''} this machine "
                        "gives lionsim: the threads will wait for a core and the times this run measures will suffer "
                        f"(--threads {cores} or fewer keeps those waits out)")


@pytest.mark.parametrize("threads, jobs, noted", [(1, 2, False), (1, 3, True), (2, 2, True), (3, 1, True)])
def test_the_threads_of_every_job_at_once_count_against_the_cores(threads, jobs, noted):
    note = oversubscribed(threads, True, 2, jobs=jobs)
    assert (note is not None) == noted
    if noted and jobs > 1:
        assert note.startswith(f"note: --threads {threads} x --jobs {jobs} = {threads * jobs} threads exceed the 2 "
                               "cores this machine gives lionsim")


TINY = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-s", "adamw", "--steps", "2", "--threads", "3"]


@pytest.mark.parametrize("compute, noted", [("measured", True), ("h100", False)])
def test_bench_accepts_more_threads_than_cores_and_notes_it_once_when_it_measures(compute, noted, tmp_path, capsys,
                                                                                  monkeypatch):
    monkeypatch.setattr(threads, "machine_cores", lambda: 2)
    code, _, err = run_cli([*TINY, "--compute", compute, "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: --threads")]
    assert notes == ([oversubscribed(3, True, 2)] if noted else []), err


SWEEP = ["sweep", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-s", "adamw", "--steps", "2", "--threads", "3"]


@pytest.mark.parametrize("compute, noted", [("measured", True), ("h100", False)])
def test_sweep_notes_threads_past_the_cores_once_when_it_measures(compute, noted, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(threads, "machine_cores", lambda: 2)
    code, _, err = run_cli([*SWEEP, "--compute", compute, "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: --threads")]
    assert notes == ([oversubscribed(3, True, 2)] if noted else []), err
