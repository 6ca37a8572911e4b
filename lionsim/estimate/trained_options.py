"""`estimate --from-run DIR`: each strategy priced with the options DIR trained it with.

A run's steps to target are its convergence at the options it trained with (H local steps, a rank,
a ratio, a warm-up), so an estimate that priced another value would price a step the figure does not
belong to. Every option the estimate reads (STEP or RUN: lionsim.forms) that the user did not give
is therefore DIR's recorded value (run.json's `runs[].options`; a sweep's cells' run.json), as
`--opt NAME.FIELD=VALUE` would give it: a -s list or none, the same. An option the user gave wins,
and where it differs from the trained value the row keeps its step but has no time to target
(lionsim.estimate.to_target.trained_otherwise). A TRAINING option is not read by the estimate, so
it is not carried over either (its figure is the trained value's whatever is priced).

A strategy is trained with one set of options in a bench run (its flags are per strategy) and in
a sweep (its axes are workload, workers, network, seed, runs and lr: no option is an axis), so a
strategy's options are one record; a sweep whose cells disagree is refused as it is read
(lionsim.estimate.from_run._cell_options)."""

from __future__ import annotations

from typing import Mapping

from lionsim.forms import TRAINING
from lionsim.strategies.core.base import STRATEGIES
from lionsim.strategies.core.form import option_specs


def trained_options(labels: tuple[str, ...], recorded: Mapping[str, dict], runs: list[tuple[str, str]],
                    given: Mapping[str, object]) -> dict[str, object]:
    """`NAME.FIELD` -> the value DIR trained it with, for each priced run's strategy (`runs`: strategy,
    transport) and each option the estimate reads that `given` (the user's options, by flag key or
    NAME.FIELD) leaves unset: the trained run of the same label, else the first of the same strategy
    (as to_target.Convergence.match takes its steps)."""
    out: dict[str, object] = {}
    for strategy, transport in runs:
        same = [label for label in labels if label.split("@", 1)[0] == strategy]
        label = f"{strategy}@{transport}" if f"{strategy}@{transport}" in labels else (same[0] if same else None)
        options = recorded.get(label) if label is not None else None
        if not options or strategy not in STRATEGIES:
            continue
        for spec in option_specs(strategy, STRATEGIES.get(strategy).Options):
            if spec.priced == TRAINING or spec.field not in options or spec.qualified in out:
                continue
            if spec.given_in(given):  # the user's wins
                continue
            out[spec.qualified] = options[spec.field]
    return out
