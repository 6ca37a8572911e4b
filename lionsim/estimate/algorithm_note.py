"""The line a sweep prints where the algorithm that priced a run's exchange changes across it.

The `ideal` library (and any alpha-beta library) prices each call by the cheapest registered
algorithm (lionsim.network.cost), and which is cheapest moves with the worker count: between
powers of two Rabenseifner and recursive doubling fold the extra ranks in first (MPICH's way:
two whole-vector steps more, whatever p is), so there a pipelined tree or a ring may win, and
comm jumps from one count to the next. estimate.csv's `algorithm` and `folded_ranks` say
which priced each row's calls (its largest call's, or each op's where they differ); this note says
where that changed, once per run.

Over a bandwidth sweep NCCL chooses its algorithm and protocol on the link's rate (lionsim.network.nccl),
and a faster link can flip a call to one the fabric prices slower (a ring to a tree over sockets):
the step then grows with the bandwidth. Where a run's step grows at a flip the note says so with
both steps, and where that run is the baseline a line more says that the speedups past the flip are
against the slower baseline (the plot marks the same: lionsim.reports.plots.estimate_marks).
"""

from __future__ import annotations

import pandas as pd

from lionsim.estimate.library_checks import refused_ops
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS
from lionsim.network.libraries import TRAITS
from lionsim.network.cost import label_folds
from lionsim.numbers import in_words, ms_text
from lionsim.reports.points import labels, spans_text


def fold_words() -> str:
    """Why comm jumps between powers of two (collectives.base.fold), naming the algorithms that
    declare it (CollectiveAlgorithm.folds) as the algorithm column names them."""
    names = [name for name, algorithm in COLLECTIVE_ALGORITHMS.items() if algorithm.folds]
    return (f"where the workers are not a power of two {' and '.join(names)} fold the extra ranks in first: "
            "two whole-vector steps more")


def algorithm_notes(rows: pd.DataFrame, variable: str) -> list[str]:
    """Where the algorithms that priced a run's calls (estimate.csv's `algorithm`, and whether they
    folded ranks in) is not the same at every sweep point: one line for one such run; for several a
    line that says what follows, then one a run. [] where none changes. Its points and their unit
    are lionsim.reports.points' (spans_text)."""
    changed, folding, library, baseline = [], False, "", ""
    for (strategy, transport), run in rows.groupby(["strategy", "transport"], sort=False):
        run = run.sort_values("sweep_value").reset_index(drop=True)
        keys = [(a, f > 0) for a, f in zip(run["algorithm"], run["folded_ranks"])]
        if len(set(keys)) < 2:
            continue
        parts = []
        names = labels(run["sweep_value"], variable)  # each point told from its neighbours, unit once

        def point(i: int, names=names) -> str:
            return spans_text([i], names, variable)

        slower = _slower_flips(run, keys) if variable == "bandwidth" else []
        for key in dict.fromkeys(keys):
            where = [i for i, k in enumerate(keys) if k == key]
            name = key[0] or "nothing sent"
            if key[1]:
                folded = sorted({int(run["folded_ranks"][i]) for i in where})
                name += (f" with {folded[0]:,}" + (f"-{folded[-1]:,}" if len(folded) > 1 else "")
                         + " ranks folded in")
            parts.append(f"{name} at {spans_text(where, names, variable)}")
        label = f"{strategy}@{transport}"
        changed.append((label, "; ".join(parts) + "".join(
            f"; its step slows from {ms_text(a * 1e3)} ms at {point(i - 1)} to {ms_text(b * 1e3)} ms at {point(i)}"
            for i, a, b in slower)))
        if slower and label == run["baseline"].iloc[0]:
            i, _, _ = slower[-1]
            baseline = (f"The baseline {label} steps slower at {point(i)} than at {point(i - 1)} "
                        "(NCCL chooses on the link: a flip can slow a step), so speedups from there on are against "
                        "that slower step.")
        folding = folding or (variable == "workers" and _folding(run))
        library = run["library"].iloc[0]
    if not changed:
        return []
    fold = f"; {fold_words()}" if folding else ""
    printed = (rows["strategy"] + "@" + rows["transport"]).isin([label for label, _ in changed])
    own = own_plans_line(library, rows.loc[printed, "algorithm"])
    if len(changed) == 1:
        (label, where), = changed
        return [f"{label}: the {library} library priced its calls by {where} (the algorithm "
                f"column){fold}.", *filter(None, [own, baseline])]
    return [f"the {library} library priced each run's calls by (the algorithm column){fold}:",
            *(f"  {label}: {where}" for label, where in changed), *filter(None, [own, baseline])]


def own_plans_line(library: str, labels) -> str:
    """Where the algorithm column (`labels`) names an algorithm the library runs by another for that
    op (Traits.runs_op, as --algorithm is refused: lionsim.estimate.library_checks), what it is: a
    call its model does not price (a hier: phase, inside a node or among one GPU a node), priced by
    lionsim's own plans (lionsim.network.cost); "" where there is none."""
    if library not in TRAITS:
        return ""
    traits, names = TRAITS.get(library), {}
    for label in labels:
        for part in str(label).split(" + "):
            op, _, algorithm = part.rpartition(" ")
            for name in algorithm.split("/")[0].removeprefix("hier:").split("+"):
                if name in COLLECTIVE_ALGORITHMS and (refused := refused_ops(traits, name)) and (
                        not op or op in refused):
                    names[name] = None
    if not names:
        return ""
    return (f"{in_words(list(names))}: the {library} library runs none of these; they are lionsim's own plans "
            "for calls its model does not price (hier: phases, inside a node or among one GPU a node), priced "
            f"by lionsim's formulas over the links as {library} gets them (docs/clusters.md).")


def _slower_flips(run: pd.DataFrame, keys: list) -> list[tuple[int, float, float]]:
    """(index of the point at, step before, step at) where the priced algorithm changes from one
    sweep point to the next and the step grows by what the table's digits show: a flip that slows
    the step (module doc). A smaller growth is not said ("slows from 53.2 ms to 53.2 ms")."""
    steps = run["step_s"].astype(float).tolist()
    return [(i, steps[i - 1], steps[i]) for i in range(1, len(keys))
            if keys[i] != keys[i - 1] and ms_text(steps[i] * 1e3) != ms_text(steps[i - 1] * 1e3)
            and steps[i] > steps[i - 1]]


def _folding(run: pd.DataFrame) -> bool:
    """Whether the fold explains a change: a folding algorithm priced some point, and some point's
    workers are not a power of two."""
    folds = any(label_folds(label) for label in run["algorithm"])
    return bool(folds and any(int(w) & (int(w) - 1) for w in run["workers"]))
