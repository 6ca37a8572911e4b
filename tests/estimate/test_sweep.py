"""`--sweep`: parsing, the crossover search, and a sweep over a real configuration."""

from __future__ import annotations

import dataclasses
import io
import math

import numpy as np
import pandas as pd
import pytest

from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.config import resolve
from lionsim.estimate.sweep import (
    CROSSOVER_COLUMNS,
    TIE,
    Sweep,
    crossovers,
    parse_sweep,
    run_sweep,
    with_bandwidth,
    worker_counts,
    worker_crossover,
)
from lionsim.network import GB, load_network
from lionsim.reports.plots.estimate import plot_estimate_sweep
from lionsim.network.fabrics import SOCKETS
from lionsim.ranges import WORKERS


def test_parse_lists_and_ranges():
    assert parse_sweep("workers=32,8,16") == Sweep("workers", (8, 16, 32))
    assert parse_sweep("bandwidth=0.5, 10") == Sweep("bandwidth", (0.5, 10.0))
    assert parse_sweep("bandwidth=1:100:3").values == pytest.approx((1.0, 10.0, 100.0))  # geometric
    assert parse_sweep("workers=8:64:4", workers_per_node=8).values == (8, 16, 32, 64)
    assert parse_sweep("workers=2:16:3").values == (2, 6, 16)  # 2, 5.66, 16 rounded


def test_a_range_takes_the_counts_a_list_takes_and_says_where_points_met():
    """`workers=4:64:5` on nodes of 8 rounded 4 up to a node and priced 4 points, where `workers=4,8,...`
    prices 4 workers: a range's counts are those Network.nodes takes, the nearest by brute force."""
    network = load_network("h100x8-10gbe")
    per_node = network.workers_per_node
    ranged = parse_sweep("workers=4:64:5", per_node)
    assert ranged == parse_sweep("workers=4,8,16,32,64", per_node) and not ranged.note
    for start, end, count in ((3, 200, 12), (1, 40, 9), (5, 7, 3)):
        valid = [w for w in range(1, 2 * end) if w <= per_node or w % per_node == 0]  # what nodes() takes
        wanted = sorted({min(valid, key=lambda w: (abs(w - v), w)) for v in np.geomspace(start, end, count)})
        assert list(parse_sweep(f"workers={start}:{end}:{count}", per_node).values) == wanted
    merged = parse_sweep("workers=8:16:5", per_node)
    assert merged.values == (8, 16)
    assert merged.note.startswith("note: --sweep workers=8:16:5 prices 2 points, not 5")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nodes=1,2", "bad --sweep nodes=1,2: unknown variable 'nodes'; accepted: workers="),
        ("workers", "bad --sweep workers; accepted: workers="),
        ("workers=8,x", "bad --sweep workers=8,x: x is not a number; accepted: worker counts"),
        ("bandwidth=-1", "bad --sweep bandwidth=-1: -1 GB/s is out of range; accepted: bandwidths"),
        ("workers=1:8", "a range is START:END:COUNT"),
        ("workers=8:1:4", "bad --sweep workers=8:1:4: END must exceed START; accepted: workers=N"),
        ("bandwidth=100:0.1:5", "bad --sweep bandwidth=100:0.1:5: END must exceed START; accepted: workers=N"),
        ("bandwidth=1:10:1.5", "bad --sweep bandwidth=1:10:1.5: COUNT must be a whole number at least 2; accepted: "),
        ("bandwith=1,2", "unknown variable 'bandwith'; accepted: .*; did you mean 'bandwidth'\\?"),
        ("workers=2.5", "bad --sweep workers=2.5: 2.5 is no worker count; accepted: worker counts"),
    ],
)
def test_bad_sweeps(text, message):
    with pytest.raises(LionsimError, match=message):
        parse_sweep(text)


@pytest.mark.parametrize(("text", "item"), [("workers=2,2.5", "2.5"), ("workers=2,1e9", "1e9"),
                                            ("workers=0,4", "0"), ("workers=0:8:3", "0"),
                                            ("workers=2,x", "x is not a number")])
def test_a_bad_worker_count_is_refused_in_the_words_of_workers(text, item):
    """Each --sweep workers= value is refused as --workers is (ranges.WORKERS), in --sweep's form."""
    with pytest.raises(LionsimError) as raised:
        parse_sweep(text)
    said = str(raised.value)
    assert said.startswith(f"bad --sweep {text}: {item}") and "\n" not in said  # as typed, unquoted
    assert said.endswith(f"; accepted: worker counts (workers=N,N,... or workers=START:END:COUNT), each {WORKERS}")


@pytest.mark.parametrize(("text", "item"), [("bandwidth=1e-308", "1e-308 GB/s is out of range"),
                                            ("bandwidth=1e300", "1e300 GB/s is out of range"),
                                            ("bandwidth=1,1e7", "1e7 GB/s is out of range"),
                                            ("bandwidth=1e-7:1:3", "1e-7 GB/s is out of range"),
                                            ("bandwidth=inf", "inf GB/s is out of range"),
                                            ("bandwidth=1,x", "x is not a number")])
def test_a_bad_bandwidth_is_refused_in_the_words_of_a_profiles_bandwidth(text, item, capsys):
    """Each --sweep bandwidth= value lies in ranges.BANDWIDTH_GBPS, as a profile's bandwidth_GBps:
    1e-308 ended in an OverflowError traceback, 1e300 in "bandwidth_Bps = inf is not a finite number"."""
    from tests.helpers.cli import one_line_exit_2

    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "-s", "dlion-mavo", "--sweep", text], capsys,
                          f"error: bad --sweep {text}: {item}; accepted: bandwidths (bandwidth=GBPS,GBPS,... or "
                          "bandwidth=START:END:COUNT), each a number from 0.000001 to 1,000,000 (GB/s: 1 kB/s")
    assert "_Bps" not in err, err


def test_a_bandwidth_sweep_over_its_whole_range_prices_finite_steps():
    """The range's ends are accepted and priced: the step at 1 kB/s is the slowest, and 1 PB/s's no
    slower than 1 GB/s's (a library's cap may hold both to its rate)."""
    assert parse_sweep("bandwidth=1e-6,1e6").values == (1e-6, 1e6)
    frame = run_sweep(EstimateConfig(model="gpt2-124m", workers=8, strategies=["adamw"]), "bandwidth=1e-6:1e6:3").rows
    steps = frame.sort_values("sweep_value")["step_s"].to_numpy()
    assert np.isfinite(steps).all() and steps[0] > steps[1] >= steps[2] > 0, steps


def _frame(values, speedups):
    rows = [{"strategy": "adamw", "transport": "fp32-allreduce", "sweep_value": v, "speedup": 1.0,
             "baseline": "adamw@fp32-allreduce"} for v in values]
    rows += [{"strategy": "dlion-mavo", "transport": "int8-allreduce", "sweep_value": v, "speedup": s,
              "baseline": "adamw@fp32-allreduce"} for v, s in zip(values, speedups)]
    return pd.DataFrame(rows)


def _model_frame(values):
    """The step-time model's form, a + bytes/bandwidth: the baseline 1 + 8/b, the run 2 + 2/b s.
    Closed form: they meet where 6/b = 1, at 6 GB/s."""
    frame = _frame(values, [(1 + 8 / v) / (2 + 2 / v) for v in values])
    return frame.assign(step_s=[1 + 8 / v for v in values] + [2 + 2 / v for v in values])


def test_a_bandwidth_crossover_is_where_the_models_step_times_meet():
    # straight in log-log (the old rule) it lay at 5.2, straight in log x at 5.7: neither is the model's
    got = crossovers(_model_frame([2, 4, 8, 16]), Sweep("bandwidth", (2, 4, 8, 16)))
    assert list(got.columns) == CROSSOVER_COLUMNS
    row = got.iloc[0]
    assert len(got) == 1 and row["crossover"] == pytest.approx(6.0) and row["wins"] == "below"
    # without the run's step times (an older sweep.csv) the speedup is taken linear in 1/b
    plain = crossovers(_frame([1, 4], [0.5, 2.0]), Sweep("bandwidth", (1, 4)))
    assert plain["crossover"].iloc[0] == pytest.approx(1 / (1 - 0.75 / 3))


@pytest.mark.plots
def test_sweep_png_draws_the_line_through_each_bandwidth_crossover(monkeypatch, tmp_path):
    """The marker sits on the drawn line: the line, read at the crossover on its log-x axis, is 1.0."""
    import lionsim.reports.plots.estimate as plots

    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or [])
    frame = _model_frame([2, 4, 8, 16]).assign(workers=16, network="10gbe", device="h100", model="gpt2-124m", params=124e6,
                                               overlap="none")
    got = crossovers(frame, Sweep("bandwidth", (2, 4, 8, 16)))
    plots.plot_estimate_sweep(frame, got, "bandwidth", tmp_path / "sweep.png")
    bottom = figures[0].axes[1]
    line = max((ln for ln in bottom.lines if len(ln.get_xdata()) > 4), key=lambda ln: max(ln.get_ydata()))
    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    assert np.interp(math.log(6.0), np.log(x), y) == pytest.approx(1.0, abs=2e-4)


def test_crossover_both_ways_and_none():
    got = crossovers(_frame([1, 2, 4], [2.0, 0.5, 2.0]), Sweep("bandwidth", (1, 2, 4)))
    assert got["wins"].tolist() == ["below", "above"]
    none = crossovers(_frame([1, 2], [1.5, 1.2]), Sweep("bandwidth", (1, 2)))
    assert math.isnan(none["crossover"].iloc[0]) and none["wins"].iloc[0] == "everywhere"


def test_with_bandwidth_folds_efficiency():
    net = with_bandwidth(load_network("100gbe"), 2.0)
    assert (net.inter.bandwidth_Bps, net.inter.efficiency) == (2.0 * GB, 1.0)


@pytest.mark.plots  # renders its sweep plot
def test_bandwidth_sweep_finds_where_votes_start_to_win(tmp_path):
    cfg = EstimateConfig(model="gpt2-345m", tokens_per_worker=8192, workers=16, network="10gbe", device="h100",
                         strategies=["lion@fp32-allreduce", "dlion-mavo@a2a-1bit"])
    sweep, frame, got = run_sweep(cfg, "bandwidth=1:10000:25")
    assert len(frame) == 2 * 25 and frame["sweep_value"].nunique() == 25
    assert len(got) == 1
    row = got.iloc[0]
    # slow links favour the votes; on fast ones Lion's all-reduce hides behind backward and
    # the two-phase exchange (after backward, more passes) costs more
    assert row["wins"] == "below"
    dlion = frame[frame["strategy"] == "dlion-mavo"].set_index("sweep_value")["speedup"]
    assert dlion[dlion.index < row["crossover"]].min() > 1 > dlion[dlion.index > row["crossover"]].max()
    png, svg = plot_estimate_sweep(frame, got, sweep.variable, tmp_path / "sweep.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert svg.name == "sweep.svg" and svg.read_bytes().lstrip().startswith(b"<?xml")


@pytest.mark.parametrize("spec, line", [
    ("workers=8,16,8", "bad --sweep workers=8,16,8: 8 given twice; accepted: "),
    ("bandwidth=1.5, 1.5", "bad --sweep bandwidth=1.5, 1.5: 1.5 given twice"),
    ("workers=8:9:3", "the range rounds to one point (8 workers, whole nodes of 8); accepted: a range over at least 2"),
])
def test_a_sweep_that_collapses_to_fewer_points_than_given_is_refused(spec, line):
    """`--sweep workers=8,8` printed "over 8 to 8 workers (1 points)" and two identical columns."""
    with pytest.raises(LionsimError) as info:
        parse_sweep(spec, workers_per_node=8)
    assert line in str(info.value)


def test_one_value_is_priced_at_and_its_table_says_there_is_nothing_to_cross(monkeypatch):
    """One value (`--sweep bandwidth=0.125`) prices the strategies at that link, as the published
    local-step cases do: a table of one speedup column, no span."""
    from tests.helpers.cli import invoke_at

    assert parse_sweep("bandwidth=0.125") == Sweep("bandwidth", (0.125,))
    done = invoke_at(80, ["estimate", "--model", "gpt2-124m", "--workers", "8", "-s", "adamw@bf16-allreduce",
                          "-s", "lion", "--sweep", "bandwidth=0.125"], monkeypatch)
    said = " ".join(done.stdout.split())
    assert done.exit_code == 0, done.output
    assert "at bandwidth 0.125 GB/s (one point: nothing to cross)" in said and "0.125 to 0.125" not in said


def test_worker_crossover_is_a_whole_count_on_the_winning_side():
    """It was "1.11 workers" (log-log interpolation between 1 and 2)."""
    cfg = EstimateConfig(model="gpt2-124m", network="10gbe", workers=8,
                         strategies=["adamw@bf16-allreduce", "lion@fp32-allreduce", "lioncub-l1"])
    sweep, frame, got = run_sweep(cfg, "workers=1,2,4,8,16")
    for row in got[got["crossover"].notna()].itertuples():
        assert float(row.crossover).is_integer(), row
        speedup = {w: s for w, s in zip(frame[frame["strategy"] == row.strategy]["sweep_value"],
                                        frame[frame["strategy"] == row.strategy]["speedup"])}
        at = int(row.crossover)
        wins_there = estimate(dataclasses.replace(cfg, workers=at))  # one point: an estimate
        won = wins_there[wins_there["strategy"] == row.strategy]["speedup"].iloc[0] > 1
        assert won, (row, speedup)  # the crossover itself is on the winning side
        neighbour = at + 1 if row.wins == "below" else at - 1
        if neighbour >= 1:
            other = estimate(dataclasses.replace(cfg, workers=neighbour))
            assert other[other["strategy"] == row.strategy]["speedup"].iloc[0] <= 1, row


def test_worker_crossover_on_a_two_level_network_is_whole_nodes():
    cfg = EstimateConfig(model="gpt2-124m", network="h100x8-10gbe", workers=8,
                         strategies=["lion@fp32-allreduce", "dlion-mavo@a2a-1bit"])
    r = resolve(cfg)
    assert worker_counts(4, 40, 8) == [5, 6, 7, 8, 16, 24, 32, 40]
    got = worker_crossover(r, "dlion-mavo@a2a-1bit", 8, 64, wins_above=True)
    assert got == 8 or got % 8 == 0


def test_worker_sweep_must_fill_nodes():
    cfg = EstimateConfig(model="gpt2-124m", network="dgx-h100", workers=8)
    with pytest.raises(LionsimError) as refused:
        run_sweep(cfg, "workers=8,12")
    # the --sweep typed, as every whole-nodes refusal words it (lionsim.whole_nodes.check_workers)
    assert str(refused.value) == ("bad --sweep workers=8,12: 12 workers do not fill whole nodes of dgx-h100 (8 a node); "
                                  "accepted: at most 8 (one node) or a multiple of 8")


def test_a_speedup_within_half_a_percent_is_level_not_a_win():
    from lionsim.estimate.sweep import Sweep, crossovers

    def frame(speedups):
        return pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                              "baseline": "adamw@t"} for v, s in zip((1, 2, 4), speedups)])

    assert crossovers(frame([1.001, 0.998, 1.004]), Sweep("bandwidth", (1, 2, 4)))["wins"].tolist() == ["level"]
    assert crossovers(frame([1.2, 1.001, 1.1]), Sweep("bandwidth", (1, 2, 4)))["wins"].tolist() == ["partly"] * 2  # one row an edge
    got = crossovers(frame([0.5, 1.0, 2.0]), Sweep("bandwidth", (1, 2, 4)))
    # the level point makes no side, but the crossover lies where the drawn line reads 1: at 2 itself
    # (between 1 and 4 past the tie it was 4/3, where the line reads 0.75)
    assert got["wins"].tolist() == ["above"] and got["crossover"].iloc[0] == pytest.approx(2.0)
    # 1.003 ties too; the line crosses 1 on the segment from 1 to 2, speedup linear in 1/b there:
    # 0.5 + (1.003 - 0.5) w = 1 at w = 0.5 / 0.503, 1/b = 1 - w / 2
    got = crossovers(frame([0.5, 1.003, 2.0]), Sweep("bandwidth", (1, 2, 4)))
    assert got["crossover"].iloc[0] == pytest.approx(1 / (1 - 0.25 / 0.503))
    # no figure between a loss and a win: the line breaks there, so no crossover is placed in the gap
    got = crossovers(frame([0.5, float("nan"), 2.0]), Sweep("bandwidth", (1, 2, 4)))
    assert got["wins"].tolist() == ["above"] and got["crossover"].isna().all()
def test_a_bandwidth_sweep_flat_past_a_fabrics_cap_says_so_and_thins_its_markers(monkeypatch, tmp_path):
    """NCCL over sockets moves at most its cap a node (generic settings, lionsim.network.sockets): past it every curve is
    flat, and the plot marks where and says why; 200 points draw lines with a marker now and then."""
    import lionsim.reports.plots.estimate as plots

    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or [])
    cfg = EstimateConfig(model="gpt2-124m", workers=16, network="h100x8-10gbe", strategies=["adamw@bf16-allreduce"])
    sweep, frame, got = run_sweep(cfg, "bandwidth=0.1:100:200")
    step = frame.set_index("sweep_value")["step_s"]
    cap = 2 * SOCKETS.channel_GBps  # NCCL's default 2 channels a NIC
    assert step[step.index > cap].nunique() == 1 < step[step.index < cap].nunique()  # the model: flat past the cap
    plots.plot_estimate_sweep(frame, got, sweep.variable, tmp_path / "sweep.png")
    top, bottom = figures[0].axes
    assert any(f"{cap:g} GB/s a node" in label and "sockets" in label for label in top.get_legend_handles_labels()[1])
    for ax in (top, bottom):
        assert any(list(line.get_xdata()) == [cap, cap] for line in ax.lines)
    curve = next(line for line in top.lines if len(line.get_xdata()) >= 200)  # drawn as between.py's curve
    assert curve.get_markevery() not in (None, 1) and len(curve.get_markevery()) < 200
    # the subtitle spans the figure, not the panel the legend halves
    assert "gpt2-124m" in figures[0].get_suptitle() and not top.get_title()


@pytest.mark.parametrize("speedups", [[1.0001, 1.002, 1.03], [1.2, 1.001, 1.1], [1.001, 0.999, 1.0],
                                      [1.2, 1.1, 1.05], [0.9, 0.999, 0.8]])
def test_a_tie_is_a_tie_in_every_sweep_and_its_words(speedups, monkeypatch):
    """A run level with the baseline at some points (1.00x, within TIE) does not "win everywhere":
    the same speedups give the same verdict and words over bandwidth and over workers. The
    reference: a point wins where its speedup exceeds 1 + TIE, ties within TIE, loses below."""
    monkeypatch.setenv("COLUMNS", "200")  # the words on one line (at 80 the wins column breaks between them)
    from lionsim.cli.estimate_view import crossover_table
    from lionsim.numbers import TIE
    from rich.console import Console

    sides = ["win" if s > 1 + TIE else "lose" if s < 1 - TIE else "tie" for s in speedups]
    expected = {"win": "everywhere", "lose": "nowhere", "tie": "level"}[sides[0]] if len(set(sides)) == 1 else (
        "nowhere" if "win" not in sides else "partly")
    words = set()
    for variable, values in (("bandwidth", (1.0, 2.0, 4.0)), ("workers", (8, 16, 32))):
        frame = pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                               "baseline": "adamw@t"} for v, s in zip(values, speedups)])
        sweep = Sweep(variable, values)
        got = crossovers(frame, sweep)
        assert set(got["wins"]) == {expected}
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(crossover_table(got, sweep, frame))
        row = next(line for line in console.export_text().splitlines() if line.strip().startswith("lion"))
        cells = row.split()[1:-2]  # run | crossover (an edge of the ties, where partly) | wins | speedups
        words.add(tuple(cells[cells.index("wins"):] if "wins" in cells else cells[1:]))
    if expected == "partly":  # where it wins, in each variable's own unit (winning_ranges): one verdict in both
        assert all(w[0] == "wins" and "ties" in w for w in words) and len(words) == 2
        return
    assert len(words) == 1  # one rule, one wording, whatever the swept variable
    said = " ".join(words.pop())
    assert ("everywhere" in said and "ties" not in said) == (expected == "everywhere")


@pytest.mark.parametrize("args, says", [
    (["--network", "dgx-h100", "--sweep", "bandwidth=0.1:100:6"],
     "--sweep bandwidth=0.1:100:6 varies the inter-node link, and 8 workers fit on one node of dgx-h100 (8 workers "
     "per node): nothing crosses nodes; it needs more workers than one node holds, e.g. --workers 16"),
    (["--network", "dgx-h100", "--workers", "4", "--need", "utilisation=0.95"],
     "--need utilisation=0.95 solves for the inter-node link's bandwidth, and 4 workers fit on one node of dgx-h100"),
    (["--network", "10gbe", "--workers", "1", "--sweep", "bandwidth=1,10"],
     "1 worker fits on one node of 10gbe (1 worker per node): nothing crosses nodes; it needs more workers than one "
     "node holds, e.g. --workers 2"),
])
def test_the_inter_link_varied_on_one_node_is_refused(args, says, capsys):
    """On one node nothing crosses the inter link: a bandwidth sweep prices the same step at every
    point, --need answers 0 for every run; both are refused in one line naming a node's workers."""
    from tests.helpers.cli import run_cli

    code, out, err = run_cli(["estimate", "--model", "gpt2-124m", "-s", "adamw,lion", *args], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert says in " ".join(err.split()) and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("network, workers, gpus_per_node", [("10gbe", 2, None), ("dgx-h100", 8, 4)])
def test_the_inter_link_varied_across_nodes_moves_the_step(network, workers, gpus_per_node):
    """Two workers on a flat network (one a node), or a node of 8 split in two: the sweep acts."""
    cfg = EstimateConfig(model="gpt2-124m", strategies=["adamw", "lion"], network=network, workers=workers,
                         gpus_per_node=gpus_per_node)
    _, frame, _ = run_sweep(cfg, "bandwidth=0.1,100")
    steps = frame[frame["strategy"] == "adamw"].sort_values("sweep_value")["step_s"].tolist()
    assert steps[0] > steps[1]


def test_a_sweep_plot_with_a_compute_spread_says_so_in_its_title(tmp_path, monkeypatch):
    """sweep.png's steps are the expected step over uneven workers (--compute-spread), as the
    table's title says; its own title did not."""
    import lionsim.reports.plots.estimate as plots

    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or [])
    cfg = EstimateConfig(model="gpt2-124m", strategies=["adamw@bf16-allreduce"], compute_spread=["slow:1:1.5"])
    sweep, frame, got = run_sweep(cfg, "workers=8,16")
    plots.plot_estimate_sweep(frame, got, sweep.variable, tmp_path / "sweep.png")
    assert "compute spread slow:1:1.5" in figures[0].get_suptitle().replace("\n", " ")


def _edge(x0, s0, x1, s1):
    """Where the speedup, linear in 1/x between (x0, s0) and (x1, s1) (no step times: equal ones),
    reaches the tie band's edge 1.005."""
    return 1 / (1 / x0 + (1 / x1 - 1 / x0) * (1.005 - s0) / (s1 - s0))


@pytest.mark.parametrize("speedups, says, edges", [
    ([1.2, 1.1, 1.001, 1.0], lambda: f"wins below {_edge(2, 1.1, 4, 1.001):.4g} GB/s, ties above",
     lambda: [_edge(2, 1.1, 4, 1.001)]),
    ([1.0, 1.002, 1.05, 1.3], lambda: f"wins above {_edge(4, 1.05, 2, 1.002):.4g} GB/s, ties below",
     lambda: [_edge(4, 1.05, 2, 1.002)]),
    ([1.0, 1.1, 1.2, 1.0], lambda: f"wins from {_edge(2, 1.1, 1, 1.0):.4g} to {_edge(4, 1.2, 8, 1.0):.4g} GB/s, "
                                   "ties elsewhere", lambda: [_edge(2, 1.1, 1, 1.0), _edge(4, 1.2, 8, 1.0)]),
])
def test_a_run_that_wins_partly_says_the_bandwidths_where_it_wins_in_the_table_and_the_csv(tmp_path, speedups, says,
                                                                                          edges, monkeypatch):
    """Each edge where it starts (or stops) winning is a crossover: in crossover.csv's crossover column,
    the table's crossover column (with its unit) and a dotted line on sweep.png."""
    monkeypatch.setenv("COLUMNS", "200")  # the words on one line (at 80 the wins column breaks between them)
    from lionsim.cli.estimate_view import crossover_table
    from lionsim.reports.plots.estimate_marks import mark_crossovers
    from matplotlib.figure import Figure
    from rich.console import Console

    values = (1.0, 2.0, 4.0, 8.0)
    frame = pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                           "baseline": "adamw@t"} for v, s in zip(values, speedups)])
    sweep = Sweep("bandwidth", values)
    got = crossovers(frame, sweep)
    assert set(got["wins"]) == {"partly"} and set(got["wins_where"]) == {says()}
    assert got["crossover"].tolist() == pytest.approx(edges(), rel=1e-12)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(crossover_table(got, sweep, frame))
    table = console.export_text()
    assert says() in table
    # one row: every edge in its crossover cell, the verdict once
    assert ", ".join(f"{edge:.4g} GB/s" for edge in edges()) + f"   {says()}" in table
    assert table.count(says()) == 1
    ax = Figure().add_subplot()
    mark_crossovers(ax, got[got["crossover"].notna()], {"lion@t": "red"}, 1.0, 8.0, ax)
    marked = [line.get_xdata()[0] for line in ax.get_lines() if len(line.get_xdata())]  # the legend's are empty
    assert sorted(marked) == pytest.approx(sorted(edges()), rel=1e-12)
    assert [text.get_text() for text in ax.texts] == [f"{edge:.3g}" for edge in edges()]


def test_a_crossover_over_bandwidth_says_its_unit_in_both_columns():
    from lionsim.cli.estimate_view import crossover_table
    from rich.console import Console

    values = (1.0, 2.0, 4.0)
    frame = pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                           "baseline": "adamw@t"} for v, s in zip(values, (1.2, 1.1, 0.9))])
    sweep = Sweep("bandwidth", values)
    got = crossovers(frame, sweep)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(crossover_table(got, sweep, frame))
    at = f"{got['crossover'].iloc[0]:.4g}"
    assert f"{at} GB/s   below {at} GB/s" in console.export_text()


def test_a_run_that_wins_partly_over_workers_names_the_swept_counts_that_win():
    frame = pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                           "baseline": "adamw@t"} for v, s in zip((8, 16, 32, 64), (1.0, 1.1, 1.2, 1.001))])
    got = crossovers(frame, Sweep("workers", (8, 16, 32, 64)))
    assert got["wins_where"].tolist() == ["wins from 16 to 32 workers, ties elsewhere"] * 2
    assert got["crossover"].tolist() == [16, 32]  # each edge its crossover: the swept counts that win


def test_a_partly_winning_run_over_workers_prices_the_counts_between_for_its_edge():
    """It named the swept count (294) where the run wins from 257: at 257-293 workers, not a power of
    two, the ideal library's AdamW all-reduce falls back to a tree while D-Lion's int8 one rings
    (the algorithm column), and the counts between swept ones were not priced."""
    cfg = EstimateConfig(model="gpt2-124m", network="10gbe", workers=8,
                         strategies=["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"])
    _, frame, got = run_sweep(cfg, "workers=256,264")
    (row,) = got.itertuples()
    assert row.wins == "partly" and row.wins_where == f"wins from {int(row.crossover)} workers, ties below"

    def speedup(workers: int) -> float:  # one point: an estimate of its own
        priced = estimate(dataclasses.replace(cfg, workers=workers))
        return priced[priced["strategy"] == "dlion-mavo"]["speedup"].iloc[0]

    at = int(row.crossover)
    assert 256 < at < 264 and speedup(at) > 1 + TIE >= speedup(at - 1)


@pytest.mark.parametrize("workers, says", [("128", True), ("8", False)])
def test_a_sweep_over_workers_beside_another_workers_count_says_which_priced_what(workers, says):
    """--workers 128 --sweep workers=8,16 printed the crossovers over 8 to 16 workers under a table at 128
    without a word: the sweep's title says its counts stand in for --workers, where --workers is not one
    of them."""
    from typer.testing import CliRunner

    from lionsim.cli.app import app

    done = CliRunner().invoke(app, ["estimate", "--model", "gpt2-124m", "-s", "adamw,lion", "--workers", workers,
                                    "--sweep", "workers=8,16"])
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())  # the title wraps at the console's width
    assert "crossovers against adamw@fp32-allreduce over 8 to 16 workers (2 points" in text
    assert ("(2 points, the sweep's counts in place of --workers 128, which priced the table above)" in text) is says


@pytest.mark.parametrize("knots, values, wins", [
    # loses at 8, ties at 16 (1.003) and 32 (0.998), wins at 64; priced between: above 1 from 9 to 27, below
    # from 28 to 32, above from 33: the drawn line crosses 1 last between 32 and 64
    ([8, 9, 16, 27.5, 32, 32.5, 64], [0.9, 1.001, 1.003, 1.0, 0.998, 1.0, 1.2], "above"),
    # mirrored: wins at 8, ties at 16 and 32, loses at 64; above 1 up to 12, below from 13 to 20, above to 63
    ([8, 12.5, 16, 20.5, 32, 63, 64], [1.2, 1.0, 0.998, 1.0, 1.003, 1.001, 0.9], "below"),
])
def test_a_worker_crossover_lies_on_the_segment_the_line_crosses_nearest_the_win(knots, values, wins, monkeypatch):
    """Level swept points between a loss and a win: the crossover is on the segment between.py picks
    (nearest the winning point), as over bandwidth; bisecting every count from the loss to the win found
    a crossing of 1 far from it (9 workers, where the priced speedup falls below 1 again at 28-32).
    The reference: every count priced (the closed form on a dense grid), the winning count from which
    the speedup stays above 1 all the way to the winning point."""
    import lionsim.estimate.sweep as swept
    from types import SimpleNamespace

    def priced(n: float) -> float:
        return float(np.interp(n, knots, values))

    monkeypatch.setattr(swept, "_speedup_at", lambda r, label, workers, column="speedup", memo=None: priced(workers))
    r = SimpleNamespace(network=SimpleNamespace(workers_per_node=1))
    counts = (8, 16, 32, 64)
    got = crossovers(_frame(counts, [priced(n) for n in counts]), Sweep("workers", counts), r)
    dense = range(8, 65)
    if wins == "above":
        expected = min(c for c in dense if all(priced(n) > 1 for n in range(c, 65)))
    else:
        expected = max(c for c in dense if all(priced(n) > 1 for n in range(8, c + 1)))
    (row,) = got.itertuples()
    assert (row.wins, row.crossover) == (wins, expected)
    # its losing neighbour reads 1 or below: the priced speedup crosses 1 between the two
    assert row.loses_at == expected + (1 if wins == "below" else -1)
    assert row.speedup_at_crossover > 1 >= row.speedup_at_loses


def test_a_run_that_does_not_fit_says_so_beside_its_verdict(capsys):
    """DiLoCo at H=100 keeps a replica and its inner optimizer: on a 24 GiB RTX 4090 its state alone
    (1.3B parameters) does not fit, which the crossover table's "wins everywhere" left unsaid."""
    from tests.helpers.cli import run_cli

    argv = ["estimate", "-m", "gpt2-1.3b", "--workers", "16", "--network", "h100x8-10gbe", "--device", "rtx4090",
            "-s", "adamw@bf16-allreduce", "-s", "diloco@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit",
            "--local-steps", "100", "--sweep", "bandwidth=0.5:50:5", "--format", "csv"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    frame = estimate(EstimateConfig(model="gpt2-1.3b", workers=16, network="h100x8-10gbe", device="rtx4090",
                                    strategies=["adamw@bf16-allreduce", "diloco@bf16-allreduce",
                                                "dlion-mavo@a2a-1bit"], options={"local_steps": 100}))
    fits = dict(zip(frame["strategy"], frame["memory_fits"]))
    assert not fits["diloco"] and fits["dlion-mavo"]  # the reference: estimate.csv's own column
    code, out, err = run_cli(argv[:-2], capsys)
    crossovers = out.split("crossovers against", 1)[1]
    lines = [" ".join(line.split()) for line in crossovers.splitlines()]
    diloco = next(line for line in lines if line.startswith("diloco H=100"))
    dlion = next(line for line in lines if line.startswith("dlion-mavo"))
    assert "does not fit" in diloco and "does not fit" not in dlion
