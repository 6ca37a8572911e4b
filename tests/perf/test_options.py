"""`python -m lionsim.perf`'s options act where they are given: each is read by the benchmarks
it names, and one given where none of them runs is refused in one line (it changed nothing)."""

import csv

import pytest

from lionsim.perf.__main__ import main


def _run(argv, capsys):
    with pytest.raises(SystemExit) as raised:
        main(argv)
    return raised.value.code, capsys.readouterr()


TINY = ["--numel", "64", "--repeats", "1"]  # where the option would be ignored, the run is short


@pytest.mark.parametrize("argv,flag", [
    (["codecs", *TINY, "--profile", "25gbe"], "--profile"),
    (["votes", *TINY, "--vote-workers", "2", "--steps", "9"], "--steps"),
    (["spread", "--repeats", "1", "--spread-workers", "2", "--vote-workers", "4"], "--vote-workers"),
    (["votes", *TINY, "--vote-workers", "2", "--executors", "jobs1"], "--executors"),
    (["votes", *TINY, "--vote-workers", "2", "--kernel-table", "k.csv"], "--kernel-table"),
])
def test_an_option_no_chosen_benchmark_reads_is_refused(tmp_path, capsys, argv, flag):
    code, out = _run([*argv, "--csv", str(tmp_path / "perf.csv")], capsys)
    lines = out.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {flag} applies to"), out.err
    assert out.out == "" and not (tmp_path / "perf.csv").exists()


def test_repeats_acts_on_the_votes_benchmark(tmp_path):
    """votes timed a fixed 3 repetitions whatever --repeats said."""
    path = tmp_path / "perf.csv"
    main(["votes", "--numel", "64", "--vote-workers", "3", "--repeats", "2", "--csv", str(path)])
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["how"].startswith("median of 2;") for r in rows), rows


@pytest.mark.parametrize("argv", [["gradients"], ["sim", "--mlp-workers", "1"]])
def test_a_worker_count_that_cannot_fit_is_one_line_before_anything_runs(tmp_path, capsys, argv, available_memory):
    """--workers 100000000 ran into torch's allocator (a traceback) instead of bench's memory guard."""
    available_memory(16 * 10**9)
    code, out = _run([*argv, "--workloads", "mlp", "--size", "tiny", "--workers", "100000000",
                      "--csv", str(tmp_path / "perf.csv")], capsys)
    lines = out.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, out.err
    assert lines[0].startswith("error: mlp/tiny at N = 100000000 needs about") and "but 16.0 GB is available" in lines[0]
    assert out.out == "" and not (tmp_path / "perf.csv").exists()


def test_a_repeatable_option_collects_every_value_and_is_refused_where_unread(tmp_path, capsys):
    """`fidelity --link loopback --link 1gbit` (docs/time-model.md's command) ended in a traceback: the
    namespace main parses into holds a sentinel for every option, which argparse's append cannot extend."""
    import argparse

    from lionsim.perf.__main__ import _UNSET, READ_BY, _check_read, parser

    p = parser()
    args = p.parse_args(["fidelity", "--link", "loopback", "--link", "1gbit"],
                        argparse.Namespace(**dict.fromkeys(READ_BY, _UNSET)))
    _check_read(args, p)
    assert args.link == ["loopback", "1gbit"]
    unread = p.parse_args(["fidelity"], argparse.Namespace(**dict.fromkeys(READ_BY, _UNSET)))
    _check_read(unread, p)
    assert unread.link is None  # the default: fidelity takes loopback
    code, out = _run(["votes", *TINY, "--vote-workers", "2", "--link", "1gbit", "--csv", str(tmp_path / "p.csv")],
                     capsys)
    assert code == 2 and out.err.startswith("error: --link applies to fidelity"), out.err
