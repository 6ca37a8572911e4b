"""`lionsim networks` and `lionsim comm` through the real entry point."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from lionsim.network import COMM_COLUMNS
from tests.helpers import REPO
from tests.helpers.cli import one_line_exit_2, run_cli


def test_networks_lists_every_preset(capsys):
    code, out, _ = run_cli(["networks"], capsys)
    assert code == 0
    for name in ("1gbe", "10gbe", "25gbe", "100gbe", "ib-hdr", "ib-ndr", "nvlink4", "dgx-h100"):
        assert name in out


def test_comm_writes_the_csv(tmp_path, capsys):
    argv = ["comm", "--sizes", "1KB:4KB", "--workers", "2,4", "--workers", "8", "--collective", "all_reduce",
            "--collective", "all-to-all,all_reduce", "--network", "25gbe", "--out", str(tmp_path)]
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
        (["--sizes", "1XB"], "bad --sizes 1XB: unknown unit XB; accepted: 1 B to 1 TiB"),
        (["--sizes", "1e30"], "bad --sizes 1e30: 1e30 is 1e+30 B, above 1 TiB; accepted: 1 B to 1 TiB"),
        (["--collective", "allreduce"], "unknown collective 'allreduce'"),
        (["--collective", "all_reduce,allgather"], "unknown collective 'allgather'; choose from:"),
        (["--workers", "two"], "bad --workers 'two'; accepted: a whole number from 2 to 100,000,000"),
        (["--workers", "1"], "bad --workers 1; accepted: a whole number from 2 to 100,000,000 (a collective needs 2"),
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
    assert not (tmp_path / ".out.partial").exists()  # nor its staging folder


def test_comm_rows_are_ascending_each_size_once_and_the_repeat_is_said(capsys):
    """`--sizes 1KB,1.5KiB,1000,1023` gave rows in the order typed and merged 1KB with 1000 silently."""
    code, out, err = run_cli(["comm", "--sizes", "1KB,1.5KiB,1000,1023", "--format", "csv"], capsys)
    assert code == 0, err
    assert [int(r.split(",")[COMM_COLUMNS.index("bytes")]) for r in out.splitlines()[1:]] == [1000, 1023, 1536]
    assert err.strip() == "note: --sizes 1KB,1.5KiB,1000,1023 names 1 size more than once: each is one row", err


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
        ["1 KiB", "1 MiB", "1 GiB", "1.00 kB", "524 MB"]


@pytest.mark.parametrize(("args", "option"), [
    (["--iters", "-5"], "--iters"), (["--iters", "20"], "--iters"), (["--warmup", "-1"], "--warmup"),
    (["--timeout", "nan"], "--timeout"), (["--ranks", "0"], "--ranks"), (["--ranks", "2"], "--ranks"),
    (["--iface", "eth0"], "--iface"),
])
def test_comm_sim_refuses_the_options_of_a_measurement(tmp_path, capsys, args, option):
    """The model reads none of them: any value, even the default's, is refused as --dtype is."""
    err = one_line_exit_2(["comm", "--sizes", "1KB,1MB", "--out", tmp_path / "out", *args], capsys,
                          f"error: {option} ")
    assert "use --backend gloo or nccl" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--overwrite-sweep", "--overwrite"])
def test_comm_refuses_overwrite_without_out(capsys, flag):
    one_line_exit_2(["comm", "--sizes", "1KB", flag], capsys, f"{flag} lets --out replace")


def test_comm_out_never_publishes_what_a_killed_run_left(tmp_path, capsys):
    stale = tmp_path / ".out.partial"
    stale.mkdir()
    (stale / "comm_all_to_all.png").write_bytes(b"a killed run's plot")
    code, out, _ = run_cli(["comm", "--sizes", "1KB", "--out", tmp_path / "out"], capsys)
    assert code == 0 and "comm_all_to_all" not in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["comm.csv", "comm_all_reduce.png",
                                                                    "comm_all_reduce.svg"]
    assert not stale.exists()


def test_comm_interrupted_leaves_no_staging_folder(tmp_path, capsys, monkeypatch):
    import lionsim.reports.plots as plots

    def interrupted(stage, frame, **_):
        (stage / "comm_all_reduce.png").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "plot_comm", interrupted)
    one_line_exit_2(["comm", "--sizes", "1KB", "--out", tmp_path / "a" / "out"], capsys, "interrupted")
    assert list(tmp_path.iterdir()) == []  # neither the staging folder nor the parent it made


def _fake_sweep(cfg):
    """What 2 ranks on one host would send back: a time per (case, size) rising with the size,
    so the fit has something to fit (no process is started)."""
    from lionsim.measure import Point

    points = [Point(op, size, tuple(30e-6 + size / 1e9 * (1 + 0.01 * i) for i in range(cfg.iters)), dtype)
              for op, dtype in cfg.cases() for size in cfg.sizes]
    hosts = [{"hostname": "h", "boot_id": "b", "cores": 64, "threads": 1, "rank": r, "iface": None, "address": None}
             for r in range(cfg.ranks)]
    return points, hosts


@pytest.mark.parametrize(("fmt", "fit"), [("csv", False), ("csv", True), ("json", False)])
def test_measured_comm_csv_puts_only_the_frame_on_stdout(tmp_path, capsys, monkeypatch, fmt, fit):
    """The measuring line, the comparison table, the fit's table and 'wrote' lines go to stderr
    (the sweep itself is faked: where the output goes is what is tested)."""
    import io

    import lionsim.measure as measure

    monkeypatch.setattr(measure, "measure", _fake_sweep)
    extra = ["--fit", tmp_path / "gloo2.toml", "--collective", "all_reduce", "--dtype", "float32"] if fit else []
    code, out, err = run_cli(["comm", "--backend", "gloo", "--sizes", "1KB:1MB", "--iters", "2", "--warmup", "0",
                              "--network", "10gbe", "--format", fmt, *extra], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out)) if fmt == "csv" else pd.read_json(io.StringIO(out))
    # 1 kB x 2^k up to 512 kB (10 sizes): measured, the model's (and the fitted profile's)
    assert set(frame.source) == {"measured", "model"} and len(frame) == (3 if fit else 2) * 10
    assert "measuring all_reduce on 2 gloo ranks" in err and "measured on 2 gloo ranks (loopback) vs the model" in err
    if fit:
        assert f"wrote {tmp_path / 'gloo2.toml'}" in err and "fitted profile" in err


def test_fit_measures_and_fits_the_ops_the_algorithm_implements(tmp_path, capsys, monkeypatch):
    """`--fit --algorithm ring`: of --fit's default ops, those ring implements are measured, fitted
    and priced by ring (all-to-all, which it does not implement, is left out rather than refused)."""
    import io

    import lionsim.measure as measure
    from lionsim.network import COLLECTIVE_ALGORITHMS, network_for

    measured = []
    monkeypatch.setattr(measure, "measure", lambda cfg: measured.append(cfg.collectives) or _fake_sweep(cfg))
    profile = tmp_path / "ring.toml"
    code, out, err = run_cli(["comm", "--backend", "gloo", "--fit", profile, "--algorithm", "ring", "--dtype",
                              "float32", "--sizes", "1KB:64KB", "--iters", "4", "--warmup", "0", "--network", "10gbe",
                              "--format", "csv"], capsys)
    assert code == 0, err
    assert measured == [("all_reduce", "all_gather", "broadcast")]
    assert set(measured[0]) <= set(COLLECTIVE_ALGORITHMS.get("ring").ops)
    frame = pd.read_csv(io.StringIO(out))
    model = frame[frame.source == "model"]
    assert set(model.algorithm) == {"ring"} and set(frame.network) == {"10gbe", "gloo", "ring"}
    fitted = network_for(str(profile), backend="gloo")
    assert fitted.measured["ops"] == list(measured[0])  # all_to_all: a stand-in, said on stderr and in the file
    assert "note: ring.toml measured all_reduce, all_gather, broadcast only; the others are priced by a stand-in" in err


def test_measured_without_network_leaves_the_model_out_of_table_csv_and_plots_as_bench_does(tmp_path, capsys,
                                                                                             monkeypatch):
    """--network left at its default prices a preset (10gbe) that is no link the ranks crossed
    (loopback): the table has no model or err column, comm.csv and its plots no model row, and one
    line says why in bench's words (titles.unchecked_model, the one rule both commands read)."""
    import lionsim.measure as measure
    import lionsim.reports.plots as plots
    from lionsim.reports.titles import unchecked_model

    drawn = []
    monkeypatch.setattr(measure, "measure", _fake_sweep)
    monkeypatch.setattr(plots, "plot_comm", lambda out, frame, **_: drawn.append(frame) or [])
    code, out, err = run_cli(["comm", "--backend", "gloo", "--sizes", "1MB", "--iters", "2", "--warmup", "0",
                              "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    said = unchecked_model({"network_given": False, "network": {"name": "10gbe"}, "config": {"backend": "gloo"}},
                           calibrate=False)
    assert said.startswith("model and error left out: --network was not given, and its default (10gbe) is not "
                           "the link measured (loopback)") and "--calibrate" not in said
    lines = out.splitlines()
    assert said in " ".join(out.split()) and sum("model and error left out" in line for line in lines) == 1
    header = next(line for line in lines if line.strip().startswith("collective"))
    assert "model" not in header.split() and "err" not in header.split() and "vs the model" not in out
    assert "%" not in out  # no error figure anywhere
    frame = pd.read_csv(tmp_path / "out" / "comm.csv")
    assert set(frame.source) == {"measured"} and set(drawn[0].source) == {"measured"}


def test_measured_with_network_given_compares_as_before(tmp_path, capsys, monkeypatch):
    import lionsim.measure as measure

    monkeypatch.setattr(measure, "measure", _fake_sweep)
    code, out, err = run_cli(["comm", "--backend", "gloo", "--sizes", "1MB", "--iters", "2", "--warmup", "0",
                              "--network", "10gbe"], capsys)
    assert code == 0 and "measured on 2 gloo ranks (loopback) vs the model on 10gbe" in out and "left out" not in out
    assert "model 10gbe vs measured means, median / worst |error|" in out


@pytest.mark.parametrize("network", [["--network", "25gbe"], []])
def test_the_table_and_the_plot_say_where_the_ranks_measured_as_bench_does(tmp_path, capsys, monkeypatch, network):
    """2 gloo ranks on this host measure on loopback, not on --network's 25gbe: the table's title
    and the plot's say so in bench's caption's words (titles.measured_on), model or none."""
    import lionsim.measure as measure
    import lionsim.reports.plots.comm as comm
    from lionsim.reports.titles import measured_on

    titles = []
    monkeypatch.setattr(measure, "measure", _fake_sweep)
    monkeypatch.setattr(comm, "save", lambda fig, path: titles.append(fig._suptitle.get_text()) or [])
    code, out, err = run_cli(["comm", "--backend", "gloo", "--sizes", "1MB,2MB", "--iters", "2", "--warmup", "0",
                              *network, "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    where = measured_on({"config": {"backend": "gloo"}, "ranks_on_one_host": True})
    assert where == "loopback"
    assert f"measured on 2 gloo ranks ({where})" in out
    assert f"measured: gloo on {where}" in " ".join(titles[0].split())


@pytest.mark.parametrize(("args", "message"), [
    (["--collective", "all_to_all", "--algorithm", "ring"], "algorithm 'ring' does not implement all_to_all; "
                                                            "choose from: auto, pairwise"),
    (["--algorithm", "pairwise"], "algorithm 'pairwise' does not implement all_reduce (comm's default collective): "
                                  "add --collective all_to_all"),
    (["--fit", "p.toml", "--algorithm", "param_server"], "comm tables none of its ops (ps_pull, ps_push)"),
])
def test_a_measurement_its_algorithm_cannot_price_is_refused_before_it_runs(tmp_path, capsys, monkeypatch, args,
                                                                            message):
    import lionsim.measure as measure

    monkeypatch.setattr(measure, "measure", lambda cfg: pytest.fail("measured before the refusal"))
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(["comm", "--backend", "gloo", "--sizes", "1KB", *args], capsys, message)
    assert list(tmp_path.iterdir()) == []


def test_comm_takes_no_plugin_and_its_help_lists_none(tmp_path, capsys, forget_plugins):
    """A plug-in adds strategies and transports (lionsim.plugins); comm times collectives alone, so
    --plugin is no option of it: not in its --help, refused by click, and the file never imported."""
    from lionsim.plugins import LOADED

    plugin = REPO / "examples" / "plugins" / "randomk_ef.py"
    code, out, _ = run_cli(["comm", "--help"], capsys)
    assert code == 0 and "--network" in out and "--plugin" not in out
    for backend in ("sim", "gloo"):
        one_line_exit_2(["comm", "--backend", backend, "--plugin", plugin, "--sizes", "1KB", "--out", tmp_path / "o"],
                        capsys, "error: no such option --plugin for `lionsim comm`")
    assert list(tmp_path.iterdir()) == [] and str(plugin.resolve()) not in LOADED


def test_gloo_slow_mode_is_what_prices_a_small_call_above_a_larger_one_and_the_footnote_says_so(capsys):
    """gloo's traits: 23% of calls up to 256 KiB take 3.2 ms more. Its mean lifts 1 KiB and 32 KiB
    above 1 MiB on 10gbe, though the fast path alone grows with size; the footnote says so where
    a size is hit, with the figures read from the traits."""
    from lionsim.network import CollectiveCall, TRAITS, network_for, price

    gloo, sizes = TRAITS.get("gloo"), (2**10, 2**15, 2**20)
    net = network_for("10gbe", traits="gloo")
    costs = [price(CollectiveCall("all_reduce", size), 2, net) for size in sizes]
    fast = [c.modes.fast_s for c in costs]
    assert fast == sorted(fast)  # the fast path alone: dearer with size
    for size, cost, fast_s in zip(sizes, costs, fast):  # the mean: fast + p x extra up to max_bytes
        hit = size <= gloo.slow.max_bytes
        assert cost.time_s == pytest.approx(fast_s + (gloo.slow.probability * gloo.slow.extra_s if hit else 0))
    assert costs[1].time_s > costs[2].time_s  # 32 KiB above 1 MiB: the slow mode's mean, no more
    words = (f"the mean, including gloo's slow calls up to 256 KiB: {gloo.slow.probability:.0%} of them, "
             f"+{gloo.slow.extra_s * 1e3:.3g} ms)")
    code, out, _ = run_cli(["comm", "--workers", "2", "--network", "10gbe", "--sizes", "1KiB:1MiB:x32",
                            "--traits", "gloo"], capsys)
    assert code == 0 and words in " ".join(out.split())
    code, out, _ = run_cli(["comm", "--workers", "2", "--network", "10gbe", "--sizes", "1MiB", "--traits", "gloo"],
                           capsys)
    assert code == 0 and "time: us (the mean);" in " ".join(out.split())  # 1 MiB: beyond the slow mode


def test_a_size_column_keeps_one_unit_system_and_small_rates_keep_their_digits():
    """--sizes 1K:1M:x1.5 read "1 KiB" above "1.54 kB" (each size by its own rule), and a 1 KiB
    call's busbw of 0.000392 GB/s read "0.000"."""
    from lionsim.cli.comm_view import rate, size_column

    assert size_column([8, 1024, 2**20]) == ["8 B", "1 KiB", "1 MiB"]  # all whole KiB: binary
    assert size_column([1024, 1536, 2304]) == ["1.02 kB", "1.54 kB", "2.30 kB"]  # one is not: decimal for all
    assert size_column([1000, 1024]) == ["1.00 kB", "1.02 kB"]
    assert size_column([1000, 10**6, 10**9]) == ["1 kB", "1 MB", "1 GB"]  # set sizes read as set
    assert [rate(v) for v in (0.000392, 0.019, 12.3456, 0.0)] == ["0.000392", "0.019", "12.346", "0.000"]


def test_fit_without_network_says_to_pass_the_profile_it_writes(tmp_path, capsys, monkeypatch):
    """`comm --fit FIT.toml` with no --network told the user to "fit one once with `lionsim comm
    --fit ...`", the very command they ran: it now says to pass the profile this fit writes."""
    import lionsim.measure as measure
    import lionsim.reports.plots as plots

    monkeypatch.setattr(measure, "measure", _fake_sweep)
    monkeypatch.setattr(plots, "plot_comm", lambda out, frame, **_: [])
    profile = tmp_path / "mine.toml"
    code, out, err = run_cli(["comm", "--backend", "gloo", "--fit", profile, "--collective", "all_reduce", "--dtype",
                              "float32", "--sizes", "1KB:64KB", "--iters", "2", "--warmup", "0"], capsys)
    assert code == 0, err
    said = "".join((out + err).split())  # a long path wraps anywhere on the console
    assert "".join(f"to compare with a model of this link, pass --network {profile}".split()) in said, said
    assert "fitoneonce" not in said and profile.exists()


def test_the_left_out_words_load_no_matplotlib():
    """comm without plots said why its model was left out through lionsim.reports.plots.titles,
    whose package imports matplotlib: the words now live in lionsim.reports.titles."""
    import subprocess
    import sys

    code = ("import sys; import lionsim.cli.comm_cmd; from lionsim.reports.titles import model_left_out, "
            "unchecked_model; model_left_out('10gbe', 'loopback', 'gloo'); "
            "sys.exit('matplotlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


GPU_NODES = ('name = "gpus"\nworkers_per_node = 8\nfabric = "sockets"\n{device}[inter]\nalpha_us = 25.0\n'
             'bandwidth_GBps = 2.9\n[intra]\nalpha_us = 1.0\nbandwidth_GBps = {intra}\n')
"""A profile of 8-worker nodes on 25 GbE naming no library: the user's profile of H100 nodes."""


def _time_s(out: str) -> float:
    """The first row's time_s in comm's --format csv."""
    return float(out.splitlines()[1].split(",")[COMM_COLUMNS.index("time_s")])


def _hierarchical_s(size: float, g: int, m: int, inter=(25e-6, 2.9e9), intra=(1e-6, 380e9)) -> float:
    """The ideal library's hierarchical all-reduce (lionsim.network.topology) of `size` bytes on m
    nodes of g: intra ring reduce-scatter (g-1)(a_i + S/g b_i), inter Rabenseifner among m nodes on
    S/g with the node's link shared by g: 2 log2 m a_e + 2 ((m-1)/m)(S/g)(g b_e), intra Bruck
    all-gather log2 g a_i + ((g-1)/g) S b_i."""
    (a_e, bw_e), (a_i, bw_i) = inter, intra
    return ((g - 1) * (a_i + size / g / bw_i) + 2 * math.log2(m) * a_e + 2 * (m - 1) / m * size / bw_e
            + math.log2(g) * a_i + (g - 1) / g * size / bw_i)


def _sockets_cap_s(size: float, workers: int, channels: int = 2) -> float:
    """An all-reduce's least time under NCCL's socket transport: a node moves at most channels x
    0.98 GB/s (NCCL's default 2 channels a NIC; docs/clusters.md, the sockets fabric), busbw
    counted as nccl-tests counts it, 2 (N-1)/N S / t."""
    return 2 * (workers - 1) / workers * size / (channels * 0.98e9)


@pytest.mark.parametrize("device", ['device = "h100"\n', ""], ids=["device", "nvlink"])
def test_gpu_nodes_are_priced_by_nccl_as_estimate_prices_them(device, tmp_path, capsys):
    """A profile of 8-GPU nodes naming no library (a device stated, or NVLink inside the nodes):
    comm priced it with the ideal library (1 GB all-reduce on 32: 0.522 s, busbw 3.712 GB/s) while
    estimate priced NCCL over its sockets (0.989 s): the same file, two figures. comm now prices NCCL
    by default, as estimate does: its sockets cap, 2 channels x 0.98 GB/s a node, and estimate's own
    all-reduce of the same bytes; the title says the library. `--traits ideal` keeps the formulas."""
    profile = tmp_path / "gpus.toml"
    profile.write_text(GPU_NODES.format(device=device, intra=380.0))
    argv = ["comm", "--sizes", "1GB", "--workers", "32", "--network", profile]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "modelled collectives on gpus (nccl over sockets)" in out and err == "", err
    code, out, _ = run_cli([*argv, "--format", "csv"], capsys)
    comm_s = _time_s(out)
    assert comm_s == pytest.approx(_sockets_cap_s(1e9, 32), rel=2e-3) and comm_s >= _sockets_cap_s(1e9, 32)
    code, out, err = run_cli(["estimate", "--params", "250000000", "--tokens-per-worker", "1", "--workers", "32",
                              "--network", profile, "-s", "adamw@fp32-allreduce", "--overlap", "none",
                              "--format", "csv"], capsys)  # 2.5e8 fp32 gradients: a 1 GB all-reduce
    assert code == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row.library == "nccl" and row.comm_s == pytest.approx(comm_s, rel=1e-9)
    code, out, err = run_cli([*argv, "--traits", "ideal", "--format", "csv"], capsys)
    assert code == 0 and err == ""
    assert _time_s(out) == pytest.approx(_hierarchical_s(1e9, 8, 4), rel=1e-9)  # the old figure, 0.522 s


@pytest.mark.parametrize(("network", "library"), [
    ('name = "t4s"\ndevice = "t4"\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 2.9\n', "nccl over sockets"),
    ('name = "hosts"\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 2.9\n', "ideal"),
    ("10gbe", "ideal"),
    ("dgx-h100", "nccl over ib"),
], ids=["device", "flat-profile", "flat-preset", "gpu-preset"])
def test_only_gpu_clusters_change_library(network, library, tmp_path, capsys):
    """The rule: a network is GPUs where it states a device (one GPU a node here), has nodes of
    several workers on NVLink, or --gpus-per-node is given; a flat profile or preset
    without a device stays the ideal library, and a preset keeps the library it names."""
    if network.startswith("name"):
        path = tmp_path / "net.toml"
        path.write_text(network)
        network = path
    code, out, err = run_cli(["comm", "--sizes", "1MB", "--workers", "16", "--network", network], capsys)
    assert code == 0 and f"({library})" in out and err == "", (out, err)


def test_a_device_comm_does_not_know_is_one_line(tmp_path, capsys):
    profile = tmp_path / "odd.toml"
    profile.write_text(GPU_NODES.format(device='device = "h1000"\n', intra=380.0))
    one_line_exit_2(["comm", "--sizes", "1MB", "--workers", "16", "--network", profile], capsys,
                    f"{profile}: unknown device 'h1000'")


def test_nodes_comm_does_not_take_for_gpus_say_how_estimate_prices_them(tmp_path, capsys, monkeypatch):
    """8 workers a node on a link slower than NVLink and no device may be CPU processes: comm keeps
    the ideal library, where estimate (GPUs always) prices NCCL, so the plot's title names the
    library as the table does, and one line says how to get estimate's figures; --traits nccl
    prices those, without it."""
    import lionsim.reports.plots.comm as comm

    titles = []
    monkeypatch.setattr(comm, "save", lambda fig, path: titles.append(fig._suptitle.get_text()) or [])
    profile = tmp_path / "gpus.toml"
    profile.write_text(GPU_NODES.format(device="", intra=20.0))
    argv = ["comm", "--sizes", "1MB,1GB", "--workers", "32", "--network", str(profile), "--out", str(tmp_path / "o")]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "(ideal)" in out
    assert err.strip() == "note: estimate prices GPUs with NCCL: --traits nccl here gives its figures"
    assert "model: gpus (ideal, dashed)" in titles[0]
    code, out, err = run_cli([*argv[:-2], "--traits", "nccl"], capsys)
    assert code == 0 and "nccl" in out and err == ""
    code, _, err = run_cli(["comm", "--sizes", "1MB", "--network", "25gbe"], capsys)  # no GPU nodes: no note
    assert code == 0 and err == ""


def test_gpus_per_node_prices_the_all_reduce_estimate_would(capsys):
    """`comm --workers 32 --gpus-per-node 8 --network 25gbe` was refused ("no such option"), so the
    table priced 32 separate hosts. Now 4 nodes of 8, joined inside by h100's NVLink as estimate lays
    them out, and, nodes of several GPUs being a GPU cluster, priced by NCCL as estimate prices them
    (its sockets cap: 2 channels x 0.98 GB/s a node); `--traits ideal`: the closed form of the
    hierarchical plan (lionsim.network.topology), 1 GiB."""
    argv = ["comm", "--workers", "32", "--network", "25gbe", "--sizes", "1GiB", "--format", "csv"]
    code, out, err = run_cli([*argv, "--gpus-per-node", "8", "--traits", "ideal"], capsys)
    assert code == 0, err
    row = out.splitlines()[1].split(",")
    assert row[COMM_COLUMNS.index("algorithm")] == "hier:ring+rabenseifner+bruck"
    assert _time_s(out) == pytest.approx(_hierarchical_s(2**30, 8, 4), rel=1e-9)
    assert err.strip() == ("note: --gpus-per-node 8: the GPUs of a node are joined by h100's NVLink, 380 GB/s "
                           "(network '25gbe' has no intra link; a profile's [intra] sets another)")
    code, out, _ = run_cli([*argv, "--gpus-per-node", "8"], capsys)
    assert code == 0 and _time_s(out) == pytest.approx(_sockets_cap_s(2**30, 32), rel=2e-3)
    code, out, _ = run_cli([*argv[:-2], "--gpus-per-node", "8"], capsys)
    assert code == 0 and "modelled collectives on 25gbe (nccl over sockets)" in out
    code, flat, _ = run_cli(argv, capsys)  # 32 hosts: each its own 25 GbE, no NVLink to share the work
    assert _time_s(flat) > _hierarchical_s(2**30, 8, 4) * 1.2
    code, one, _ = run_cli([*argv, "--gpus-per-node", "1"], capsys)  # one GPU a node: no GPU nodes, as before
    assert _time_s(one) == _time_s(flat)


def _estimate_comm_s(profile, workers: int, capsys, *extra: str) -> float:
    """estimate's comm_s for one fp32 all-reduce of 1 GB (2.5e8 gradients) on `workers` of `profile`."""
    code, out, err = run_cli(["estimate", "--params", "250000000", "--tokens-per-worker", "1", "--workers", str(workers),
                              "--network", profile, "-s", "adamw@fp32-allreduce", "--overlap", "none", *extra,
                              "--format", "csv"], capsys)
    assert code == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row.library == "nccl"
    return float(row.comm_s)


def test_gpus_per_node_1_is_gpus_as_in_estimate(tmp_path, capsys):
    """--gpus-per-node counts GPUs: `comm --gpus-per-node 1` on a profile of 8 workers a node on
    NVLink naming no library (no device) took the option's 1 for "not GPU nodes" and priced the
    ideal library (rabenseifner, 1.5002 s for 1 GB on 16), while estimate on the same profile and
    option priced NCCL (1.5037 s). Now both price NCCL, the same seconds."""
    profile = tmp_path / "gpus.toml"
    profile.write_text(GPU_NODES.format(device="", intra=380.0).replace("2.9", "1.25"))
    argv = ["comm", "--sizes", "1GB", "--workers", "16", "--network", profile, "--gpus-per-node", "1"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "modelled collectives on gpus (nccl over sockets)" in out, out
    code, out, _ = run_cli([*argv, "--format", "csv"], capsys)
    comm_s = _time_s(out)
    assert comm_s == pytest.approx(_estimate_comm_s(profile, 16, capsys, "--gpus-per-node", "1"), rel=1e-9)
    assert comm_s >= 2 * 15 / 16 * 1e9 / 1.25e9  # a ring's bytes through each 1.25 GB/s link, at least


def test_gpus_per_node_that_makes_the_nodes_gpus_says_so(tmp_path, capsys):
    """--gpus-per-node both lays out the nodes and says they are GPUs: a profile of 8 workers a
    node on PCIe naming no library is the ideal library alone (with the note on estimate's NCCL),
    and NCCL with --gpus-per-node 8, its own layout: estimate's seconds, and one line says the option
    changed the library. --traits ideal keeps the formulas, without the line; a flat preset at 1 a
    node keeps its own library, without it; on several a node it runs NCCL, with it."""
    profile = tmp_path / "pcie.toml"
    profile.write_text(GPU_NODES.format(device="", intra=20.0).replace("2.9", "1.25"))
    argv = ["comm", "--sizes", "1GB", "--workers", "16", "--network", profile, "--format", "csv"]
    code, alone, err = run_cli(argv, capsys)
    assert code == 0 and err.strip() == "note: estimate prices GPUs with NCCL: --traits nccl here gives its figures"
    code, out, err = run_cli([*argv, "--gpus-per-node", "8"], capsys)
    assert code == 0 and _time_s(out) == pytest.approx(_estimate_comm_s(profile, 16, capsys), rel=1e-9)
    assert _time_s(out) != _time_s(alone)
    assert err.strip() == ("note: --gpus-per-node 8 makes the nodes GPUs, which run nccl, as estimate prices them "
                           "(network 'gpus' alone: ideal; --traits ideal keeps that)")
    code, out, err = run_cli([*argv, "--gpus-per-node", "8", "--traits", "ideal"], capsys)
    assert code == 0 and _time_s(out) == _time_s(alone) and err == ""
    preset = ["comm", "--sizes", "1GB", "--workers", "32", "--network", "25gbe"]
    code, _, err = run_cli([*preset, "--gpus-per-node", "1"], capsys)
    assert code == 0 and err == ""
    code, out, err = run_cli([*preset, "--gpus-per-node", "8"], capsys)
    assert code == 0 and "(nccl over sockets)" in out
    assert err.splitlines()[-1] == ("note: --gpus-per-node 8 makes the nodes GPUs, which run nccl, as estimate "
                                    "prices them (network '25gbe' alone: ideal; --traits ideal keeps that)")
    code, out, _ = run_cli(["comm", "--help"], capsys)
    assert "even the network's own count" in " ".join(out.split())


def test_measured_ranks_that_do_not_fill_the_model_s_nodes_are_refused_naming_ranks(tmp_path, capsys):
    """The model prices the measured N, --ranks: on nodes of 2 it must fill them. Refused after
    measuring, as "bad --workers 3" (no --workers typed); now before, naming --ranks."""
    profile = tmp_path / "pairs.toml"
    profile.write_text('name = "pairs"\nworkers_per_node = 2\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.25\n'
                       '[intra]\nalpha_us = 1.0\nbandwidth_GBps = 20.0\n')
    one_line_exit_2(["comm", "--backend", "gloo", "--ranks", "3", "--sizes", "1KB", "--warmup", "0", "--iters", "1",
                     "--network", profile], capsys,
                    "bad --ranks 3: 3 workers do not fill whole nodes of pairs (2 a node); accepted: at most 2")


def test_default_measured_ranks_that_do_not_fill_the_nodes_say_they_are_the_default(tmp_path, capsys, monkeypatch):
    """--ranks not typed (nccl: one rank per visible GPU, here 3): "bad --ranks 3" named a value
    nobody typed; it says it is the default, as --workers' refusal does."""
    import lionsim.group.join

    monkeypatch.setattr(lionsim.group.join, "default_ranks", lambda backend: 3)
    profile = tmp_path / "pairs.toml"
    profile.write_text('name = "pairs"\nworkers_per_node = 2\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.25\n'
                       '[intra]\nalpha_us = 1.0\nbandwidth_GBps = 20.0\n')
    one_line_exit_2(["comm", "--backend", "gloo", "--sizes", "1KB", "--warmup", "0", "--iters", "1",
                     "--network", profile], capsys,
                    "bad --ranks 3 (the default): 3 workers do not fill whole nodes of pairs (2 a node); accepted: "
                    "at most 2")


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "32,12", "--gpus-per-node", "8"],
     "bad --gpus-per-node 8: 12 workers do not fill whole nodes of 8; accepted: a divisor of --workers"),
    (["--gpus-per-node", "0"], "bad --gpus-per-node 0; accepted: a whole number at least 1"),
    (["--backend", "gloo", "--gpus-per-node", "8"], "--gpus-per-node 8 lays out the model's nodes"),
])
def test_gpus_per_node_that_does_not_fit_is_one_line(args, message, capsys):
    one_line_exit_2(["comm", "--network", "25gbe", *args], capsys, message)


@pytest.mark.parametrize("argv, runs", [
    (["--network", "dgx-h100", "--algorithm", "rabenseifner"], "by nccl, which runs no rabenseifner all_reduce"),
    (["--network", "dgx-h100", "--algorithm", "bruck", "--collective", "all_gather"],
     "by nccl, which runs no bruck all_gather: it runs its all_gather as ring; accepted: auto, ring, tree, "),
    (["--network", "10gbe", "--traits", "gloo", "--algorithm", "tree"],
     "by gloo, which runs no tree all_reduce: it runs its all_reduce as ring; accepted: auto, ring, pairwise or "
     "param_server with gloo; or --traits ideal or mpi for the textbook algorithms\n"),
])
def test_comm_refuses_an_algorithm_the_library_does_not_run_as_estimate_does(argv, runs, capsys):
    """comm priced lionsim's hierarchical plan (hier:ring+rabenseifner+bruck) under a "nccl over ib"
    title; now estimate's refusal, from the same check."""
    name = argv[argv.index("--algorithm") + 1]
    one_line_exit_2(["comm", "--sizes", "1MB", "--workers", "16", *argv], capsys, f"error: bad --algorithm {name}: ")
    one_line_exit_2(["comm", "--sizes", "1MB", "--workers", "16", *argv], capsys, runs)


def test_comm_prices_an_algorithm_the_library_runs(capsys):
    """NCCL's tree, and the textbook algorithms under --traits ideal, as before."""
    for extra in (["--algorithm", "tree"], ["--algorithm", "rabenseifner", "--traits", "ideal"]):
        code, out, err = run_cli(["comm", "--sizes", "1MB", "--workers", "16", "--network", "dgx-h100", *extra], capsys)
        assert code == 0, err


def test_comm_interrupted_after_the_files_are_written_says_so(tmp_path, capsys, monkeypatch):
    """Ctrl-C while the table printed, after comm.csv and its plots were published, said "no
    results were written; DIR still holds its previous results". The reference: the files on
    disk, comm.csv as a run that completes writes it."""
    import lionsim.cli.comm_cmd as comm_cmd
    from tests.helpers.cli import interrupted_while_printing

    argv = ["comm", "--sizes", "1KB:4KB", "--workers", "8", "--network", "10gbe"]
    assert run_cli([*argv, "--out", tmp_path / "whole"], capsys)[0] == 0

    out = tmp_path / "o"
    interrupted_while_printing(argv, (comm_cmd, "model_table"), out, capsys, monkeypatch)
    assert (out / "comm.csv").read_bytes() == (tmp_path / "whole" / "comm.csv").read_bytes()
    assert {"comm.csv", "comm_all_reduce.png"} <= {p.name for p in out.iterdir()}


def test_a_launched_rank_reads_out_once_rank_0_has_put_it_back(tmp_path, capsys, monkeypatch):
    """Under torchrun only rank 0 (the lock's holder) moves back what a stopped publish set aside;
    the other ranks read --out at once, so one that found --out gone (set aside as .o.old) went on
    to measure while rank 0, once the folder was back, refused it. Here this process is rank 1 of
    2, and rank 0's move comes 0.5 s late (a thread). The reference: what claiming the put-back
    --out says, as rank 0 does."""
    import threading
    import time

    import lionsim.measure.rank
    from lionsim.errors import LionsimError
    from lionsim.reports.outdir import claim_out
    from lionsim.reports.publish import aside, put_back

    out = tmp_path / "o"
    assert run_cli(["comm", "--sizes", "1KB", "--workers", "2", "--out", out], capsys)[0] == 0
    out.rename(aside(out))  # a publish set it aside, killed before it moved the new one in
    measured = []
    monkeypatch.setattr(lionsim.measure.rank, "measure_in_group", lambda *args, **kwargs: measured.append(args))
    for name, value in {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": "29500"}.items():
        monkeypatch.setenv(name, value)
    rank_0 = threading.Thread(target=lambda: (time.sleep(0.5), put_back(out)))
    rank_0.start()
    try:
        code, _, err = run_cli(["comm", "--backend", "gloo", "--sizes", "1KB", "--out", out], capsys)
    finally:
        rank_0.join()
    with pytest.raises(LionsimError) as refused:
        claim_out(out)
    waits = (f"note: this rank waits up to 60 s for rank 0 to put back {aside(out)} (set aside by a stopped publish) "
             f"before it reads {out}")  # the wait is said, as bench's ranks say it
    assert (code, err.strip().splitlines(), measured) == (2, [waits, f"error: {refused.value}"], [])


def test_measured_comm_table_and_csv_hold_the_same_model_rows_of_other_worker_counts(tmp_path, capsys, monkeypatch):
    """--workers 4 beside 2 measured ranks: with --network the table shows the 4-worker model rows
    (titled modelled) that comm.csv holds; without it, neither holds them (the default network is
    no link measured) and the left-out line says so. (The CSV held a 10gbe row the table hid.)"""
    import io

    import lionsim.measure as measure
    from lionsim.cli.comm_view import us
    from lionsim.network import comm_rows, network_for, parse_sizes

    monkeypatch.setattr(measure, "measure", _fake_sweep)
    base = ["comm", "--backend", "gloo", "--workers", "4", "--sizes", "1KiB", "--iters", "2", "--warmup", "0"]
    expected = comm_rows(["all_reduce"], parse_sizes("1KiB"), [4], network_for("10gbe", backend="gloo"), "auto")
    for given in (["--network", "10gbe"], []):
        code, table, err = run_cli([*base, *given], capsys)
        assert code == 0, err
        code, out, err = run_cli([*base, *given, "--format", "csv"], capsys)
        assert code == 0, err
        frame = pd.read_csv(io.StringIO(out))
        four = frame[frame.workers == 4]
        if given:
            assert list(four.source) == ["model"] and four.time_s.iloc[0] == pytest.approx(expected[0]["time_s"])
            assert "modelled collectives on 10gbe" in table
            row = next(line.split() for line in table.splitlines() if line.split()[:1] == ["all_reduce"]
                       and "4" in line.split()[2:3])
            assert row[5] == us(expected[0]["time_s"])  # collective, algorithm, N, "1 KiB", time
        else:
            assert four.empty and set(frame.source) == {"measured"}
            assert "modelled collectives" not in table
            assert "the model of --workers 4 is left out with it" in " ".join(table.split())


def test_a_range_whose_steps_miss_its_end_says_where_it_stops(capsys):
    """A new user's --fit on 1KB:4MB:x16 measured nothing above 256 kB (as nccl-tests: the last step <=
    END) without a word, and its fit fell back to the prior's bandwidth."""
    code, _, err = run_cli(["comm", "--sizes", "1KB:4MB:x16", "--workers", "8", "--network", "10gbe"], capsys)
    said = " ".join(err.split())
    assert code == 0 and "note: --sizes 1KB:4MB:x16 stops at 256 kB, its last step at or below END" in said, err
    code, _, err = run_cli(["comm", "--sizes", "1KiB:4MiB:x4", "--workers", "8", "--network", "10gbe"], capsys)
    assert code == 0 and "stops at" not in err
