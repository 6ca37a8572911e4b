"""Running a case: every strategy through a bench, then the metrics of each run.

Runs are pinned to one intra-op torch thread: results then do not depend on the machine's
core count (the reduction order of a multi-threaded kernel can), and the suite's tiny models
run far faster (measured here on 2 busy cores: 20 steps of the 4-worker mlp took 0.06 s on
one thread and 6.5 s on two, which spent the time synchronizing). `noise` > 0 trains with
float-level noise of that draw (noise.py), for the float tolerances `--update` measures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from lionsim.config.planning import plan
from lionsim.training.results import Results
from lionsim.training.runner import Runner
from lionsim.training.threads import torch_threads
from lionsim.divergence import RULE as DIVERGED_RULE
from lionsim.errors import LionsimError
from lionsim.regress.cases import Case
from lionsim.regress.metrics import add_gaps, run_metrics
from lionsim.regress.noise import with_float_noise
from lionsim.workloads import WorkloadConfig, build_workload

ProgressFn = Callable[[str], None]
"""Called after each finished run with a description like `mlp-n4-iid seed 0: lion@fp32-allreduce`."""


@dataclass(slots=True)
class CaseRun:
    """One case trained at one seed."""

    case: Case
    seed: int
    untrained_eval_loss: float
    """Held-out loss of the initial model (what every strategy must clearly beat)."""
    labels: list[str]
    """Run labels (strategy@transport) in case order."""
    hyper: dict[str, tuple[float, float]]
    """(lr, weight decay) per run label."""
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    """Run label -> metric -> value, for every run that finished."""
    errors: dict[str, str] = field(default_factory=dict)
    """Run label -> why it stopped (a diverged run), for every run that did not finish."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Run label -> wall seconds its bench took (one measurement, this machine as loaded)."""


def run_labels(case: Case) -> list[str]:
    """strategy@transport of every run of the case (validates the case)."""
    return [case.bench_config(s, case.seed).validate()[0].label for s in case.strategies]


def untrained_eval_loss(case: Case, seed: int) -> float:
    """Held-out loss of the initial model, built exactly as `run_bench` builds it."""
    workload = build_workload(WorkloadConfig(name=case.workload, workers=case.workers,
                                             batch_size=case.batch_size, seed=seed,
                                             data_split=case.data_split, size=case.size))
    return workload.evaluate(workload.model)["eval_loss"]


def _bench(cfg, noise: int):
    """The bench of one run, with float noise of draw `noise` (0: none)."""
    runner = Runner(plan(cfg))
    if noise:
        runner.workload.loss = with_float_noise(runner.workload.loss, noise)
    runner.run()
    return Results(runner).result()


def run_case(case: Case, seed: int, progress: ProgressFn | None = None, noise: int = 0) -> CaseRun:
    """Train every strategy of `case` at `seed` (with float noise of draw `noise`, 0: none) and
    measure its runs."""
    labels = run_labels(case)
    with torch_threads(1):
        # Building the workload first fails on bad input (data, split) before any training, so
        # a LionsimError inside a run comes from the run itself (its transport refused the
        # payload), as does a divergence: that run fails, with the message, and the others go on.
        result = CaseRun(case=case, seed=seed, untrained_eval_loss=untrained_eval_loss(case, seed),
                         labels=labels, hyper={})
        for strategy, label in zip(case.strategies, labels):
            result.hyper[label] = case.run_hyper(strategy)
            start = time.perf_counter()
            try:
                bench = _bench(case.bench_config(strategy, seed), noise)
            except LionsimError as e:
                result.errors[label] = str(e)
            else:
                if bench.diverged:
                    result.errors[label] = f"the run diverged: {', '.join(bench.diverged)} ({DIVERGED_RULE})"
                else:
                    result.metrics[label] = run_metrics(bench.steps)
            result.seconds[label] = time.perf_counter() - start
            if progress is not None:
                progress(f"{case.name} seed {seed}{f' noise {noise}' if noise else ''}: {label}")
    lion = next((lb for s, lb in zip(case.strategies, labels) if s.partition("@")[0] == case.reference), None)
    paired = [lb for s, lb in zip(case.strategies, labels)
              if s.partition("@")[0] in case.paired and lb != lion]
    add_gaps(result.metrics, lion, paired)
    return result

