"""estimate.csv's `algorithm` / `folded_ranks`, and the line a sweep prints where they change."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.algorithm_note import algorithm_notes
from lionsim.estimate.sweep import run_sweep
from lionsim.network import load_network
from lionsim.network.calls import CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, Group

GPT2 = dict(model="gpt2-124m", network="10gbe", strategies=["adamw@fp32-allreduce"])


def cheapest_all_reduce(nbytes: float, ranks: int, network_name: str) -> str:
    """The all-reduce algorithm with the least alpha-beta time for one call, each priced by its own
    formula on the bare link (the ideal library: no duplex share, cap or floor on a flat network)."""
    link = load_network(network_name).inter
    times = {name: COLLECTIVE_ALGORITHMS.get(name).cost("all_reduce", nbytes, Group(ranks=ranks, link=link)).time_s
             for name in COLLECTIVE_ALGORITHMS.names() if "all_reduce" in COLLECTIVE_ALGORITHMS.get(name).ops}
    return min(times, key=times.get)


def test_each_row_names_the_cheapest_algorithm_of_its_largest_call():
    """The bucket of 25 MB (fp32: 6,553,600 parameters) is the largest call; between powers of two
    Rabenseifner folds ranks in and another algorithm is the cheapest, which the column names."""
    bucket = 25 * 2**20
    for workers in (256, 294, 1000):
        row = estimate(EstimateConfig(**GPT2, workers=workers)).iloc[0]
        assert row["algorithm"] == cheapest_all_reduce(bucket, workers, "10gbe"), workers
        assert row["folded_ranks"] == 0
    assert estimate(EstimateConfig(**GPT2, workers=256)).iloc[0]["algorithm"] == "rabenseifner"
    assert estimate(EstimateConfig(**GPT2, workers=294)).iloc[0]["algorithm"] != "rabenseifner"


def test_a_named_folding_algorithm_says_how_many_ranks_it_folded_in():
    """MPICH folds the r = p - p' ranks beyond the largest power of two p' in first."""
    for workers, folded in ((294, 294 - 256), (1000, 1000 - 512), (512, 0)):
        row = estimate(EstimateConfig(**GPT2, workers=workers, algorithm="rabenseifner")).iloc[0]
        assert (row["algorithm"], row["folded_ranks"]) == ("rabenseifner", folded)


def test_nccl_rows_name_the_algorithm_and_protocol_its_model_picked():
    from lionsim.estimate.config import resolve
    from lionsim.network.cost import price

    cfg = EstimateConfig(**GPT2, workers=64, traits="nccl")
    row = estimate(cfg).iloc[0]
    cost = price(CollectiveCall(op="all_reduce", nbytes=25 * 2**20, dtype="float32"), 64, resolve(cfg).network)
    assert cost.protocol and row["algorithm"] == f"{cost.algorithm}/{cost.protocol}"


def test_a_sweep_whose_algorithm_changes_says_where_in_one_line():
    swept = run_sweep(EstimateConfig(**GPT2), "workers=256,294,300,384,512,1000,1024")
    rows = swept.rows
    changed = rows[rows["algorithm"] != "rabenseifner"]["workers"].tolist()
    assert changed == [294, 300, 384, 1000]
    (line,) = swept.algorithm_notes
    other = rows[rows["workers"] == 294]["algorithm"].iloc[0]
    assert "by rabenseifner at 256, 512, 1,024 workers; " in line
    assert f"{other} at 294-384, 1,000 workers" in line and "fold the extra ranks in first" in line


def test_folded_ranks_read_as_a_range_and_a_steady_algorithm_says_nothing():
    rows = pd.DataFrame({"strategy": "adamw", "transport": "fp32-allreduce", "library": "ideal",
                         "sweep_value": [256, 294, 1000], "workers": [256, 294, 1000],
                         "algorithm": "rabenseifner", "folded_ranks": [0, 38, 488]})
    (line,) = algorithm_notes(rows, "workers")
    assert "rabenseifner at 256 workers; rabenseifner with 38-488 ranks folded in at 294-1,000 workers" in line
    assert algorithm_notes(rows.assign(folded_ranks=0), "workers") == []


def test_the_fold_line_follows_what_each_algorithm_declares(monkeypatch):
    """CollectiveAlgorithm.folds is the one source: the note read the names rabenseifner and
    recursive_doubling out of the column, so a declaration changed nothing."""
    rows = pd.DataFrame({"strategy": "adamw", "transport": "fp32-allreduce", "library": "ideal",
                         "sweep_value": [256, 294], "workers": [256, 294],
                         "algorithm": ["hier:ring+rabenseifner+ring", "ring"], "folded_ranks": 0})

    def said() -> str:
        (line,) = algorithm_notes(rows, "workers")
        return line

    folding = [name for name, algorithm in COLLECTIVE_ALGORITHMS.items() if algorithm.folds]
    assert f"{' and '.join(folding)} fold the extra ranks in first" in said()
    rabenseifner = type(COLLECTIVE_ALGORITHMS.get("rabenseifner"))
    monkeypatch.setattr(rabenseifner, "folds", False)  # a phase of the hier: label no longer folds
    assert "fold" not in said()
    monkeypatch.setattr(type(COLLECTIVE_ALGORITHMS.get("ring")), "folds", True)  # as a plug-in might declare
    assert "where the workers are not a power of two ring and recursive_doubling fold" in said()


def test_a_sweep_of_the_baseline_alone_says_there_is_nothing_to_cross(monkeypatch):
    """It printed the crossovers table's header and no row."""
    from tests.helpers.cli import invoke_at

    done = invoke_at(80, ["estimate", "--model", "gpt2-124m", "-s", "adamw", "--sweep", "workers=8,16"], monkeypatch)
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.split())
    assert "nothing to cross: only the baseline, adamw@fp32-allreduce, was priced" in said and "crossover (workers)" not in said


def test_a_bandwidth_sweep_says_where_a_flip_slows_the_baselines_step(tmp_path):
    """NCCL over sockets flips the baseline's all-reduce from a ring to a tree at 50 GB/s and the step
    grows; the table said only which algorithm priced each point, so the speedups at 50 looked
    larger for no reason a reader could see."""
    path = tmp_path / "mycluster.toml"
    path.write_text('name = "team"\nworkers_per_node = 8\ndevice = "h100"\n[inter]\nalpha_us = 25.0\n'
                    "bandwidth_GBps = 2.9\n[intra]\nalpha_us = 1.0\nbandwidth_GBps = 380.0\n")
    swept = run_sweep(EstimateConfig(model="transformer-3b", network=str(path), workers=32,
                                     strategies=["adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"]),
                      "bandwidth=0.5:50:8")
    base = swept.rows[swept.rows["strategy"] == "adamw"].sort_values("sweep_value")
    values, steps, algorithms = (base[c].tolist() for c in ("sweep_value", "step_s", "algorithm"))
    flips = [i for i in range(1, len(values)) if algorithms[i] != algorithms[i - 1] and steps[i] > steps[i - 1]]
    assert flips, algorithms  # the case the note is for: a flip that slows the step
    i = flips[-1]
    said = " ".join(" ".join(swept.algorithm_notes).split())
    point = [f"{v:.3g}" for v in values]  # 8 points a factor 1.9 apart: 3 digits tell each from its neighbours
    assert len(set(point)) == len(point)
    assert (f"its step slows from {steps[i - 1] * 1e3:,.0f} ms at {point[i - 1]} GB/s to {steps[i] * 1e3:,.0f} ms "
            f"at {point[i]} GB/s") in said, said
    assert f"The baseline adamw@bf16-allreduce steps slower at {point[i]} GB/s than at {point[i - 1]} GB/s" in said
    assert "GB/s GB/s" not in said


def _flipping(values, flips: dict[int, str], slower_at: int) -> pd.DataFrame:
    """One run over `values` whose priced algorithm is `flips[i]` from point i on, its step growing at
    `slower_at` (a flip NCCL makes on a faster link), else shrinking as the link speeds up."""
    names, name = [], "ring/simple"
    for i in range(len(values)):
        name = flips.get(i, name)
        names.append(name)
    steps = [1 / v + (1.0 if i >= slower_at else 0.0) for i, v in enumerate(values)]
    return pd.DataFrame({"strategy": "powersgd", "transport": "lowrank-allreduce", "library": "nccl",
                         "baseline": "adamw@fp32-allreduce", "sweep_value": values, "workers": 16,
                         "algorithm": names, "folded_ranks": 0, "step_s": steps})


def test_a_bandwidth_notes_ranges_each_carry_the_unit_once_at_the_digits_that_tell_them_apart():
    """Over --sweep bandwidth=0.1:100:1000 the note read "ring/simple at 0.1-0.2561; ring/ll at 0.2579-21.54"
    (no unit, 4 digits where 3 tell the two apart) and ended "at 21.69 GB/s GB/s (the algorithm column)".
    The reference: each range's ends to 3 significant digits (a 1,000-point sweep's neighbours differ
    by 0.7%: at the ends chosen here 3 digits already differ), the unit after every range and once."""
    values = list(np.geomspace(0.1, 100, 1000))
    at = {"ring/ll": 137, "tree/ll": 777}  # where each starts
    (line,) = algorithm_notes(_flipping(values, {137: "ring/ll", 777: "tree/ll"}, slower_at=777), "bandwidth")
    three = [f"{v:.3g}" for v in values]
    for i in (136, 137, 776, 777):  # each end differs from its neighbours at 3 digits
        assert three[i] not in (three[i - 1], three[i + 1]), i
    a, b = at["ring/ll"], at["tree/ll"]
    assert (f"by ring/simple at 0.1-{three[a - 1]} GB/s; ring/ll at {three[a]}-{three[b - 1]} GB/s; "
            f"tree/ll at {three[b]}-100 GB/s; its step slows from ") in line, line
    assert f" ms at {three[b - 1]} GB/s to " in line
    assert line.endswith(f" ms at {three[b]} GB/s (the algorithm column).")
    assert line.count("GB/s") == 5 and "GB/s GB/s" not in line


def test_neighbouring_points_a_note_names_take_the_digits_that_tell_them_apart():
    """Two points 0.1% apart read the same at 3 digits ("1.38" twice): the note writes each with the
    digits that tell it from the other (the reference: the value rounded to 4 digits, where they differ)."""
    values = [1.0, 1.3841, 1.3849, 2.0]
    assert f"{values[1]:.3g}" == f"{values[2]:.3g}" and f"{values[1]:.4g}" != f"{values[2]:.4g}"
    (line,) = algorithm_notes(_flipping(values, {2: "ring/ll"}, slower_at=2), "bandwidth")
    assert f"ring/simple at 1-{values[1]:.4g} GB/s; ring/ll at {values[2]:.4g}-2 GB/s" in line, line


def _by_op(calls, workers: int, network) -> dict[str, str]:
    """Each op's largest call's label, priced one call at a time (the reference: no step's sums)."""
    from lionsim.network.cost import price

    largest = {}
    for call in sorted(calls, key=lambda c: -c.nbytes):
        largest.setdefault(call.op, price(call, workers, network).label)
    return largest


def test_a_step_whose_ops_went_by_different_algorithms_names_each():
    """a2a-1bit on nodes of 8 under NCCL: NCCL runs the all-gather and the 1-byte abstain flag's
    all-reduce, lionsim's two-level plan the all-to-all (whose bytes exceed the flat (N-1)/N). The
    column named only the all-gather's "ring/simple", which cannot have moved an all-to-all.
    The reference: the three calls the transport's docstring names (signs 1 bit a parameter to
    the all-to-all, MaVo's 2 bits at even N to the all-gather, the flag), each priced alone."""
    from lionsim.estimate.config import resolve
    from lionsim.network.calls import CollectiveCall

    cfg = EstimateConfig(model="gpt2-1.3b", network="h100x8-10gbe", workers=16,
                         strategies=["dlion-mavo@a2a-1bit", "adamw@fp32-allreduce"])
    rows = estimate(cfg).set_index("strategy")
    n = -(-int(rows.loc["dlion-mavo", "params"]) // (8 * 16)) * (8 * 16)  # padded to a multiple of 8N
    calls = [CollectiveCall("all_to_all", n // 8, dtype="uint8"), CollectiveCall("all_gather", 2 * n // 8, dtype="uint8"),
             CollectiveCall("all_reduce", 1, dtype="uint8")]
    labels = _by_op(calls, 16, resolve(cfg).network)
    assert labels["all_to_all"].startswith("hier:") and labels["all_gather"] == "ring/simple", labels
    assert rows.loc["dlion-mavo", "algorithm"] == " + ".join(f"{op} {label}" for op, label in labels.items())
    bucket = _by_op([CollectiveCall("all_reduce", 25 * 2**20, dtype="float32")], 16, resolve(cfg).network)
    assert rows.loc["adamw", "algorithm"] == bucket["all_reduce"]  # one op: its largest call's, as before


def test_ops_alike_name_one_algorithm_and_a_fold_in_any_op_counts():
    """--algorithm rabenseifner prices muon-dist's all-reduce, Bruck (the only other all-gather than
    a ring) its larger all-gather: both are named, and at 294 workers the all-reduce's 294 - 256
    folded ranks are the row's (the largest call's were 0). Under NCCL both go by ring/simple: one
    name, as a single-call row."""
    from lionsim.network.cost import label_folds

    row = estimate(EstimateConfig(model="gpt2-124m", network="10gbe", workers=294, traits="ideal",
                                  algorithm="rabenseifner", strategies=["muon-dist@fp32-allreduce"])).iloc[0]
    assert row["algorithm"] == "all_gather bruck + all_reduce rabenseifner"
    assert row["folded_ranks"] == 294 - 256 and label_folds(row["algorithm"])
    assert not label_folds("all_gather ring/simple + all_to_all hier:pairwise+pairwise")
    nccl = estimate(EstimateConfig(model="gpt2-124m", network="10gbe", workers=64, traits="nccl",
                                   strategies=["muon-dist@fp32-allreduce"])).iloc[0]
    assert nccl["algorithm"] == "ring/simple"


def test_phases_nccl_does_not_run_are_said_to_be_lionsims_own_plans():
    """Under NCCL a hier: run's phases (calls inside a node or among one GPU a node) are priced by
    lionsim's plans (lionsim.network.cost), not NCCL's model: the algorithms the column names there
    that NCCL runs by another for that op (nccl.RUNS) are said to be lionsim's, and nothing else is."""
    from lionsim.network.nccl import RUNS

    cfg = EstimateConfig(model="gpt2-124m", network="h100x8-10gbe", strategies=[
        "adamw@fp32-allreduce", "dlion-mavo@hier:int8-allreduce"])
    rows = run_sweep(cfg, "workers=8,16,32,64").rows
    runs = dict(RUNS)
    foreign = {}
    for label in rows["algorithm"]:
        for part in label.split(" + "):
            op, name = part.split(" ") if " " in part else ("all_reduce", part)
            if "/" not in name and name not in runs.get(op, (name,)):
                foreign[name] = None
    assert foreign and all(a in ("bruck", "rabenseifner", "recursive_doubling") for a in foreign)
    notes = algorithm_notes(rows, "workers")
    (own,) = [line for line in notes if "lionsim's own plans" in line]
    named, says = own.split(": ", 1)
    assert set(named.replace(" and ", ", ").split(", ")) == set(foreign)
    assert says.startswith("the nccl library runs none of these; they are lionsim's own plans")
    flat = rows[rows["transport"] == "fp32-allreduce"]
    assert not any("lionsim's own plans" in line for line in algorithm_notes(flat, "workers"))
    ideal = run_sweep(dataclasses.replace(cfg, traits="ideal"), "workers=8,16,32,64").rows
    assert not any("lionsim's own plans" in line for line in algorithm_notes(ideal, "workers"))


def test_a_flip_that_slows_a_step_below_the_tables_digits_is_not_said():
    """A new user read "its step slows from 53.2 ms at 8.11 GB/s to 53.2 ms at 15.2 GB/s"."""
    import pandas as pd

    from lionsim.estimate.algorithm_note import _slower_flips

    run = pd.DataFrame({"step_s": [0.05320, 0.05321, 0.0600]})
    keys = [("ring", False), ("tree", False), ("ring", False)]
    assert _slower_flips(run, keys) == [(2, 0.05321, 0.0600)]


def test_a_strategys_own_calls_are_no_sync_phase_of_their_own():
    """report.md said "steady + sync 33" of muon-dist (its all-gather) and "sync + sync 21" of muloco
    (its codes' all-gathers): only a momentum sync's steps are "+ sync"."""
    frame = estimate(EstimateConfig(model="gpt2-124m", strategies=["muon-dist", "muloco", "dlion-mavo"], workers=4,
                                    network="10gbe", steps=60, momentum_sync="every:4"))
    assert list(frame.run_phases) == ["steady 60", "local 58; sync 2", "steady 45; steady + sync 15"]
