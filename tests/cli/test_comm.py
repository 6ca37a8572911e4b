"""`lionsim networks` and `lionsim comm` through the real entry point."""

from __future__ import annotations

import pandas as pd
import pytest

import lionsim.cli.network_cmds  # noqa: F401  (registers the commands until lionsim.cli imports it)
from lionsim.network import COMM_COLUMNS
from tests.helpers.cli import run_cli


def test_networks_lists_every_preset(capsys):
    code, out, _ = run_cli(["networks"], capsys)
    assert code == 0
    for name in ("1gbe", "10gbe", "25gbe", "100gbe", "ib-hdr", "ib-ndr", "nvlink4", "dgx-h100"):
        assert name in out


def test_comm_writes_the_csv(tmp_path, capsys):
    argv = ["comm", "--sizes", "1KB:4KB", "--workers", "2,4", "--workers", "8", "--collective", "all_reduce",
            "--collective", "all-to-all", "--network", "25gbe", "--out", str(tmp_path)]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    frame = pd.read_csv(tmp_path / "comm.csv")
    assert tuple(frame.columns) == COMM_COLUMNS
    assert len(frame) == 2 * 3 * 3  # collectives x workers x sizes
    assert set(frame.collective) == {"all_reduce", "all_to_all"} and set(frame.source) == {"model"}
    row = frame[(frame.collective == "all_reduce") & (frame.workers == 8) & (frame.bytes == 4000)].iloc[0]
    # 25gbe: alpha 25 us, 2.9 GB/s. At 4 kB among 8 the cheapest is recursive doubling, log2 8 (alpha + n beta)
    # = 79 us: ring 14 alpha + 1.75 n beta = 352 us, Rabenseifner 6 alpha + 1.75 n beta = 152 us, tree >= 6 alpha
    assert row.time_s == pytest.approx(3 * (25e-6 + 4000 / 2.9e9))
    assert "comm.csv" in out
    # the table and its plots (one per collective, PNG and SVG), no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "comm.csv", *(f"comm_{op}.{ext}" for op in ("all_reduce", "all_to_all") for ext in ("png", "svg"))]


def test_comm_explicit_algorithm_and_profile_file(tmp_path, capsys):
    profile = tmp_path / "lab.toml"
    profile.write_text("[inter]\nalpha_us = 10.0\nbandwidth_GBps = 1.0\n")
    code, _, _ = run_cli(["comm", "--sizes", "1MB", "--workers", "8", "--network", str(profile),
                      "--algorithm", "ring", "--out", str(tmp_path / "o")], capsys)
    assert code == 0
    row = pd.read_csv(tmp_path / "o" / "comm.csv").iloc[0]
    assert (row.algorithm, row.network) == ("ring", "lab")
    assert row.time_s == pytest.approx(14 * 10e-6 + 1.75e6 * 1e-9)  # ring all-reduce, 8 workers
    assert row.busbw_GBps == pytest.approx(1.75e6 / row.time_s / 1e9)


def test_comm_reads_a_config_file(tmp_path, capsys):
    config = tmp_path / "comm.toml"
    config.write_text('sizes = "2KB"\nworkers = "4"\ncollective = "broadcast"\nnetwork = "ib-hdr"\n')
    code, _, _ = run_cli(["comm", "--config", str(config), "--out", str(tmp_path / "out")], capsys)
    assert code == 0
    frame = pd.read_csv(tmp_path / "out" / "comm.csv")
    assert frame[["collective", "workers", "bytes", "network"]].values.tolist() == [["broadcast", 4, 2000, "ib-hdr"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "1XB"], "bad size '1XB'"),
        (["--collective", "allreduce"], "unknown collective 'allreduce'"),
        (["--workers", "two"], "bad --workers value 'two'"),
        (["--workers", "1"], "integers >= 2"),
        (["--network", "5gbe"], "unknown network '5gbe'"),
        (["--algorithm", "bruck"], "'bruck' does not implement all_reduce"),
        (["--algorithm", "fastest"], "unknown collective algorithm 'fastest'"),
        (["--out", "/dev/null/o"], "bad --out /dev/null/o: /dev/null is not a directory"),
    ],
)
def test_comm_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, args, message):
    out_dir = tmp_path / "out"
    code, _, err = run_cli(["comm", "--out", str(out_dir), *args], capsys)
    assert code == 2
    assert message in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert not out_dir.exists()


def test_comm_default_sweep_doubles_from_1_kib_to_1_gib(capsys):
    from lionsim.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(["comm", "--format", "csv"])
    assert done.value.code == 0
    from io import StringIO

    sizes = pd.read_csv(StringIO(capsys.readouterr().out))["bytes"].tolist()
    assert sizes == [2**k for k in range(10, 31)]  # nccl-tests -b 1K -e 1G -f 2
    from lionsim.cli.comm_view import human_bytes

    assert [human_bytes(n) for n in (1024, 2**20, 2**30, 1000, 524_288_000)] == \
        ["1 KiB", "1 MiB", "1 GiB", "1 KB", "524 MB"]
