"""Ops a fitted profile never measured (lionsim.network.unmeasured): `comm --fit` prices them with a
stand-in, the measured ops' per-call floor at full duplex, says so on stderr and in the file's
header, and estimate, comm and bench name them, the runs that issue them and how they are priced.
A profile fitted on all-reduce alone used to price a 1 kB all-to-all with no floor, below the
all-reduce it was compared with, and no command said that all-to-all was never measured."""

from __future__ import annotations

import json
import math
import re

import pytest

from lionsim.errors import LionsimError
from lionsim.network import TRAITS, CollectiveCall, load_network, price
from lionsim.network.calls import OPS
from lionsim.network.fit import FIT_ALGORITHMS, Measured, fit_profile
from lionsim.network.toml_out import profile_toml
from lionsim.network.unmeasured import line, unmeasured
from tests.helpers.cli import TINY_BENCH, invoke_at, run_cli

PRIOR = load_network("1gbe")
ALPHA = PRIOR.inter.alpha_s  # the fit keeps the prior's alpha
BANDWIDTH = 119.5e6  # B/s
SIZES = [4**k for k in range(5, 13)]  # 1 KiB .. 16 MiB
FLOORS = {"all_reduce": 566e-6, "all_gather": 720e-6, "all_to_all": 600e-6, "broadcast": 330e-6}
"""Per-call floors like gloo's built-in ones (lionsim.network.libraries)."""


def closed_form(op: str, n: float) -> float:
    """At 2 ranks, full duplex: ring all-reduce 2 alpha + n / B; ring all-gather and pairwise
    all-to-all alpha + (n / 2) / B; broadcast alpha + n / B; each plus its floor."""
    hops, moved = {"all_reduce": (2, n), "broadcast": (1, n)}.get(op, (1, n / 2))
    return FLOORS[op] + hops * ALPHA + moved / BANDWIDTH


def fitted(ops, tmp_path=None, name="fit"):
    points = [Measured(op, "float32", n, (closed_form(op, n),) * 6) for op in ops for n in SIZES]
    net, _ = fit_profile(points, workers=2, prior=PRIOR, backend="gloo", name=name, description="t",
                         record={"backend": "gloo", "ranks": 2})
    if tmp_path is None:
        return net
    path = tmp_path / f"{name}.toml"
    path.write_text(profile_toml(net))
    return str(path)


def test_an_unmeasured_op_is_priced_with_the_measured_per_call_floor():
    net = fitted(["all_reduce"])
    assert net.measured["ops"] == ["all_reduce"]
    assert net.traits.op("all_reduce").floor_s == pytest.approx(FLOORS["all_reduce"], rel=1e-3)
    for op in OPS[1:]:
        stand_in = net.traits.op(op)
        assert stand_in.floor_s == net.traits.op("all_reduce").floor_s and stand_in.algorithm == FIT_ALGORITHMS[op]
        assert stand_in.duplex == ((math.inf, 1.0, None),)
    # a 1 kB all-to-all: all-reduce's floor + alpha + (n / 2) / B, not alpha + (n / 2) / B alone
    a2a = price(CollectiveCall("all_to_all", 1000), 2, net).time_s
    assert a2a == pytest.approx(FLOORS["all_reduce"] + ALPHA + 500 / net.inter.bandwidth_Bps, rel=1e-3)
    assert a2a > 10 * (ALPHA + 500 / net.inter.bandwidth_Bps)


def test_with_several_measured_the_stand_in_is_their_median_floor_and_ps_takes_broadcasts():
    net = fitted(["all_reduce", "broadcast"])
    median = (FLOORS["all_reduce"] + FLOORS["broadcast"]) / 2
    assert net.traits.op("all_to_all").floor_s == pytest.approx(median, rel=1e-3)
    assert net.traits.op("ps_pull").floor_s == net.traits.op("broadcast").floor_s
    gaps = unmeasured(net)
    assert list(gaps) == ["all_gather", "reduce_scatter", "all_to_all", "reduce", "ps_push", "ps_pull"]
    assert gaps["all_to_all"] == f"with the measured ops' median floor ({median * 1e6:,.0f} us) at full duplex"
    assert gaps["ps_push"] == "with broadcast's floor and duplex"


def test_the_fit_file_names_the_ops_it_did_not_measure_and_reads_back(tmp_path):
    path = fitted(["all_reduce"], tmp_path)
    net = load_network(path)
    assert net.measured["ops"] == ["all_reduce"] and set(unmeasured(net)) == set(OPS) - {"all_reduce"}
    bad = tmp_path / "bad.toml"
    bad.write_text(open(path).read().replace('ops = [\n  "all_reduce",\n]', 'ops = ["allreduce"]'))
    with pytest.raises(LionsimError, match="'measured.ops' = \\['allreduce'\\]; accepted: an array of the ops"):
        load_network(str(bad))


@pytest.mark.parametrize("spec", ["gloo", "nccl", "ideal", "mpi"])
def test_a_built_in_library_has_no_unmeasured_op(spec):
    assert unmeasured(load_network("10gbe").with_traits(TRAITS.get(spec))) == {}


A2A = ["estimate", "--model", "gpt2-124m", "--tokens-per-worker", "1024", "--workers", "2",
       "-s", "adamw,dlion-mavo@a2a-1bit"]
"""An all-reduce baseline beside a run that issues an all-to-all and an all-gather."""


def said(argv, monkeypatch) -> str:
    done = invoke_at(200, argv, monkeypatch)
    assert done.exit_code == 0, done.output
    return " ".join(done.stdout.split())


def test_estimate_names_the_unmeasured_ops_the_run_and_the_stand_in(tmp_path, monkeypatch):
    text = said([*A2A, "--network", fitted(["all_reduce"], tmp_path)], monkeypatch)
    floor = f"{load_network(str(tmp_path / 'fit.toml')).traits.op('all_reduce').floor_s * 1e6:,.0f}"
    assert (f"Not measured in fit.toml: all_gather and all_to_all (dlion-mavo@a2a-1bit), priced with all_reduce's "
            f"floor ({floor} us) at full duplex. lionsim comm --backend gloo --fit fit.toml --collective "
            "all_reduce,all_gather,all_to_all measures them with the rest.") in text, text
    assert text.count("Not measured") == 1  # one line for the table, not one per run


def test_a_fully_fitted_profile_gives_no_line(tmp_path, monkeypatch):
    text = said([*A2A, "--network", fitted(list(FLOORS), tmp_path)], monkeypatch)
    assert "Not measured" not in text and "stand-in" not in text, text


def test_a_run_that_issues_only_measured_ops_gives_no_line(tmp_path, monkeypatch):
    text = said([*A2A[:-1], "adamw", "--network", fitted(["all_reduce"], tmp_path)], monkeypatch)
    assert "Not measured" not in text, text


def median_line(path) -> str:
    """The line an estimate of A2A's runs says on `path` (a fit of all-reduce and broadcast: the
    others priced with their median floor), by hand from the fit's floors."""
    traits = load_network(path).traits
    median = (traits.op("all_reduce").floor_s + traits.op("broadcast").floor_s) / 2
    return (f"Not measured in fit.toml: all_gather and all_to_all (dlion-mavo@a2a-1bit), priced with the measured "
            f"ops' median floor ({float(f'{median:.4g}') * 1e6:,.0f} us) at full duplex. lionsim comm --backend gloo "
            "--fit fit.toml --collective all_reduce,all_gather,all_to_all,broadcast measures them with the rest.")


def test_an_estimate_sweep_says_the_line_of_its_points_once(tmp_path, monkeypatch):
    """The breakdown at --workers 1 sends nothing, so its caption has no line; the sweep's points
    issue all-to-all and all-gather: the line, once, with the points it holds at (it said none)."""
    path = fitted(["all_reduce", "broadcast"], tmp_path)
    assert A2A[5:7] == ["--workers", "2"]
    text = said([*A2A[:6], "1", *A2A[7:], "--network", path, "--sweep", "workers=2,4,8"], monkeypatch)
    assert f"at 2-8 workers: {median_line(path)}" in text, text
    assert text.count("Not measured") == 1


def test_an_estimate_sweep_as_csv_says_the_line_once_on_stderr(tmp_path, capsys):
    """A CSV prints no caption: the line is a note on stderr, once for the sweep's 30 points."""
    path = fitted(["all_reduce", "broadcast"], tmp_path)
    code, out, err = run_cli([*A2A, "--network", path, "--sweep", "bandwidth=0.1:10:30", "--format", "csv"], capsys)
    assert code == 0, err
    line_ = median_line(path)
    assert f"note: n{line_[1:]}" in " ".join(err.split()), err
    assert err.count("ot measured") == 1 and len(out.splitlines()) == 1 + 30 * 2  # the header, 2 runs a point


def test_a_table_sweep_does_not_repeat_the_breakdowns_line(tmp_path, monkeypatch):
    path = fitted(["all_reduce", "broadcast"], tmp_path)
    text = said([*A2A, "--network", path, "--sweep", "bandwidth=0.1:10:30"], monkeypatch)
    assert median_line(path) in text and text.count("Not measured") == 1, text


OLD_FIT = ('[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.3635\n[traits]\nname = "fit"\nbackend = "gloo"\n'
           '[traits.ops.all_reduce]\nfloor_us = 565.6\nalgorithm = "ring"\n[measured]\nbackend = "gloo"\nranks = 2\n')
"""A profile `comm --fit --collective all_reduce` wrote before the stand-ins: all-reduce's entry alone."""


def test_a_fit_without_stand_ins_says_its_other_ops_cost_no_floor(tmp_path, monkeypatch):
    path = tmp_path / "fit.toml"
    path.write_text(OLD_FIT)
    text = said([*A2A, "--network", str(path)], monkeypatch)
    assert ("Not measured in fit.toml: all_gather and all_to_all (dlion-mavo@a2a-1bit), priced with no floor at "
            "full duplex (the ideal library's pricing).") in text, text
    hand = tmp_path / "hand.toml"  # written by hand (no [measured]): no refit of that file is offered
    hand.write_text(OLD_FIT.split("[measured]")[0])
    assert line(load_network(str(hand)), "hand.toml", {"x": {"all_to_all"}}) == (
        "Without an entry in hand.toml's [traits.ops]: all_to_all (x), priced with no floor at full duplex (the "
        "ideal library's pricing). lionsim comm --backend gloo --fit FILE.toml --collective all_reduce,all_to_all "
        "measures it with the rest.")


def test_comm_notes_an_unmeasured_op_it_tables(tmp_path, capsys):
    path = fitted(["all_reduce"], tmp_path)
    code, out, err = run_cli(["comm", "--network", path, "--workers", "2", "--collective", "all_to_all",
                              "--sizes", "1KB"], capsys)
    assert code == 0 and "note: not measured in fit.toml: all_to_all, priced with all_reduce's floor" in err, err
    code, out, err = run_cli(["comm", "--network", path, "--workers", "2", "--collective", "all_reduce",
                              "--sizes", "1KB"], capsys)
    assert code == 0 and "not measured" not in err, err


def test_bench_notes_the_run_that_issued_an_unmeasured_op(tmp_path, capsys):
    path = fitted(["all_reduce"], tmp_path)
    code, out, err = run_cli([*TINY_BENCH, "-s", "dlion-mavo@a2a-1bit,adamw", "--network", path,
                              "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    notes = json.loads((tmp_path / "r" / "run.json").read_text())["notes"]
    assert [n for n in notes if n.startswith("Not measured in fit.toml: all_gather and all_to_all "
                                             "(dlion-mavo@a2a-1bit), priced with all_reduce's floor")], notes
    assert "Not measured in fit.toml" in " ".join(out.split())


def _fake_sweep(cfg):
    """2 ranks' times from the closed forms (no process is started)."""
    from lionsim.measure import Point

    points = [Point(op, size, (closed_form(op, size),) * cfg.iters, dtype) for op, dtype in cfg.cases()
              for size in cfg.sizes]
    hosts = [{"hostname": "h", "boot_id": "b", "cores": 64, "threads": 1, "rank": r, "iface": None, "address": None}
             for r in range(cfg.ranks)]
    return points, hosts


@pytest.mark.parametrize("collectives", [["all_reduce"], []])
def test_comm_fit_says_which_ops_it_did_not_measure(tmp_path, capsys, monkeypatch, collectives):
    import lionsim.measure as measure

    monkeypatch.setattr(measure, "measure", _fake_sweep)
    path = tmp_path / "fit.toml"
    chosen = [a for op in collectives for a in ("--collective", op)]
    code, out, err = run_cli(["comm", "--backend", "gloo", "--fit", path, "--dtype", "float32", "--sizes",
                              "1KB:16MB:x16", "--iters", "3", "--warmup", "0", *chosen], capsys)
    assert code == 0, err
    header = [row for row in path.read_text().splitlines() if row.startswith("# not measured")]
    said = " ".join(err.split())
    if collectives:
        floor = f"{load_network(str(path)).traits.op('all_reduce').floor_s * 1e6:,.0f}"
        stand_in = (f"all_gather, reduce_scatter, all_to_all, broadcast, reduce, ps_push and ps_pull with "
                    f"all_reduce's floor ({floor} us) at full duplex")
        assert (f"note: fit.toml measured all_reduce only; the others are priced by a stand-in (a library's fixed "
                f"cost is mostly per call): {stand_in}; --collective all_reduce,all_gather,all_to_all,broadcast "
                "measures them too") in said, said
        assert header == [f"# not measured, so priced by a stand-in (a library's fixed cost is mostly per call): "
                          f"{stand_in}"]
    else:  # --fit's default ops: every op a transport issues, the parameter server's as broadcast
        assert "measured all_reduce" not in said and "stand-in" not in said, said
        assert len(header) == 1 and header[0].endswith(": reduce_scatter and reduce with the measured ops' median "
                                                       f"floor ({_median_us(path)} us) at full duplex; ps_push and "
                                                       "ps_pull with broadcast's floor and duplex"), header


def _median_us(path) -> str:
    traits = load_network(str(path)).traits
    floors = sorted(traits.op(op).floor_s for op in FLOORS)
    return f"{float(f'{(floors[1] + floors[2]) / 2:.4g}') * 1e6:,.0f}"


def test_a_parameter_server_run_is_told_to_measure_broadcast(tmp_path):
    """comm cannot measure ps_push or ps_pull: the fit prices them by broadcast, which it can."""
    net = load_network(fitted(["all_reduce"], tmp_path))
    text = line(net, "fit.toml", {"adamw@ps": {"ps_push", "ps_pull"}})
    assert text.startswith("Not measured in fit.toml: ps_push and ps_pull (adamw@ps), priced with all_reduce's floor")
    assert text.endswith("--fit fit.toml --collective all_reduce,broadcast measures them with the rest."), text


def test_a_calibrated_bench_is_offered_a_new_fit_not_a_refit_of_its_calibration():
    """A calibration is no file: `--fit this run's calibration` could not run. The line offers a fit
    of a new file and --network in place of --calibrate (bench's Results passes calibrated=True)."""
    from types import SimpleNamespace

    from lionsim.training.results import Results

    net = fitted(["all_to_all", "all_gather"])  # a calibration of 1-bit Adam's steady phase alone
    step = SimpleNamespace(collectives=[SimpleNamespace(op=op) for op in ("all_reduce", "all_to_all")], sent=None)
    record = SimpleNamespace(run=SimpleNamespace(label="onebit-adam@x"), steps=[step])
    runner = SimpleNamespace(records=[record], place=SimpleNamespace(comm=SimpleNamespace(world_size=2)))
    results = SimpleNamespace(network=net, calibration=object(), runner=runner,
                              plan=SimpleNamespace(network=SimpleNamespace(spec="1gbe")))
    text = Results.unmeasured_line(results)
    assert text.startswith("Not measured in this run's calibration: all_reduce (onebit-adam@x), priced with the "
                           "measured ops' median floor"), text
    assert text.endswith(". lionsim comm --backend gloo --fit FILE.toml --collective all_reduce,all_gather,all_to_all "
                         "measures it with the rest; bench --network FILE.toml in place of --calibrate prices the runs "
                         "by that fit."), text
    refit = line(net, "fit.toml", {"x": {"all_reduce"}})  # a file: its own refit, as before
    assert refit.endswith("--fit fit.toml --collective all_reduce,all_gather,all_to_all measures it with the rest.")


@pytest.mark.parametrize("floor_us", [102.1, 566.0])
def test_the_stand_in_is_named_so_after_the_profile_is_read_back(tmp_path, monkeypatch, floor_us):
    """102.1 us is no float that microseconds / 1e6 give back exactly: read back, the stand-in's floor
    missed the median of the measured floors by an ulp, and all_to_all was said to take all_reduce's
    floor and duplex. The fit records its stand-ins ([measured] stand_ins); a profile fitted before
    that is still told by value."""
    monkeypatch.setitem(FLOORS, "all_reduce", floor_us * 1e-6)
    net = fitted(["all_reduce"])
    assert net.measured["stand_ins"] == [op for op in OPS if op != "all_reduce"]
    back = load_network(fitted(["all_reduce"], tmp_path))
    said = f"with all_reduce's floor ({floor_us:.0f} us) at full duplex"
    assert unmeasured(net)["all_to_all"] == unmeasured(back)["all_to_all"] == said
    older = tmp_path / "older.toml"  # the same fit without the record: told by value, as before
    older.write_text(re.sub(r"stand_ins = \[\n(  .*,\n)*\]\n", "", (tmp_path / "fit.toml").read_text()))
    assert "stand_ins" not in older.read_text()
    if floor_us == 566.0:
        assert unmeasured(load_network(str(older)))["all_to_all"] == said
