"""`lionsim comm --backend gloo|nccl`: collectives measured on 2 real gloo ranks beside the
model, nccl-tests' columns and factors, `--fit`, and one-line errors. Never asserts on speed."""

from __future__ import annotations

from statistics import NormalDist

import pandas as pd
import pytest
import torch

from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.measure import MEASURED_COLUMNS, Point, measured_rows, sized
from lionsim.network import COMM_COLUMNS, TRAITS, load_network
from lionsim.network.calls import OPS as ALL_OPS
from tests.helpers.cli import run_cli

OPS = ("all_reduce", "all_gather", "all_to_all")
FACTORS = {"all_reduce": 2 * (2 - 1) / 2, "all_gather": (2 - 1) / 2, "all_to_all": (2 - 1) / 2}


@pytest.fixture(scope="session")
def measured(tmp_path_factory):
    """One tiny sweep on 2 gloo ranks, with --fit (run once for the module)."""
    base = tmp_path_factory.mktemp("comm")
    argv = ["comm", "--backend", "gloo", "--ranks", "2", "--sizes", "1KB:64KB", "--iters", "3", "--warmup", "1",
            "--network", "10gbe", "--out", str(base / "out"), "--fit", str(base / "fit" / "gloo2.toml"),
            "--dtype", "float32,int8"]
    for op in OPS:
        argv += ["--collective", op]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    return base, pd.read_csv(base / "out" / "comm.csv")


@pytest.mark.slow
def test_measured_rows_sit_beside_model_rows(measured):
    _, frame = measured
    assert tuple(frame.columns) == MEASURED_COLUMNS and set(COMM_COLUMNS) <= set(frame.columns)
    assert set(frame.source) == {"model", "measured"}
    model, meas = frame[frame.source == "model"], frame[frame.source == "measured"]
    keys = ["collective", "workers", "bytes", "dtype"]
    prior, fitted = model[model.network == "10gbe"], model[model.network == "gloo2"]
    for rows in (prior, fitted):  # the prior's model and the fitted profile's, row by row
        assert sorted(map(tuple, rows[keys].values)) == sorted(map(tuple, meas[keys].values))
    assert set(meas.collective) == set(OPS) and set(meas.workers) == {2} and len(meas) == 4 * 7  # all_reduce x 2
    assert set(meas[meas.collective == "all_reduce"].dtype) == {"float32", "int8"}
    assert set(meas.network) == {"gloo"} and set(model.network) == {"10gbe", "gloo2"}
    # a gloo sweep's model: 10gbe's link (alpha 25 us, 1.17 GB/s) run by gloo's traits. At N = 2 gloo's
    # ring all-reduce is 2 alpha + n / B, an all-gather or pairwise all-to-all alpha + (n / 2) / (B share);
    # plus the op's floor, and the slow mode's mean on calls up to its size (all of these, at <= 64 KB)
    gloo = TRAITS.get("gloo")
    for r in prior.itertuples():
        op = gloo.op(r.collective)
        hops, moved = (2, r.bytes) if r.collective == "all_reduce" else (1, r.bytes / 2)
        bandwidth = min(1.17e9 * op.share(r.bytes), gloo.host_GBps * 1e9)  # B share, capped by the host
        fast = op.floor(r.bytes) + hops * 25e-6 + moved / bandwidth
        assert r.time_s == pytest.approx(fast + gloo.slow.probability * gloo.slow.extra_s) and r.time_mean_s == r.time_s
        # the band: fast or slow (p), each normal with the jitter's deviation; the modes lie so far
        # apart that each edge falls in one of them (NormalDist: the closed form)
        p, sd, inv = gloo.slow.probability, gloo.slow.jitter * fast, NormalDist().inv_cdf
        assert (r.time_p10_s, r.time_p90_s) == pytest.approx(
            (fast + sd * inv(0.1 / (1 - p)), fast + gloo.slow.extra_s + sd * inv((0.9 - (1 - p)) / p)), rel=1e-4)


def test_nccl_tests_columns_and_bus_factors(measured):
    _, frame = measured
    meas = frame[frame.source == "measured"]
    for r in meas.itertuples():
        assert r.count * (4 if r.dtype == "float32" else 1) == r.bytes and r.iters == 3
        assert r.type == {"float32": "float", "int8": "int8"}[r.dtype]
        assert r.redop == ("sum" if r.collective == "all_reduce" else "none") and r.root == -1
        assert r.algbw_GBps == pytest.approx(r.bytes / r.time_mean_s / 1e9)  # nccl-tests: the average time
        assert r.busbw_GBps == pytest.approx(r.algbw_GBps * FACTORS[r.collective])
        assert 0 < r.time_min_s <= r.time_p10_s <= r.time_s <= r.time_p90_s <= r.time_max_s
        assert r.time_min_s <= r.time_mean_s <= r.time_max_s


def test_measured_bandwidths_come_from_the_mean_time_as_nccl_tests_does():
    # one slow iteration pulls the mean far from the median: the bandwidths follow the mean, as
    # the plot's "measured (mean)" line and the table's err (model / mean - 1) do
    times = (1e-3, 1e-3, 1e-3, 1e-3, 9e-3)  # median 1 ms, mean 2.6 ms
    factors = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
               "all_to_all": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0}
    for ranks in (2, 4):
        points = [Point(op, 4096, times) for op in factors]
        for r in measured_rows(points, ranks, "gloo").itertuples():
            assert (r.time_s, r.time_mean_s) == pytest.approx((1e-3, 2.6e-3))
            algbw = r.bytes / (sum(times) / len(times)) / 1e9
            assert r.algbw_GBps == pytest.approx(algbw)
            assert r.busbw_GBps == pytest.approx(algbw * factors[r.collective](ranks))


def test_sizes_round_down_to_whole_elements_per_rank_but_never_below_one():
    assert sized("all_reduce", 1001, 2).nbytes == 1000
    assert sized("all_gather", 1000, 2).nbytes == 1000 and sized("all_gather", 1004, 2).nbytes == 1000
    assert sized("all_to_all", 1000, 3).count == 249  # 83 elements for each of 3 ranks
    assert sized("all_gather", 7, 2).nbytes == 8  # one float32 per rank at least
    assert sized("all_reduce", 1, 2, "uint8").nbytes == 1  # the abstention flag's size
    assert sized("all_gather", 1, 2, "uint8").nbytes == 2 and sized("all_to_all", 5, 4, "int8").nbytes == 4
    with pytest.raises(LionsimError, match="unknown dtype 'int4'"):
        sized("all_reduce", 8, 2, "int4")


def test_the_fitted_profile_loads_with_network(measured, capsys):
    base, frame = measured
    profile = base / "fit" / "gloo2.toml"
    net = load_network(str(profile))
    # the ops measured, and a stand-in entry for every other (lionsim.network.unmeasured)
    assert net.measured["ops"] == list(OPS) and {op for op, _ in net.traits.ops} == set(ALL_OPS)
    assert net.traits.backend == "gloo"
    assert net.measured["backend"] == "gloo" and net.measured["ranks"] == 2 and net.measured["hosts"] == 1
    assert net.measured["torch"] == torch.__version__ and net.measured["ranks_per_host"] == [2]
    text = profile.read_text()
    assert "median / worst |error|" in text
    assert "# not measured, so priced by a stand-in (a library's fixed cost is mostly per call): " in text
    # 1 kB-64 kB: bytes too few beside gloo's floor to read a rate from; the profile says whose figures it holds
    assert "# link: bandwidth 10gbe's, not measured: " in text and "alpha 25 us, 10gbe's" in text
    assert net.inter.bandwidth_Bps == load_network("10gbe").inter.bandwidth_Bps
    code, out, err = run_cli(["comm", "--network", str(profile), "--workers", "2", "--sizes", "1KB:64KB",
                          "--out", str(base / "again")], capsys)
    assert (code, err) == (0, "")
    again = pd.read_csv(base / "again" / "comm.csv")
    assert set(again.network) == {"gloo2"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
def test_nccl_without_cuda_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(["comm", "--backend", "nccl", "--sizes", "1KB", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "nccl needs CUDA" in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "mpi"], "unknown --backend 'mpi'"),
    (["--backend", "gloo", "--ranks", "1"], "bad --ranks 1"),
    (["--backend", "gloo", "--sizes", ""], "bad --sizes '': '' is not a size"),
    (["--backend", "gloo", "--iters", "0"], "bad --iters 0"),
    (["--backend", "gloo", "--iters", "-5"], "bad --iters -5"),
    (["--backend", "gloo", "--timeout", "nan"], "bad --timeout nan"),
    (["--backend", "gloo", "--timeout", "inf"], "bad --timeout inf"),
    (["--backend", "gloo", "--timeout", "1e10"], "bad --timeout 1e10; accepted: a number above 0 and at most 31,536,000 (seconds; a year)"),  # torch overflows at once
    (["--backend", "gloo", "--warmup", "-1"], "bad --warmup -1"),
    (["--backend", "gloo", "--dtype", "int4"], "unknown dtype 'int4'"),
    (["--backend", "gloo", "--iface", "lo"], "--iface lo picks the interface between hosts"),
    (["--traits", "nosuch"], "bad --traits 'nosuch'"),
    (["--dtype", "int8"], "--dtype chooses what is measured"),
    (["--backend", "gloo", "--fit", "x.json"], "bad --fit x.json"),
    (["--fit", "x.toml"], "--fit fits measured collectives"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, args, message):
    out_dir = tmp_path / "out"
    code, _, err = run_cli(["comm", "--out", str(out_dir), *args], capsys)
    assert code == 2
    assert message in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert not out_dir.exists() and not (tmp_path / "x.toml").exists()
    assert not (tmp_path / ".out.partial").exists()  # nor its staging folder
