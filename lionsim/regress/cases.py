"""The regression suite as data: small deterministic convergence cases with fixed seeds.

Each case is one workload, worker count and data split, trained under several strategies
from the same initial model on the same batches. Hyperparameters are per strategy (one
lr does not suit AdamW, SGD and the Lion family) and chosen for short runs: the strategies'
own defaults (Lion lr 1e-4) barely move a model in 100 steps.

The Lion family runs with a strong decoupled weight decay (lr * wd = 0.02 per step on mlp,
0.003 on gpt, 0.005 on vit) rather than the default wd 0.1: at 0.1 the decay is a rounding
error over 100 steps (doubling it moved mlp's final loss by 0.003), so a broken decay could
not show. On mlp, wd 2 trains global Lion as well as wd 1 (held-out loss 0.735 vs 0.727 at
seed 0) while a doubled decay in D-Lion moves its gap to Lion by 3x that metric's tolerance.

Non-i.i.d. cases (Dirichlet label skew) give D-Lion MaVo a wider cross-check margin against
global Lion: a class that only one worker holds is out-voted by the workers whose gradient
pushes its logit down, so a sign vote gives up 24-47% of Lion's loss reduction there (measured
on seeds 0-4) against under 10% on i.i.d. data.

One case, `mlp-n8-defaults`, pins nothing: its strategies train at their own defaults for the
workload, and the baseline records the hyperparameters they resolved to, so a changed default
(D-Lion's lr 3e-3 -> 3.3e-3 changes every bench result) fails the check on any platform, and
its metrics move with it.

Change a case (or add one) => bump SUITE_VERSION and run `lionsim regress --update`.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Mapping

from lionsim.config.bench import BenchConfig
from lionsim.errors import LionsimError

SUITE_VERSION = 2
"""Bumped whenever a case is added, removed or redefined (2: mlp-n8-defaults)."""

IID_MAVO_SLACK = 0.2
"""D-Lion MaVo gave up at most 9.5% of Lion's gain on the i.i.d. cases (seeds 0-4)."""
SKEWED_MAVO_SLACK = 0.6
"""... and at most 47% under Dirichlet(0.5) label skew."""

LION_FAMILY = ("lion", "dlion-mavo", "dlion-avg", "lioncub-l1", "signum-mv")


def _hyper(lion: tuple[float, float], adamw: tuple[float, float], sgdm: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """(lr, weight decay) per strategy name: one pair for the whole Lion family."""
    return {**{name: lion for name in LION_FAMILY}, "adamw": adamw, "sgdm": sgdm}


MLP_HYPER = _hyper(lion=(1e-2, 2.0), adamw=(3e-2, 0.1), sgdm=(0.3, 0.0))
GPT_HYPER = _hyper(lion=(3e-3, 1.0), adamw=(1e-2, 0.1), sgdm=(0.3, 0.0))
VIT_HYPER = _hyper(lion=(1e-2, 0.5), adamw=(3e-2, 0.1), sgdm=(0.3, 0.0))


@dataclass(kw_only=True, slots=True)
class Case:
    """One convergence case: a setting trained under several strategies at a fixed seed."""

    name: str
    """Stable id used by --case, the baseline file and reports, e.g. `mlp-n4-iid`."""
    workload: str
    """Workload name (`lionsim workloads`), or FILE.py:FUNC | module:FUNC (lionsim.workloads.plugin)."""
    size: str = "tiny"
    """Workload model size preset."""
    workers: int
    """N: data-parallel workers."""
    data_split: str = "iid"
    """iid | dirichlet:ALPHA."""
    steps: int
    """Training steps per strategy."""
    batch_size: int
    """Samples per worker per step."""
    seed: int = 0
    """The checked run's seed; calibration uses seed+1, seed+2, ..."""
    strategies: tuple[str, ...]
    """Runs, `NAME` or `NAME@TRANSPORT`, as `lionsim bench --strategy`."""
    hyper: Mapping[str, tuple[float, float]] | None = field(default_factory=dict)
    """(lr, weight decay) per strategy name; every strategy of the case needs an entry. None:
    pinned nowhere, every strategy trains at its own defaults for the workload."""
    mavo_slack: float = IID_MAVO_SLACK
    """Cross-check: the fraction of global Lion's held-out loss reduction D-Lion MaVo may give up."""
    reference: str = "lion"
    """The strategy the gaps and the cross-check measure against (global Lion)."""
    paired: tuple[str, ...] = LION_FAMILY
    """Strategies whose gap to the reference each run reports."""
    checked: tuple[str, ...] = ("dlion-mavo",)
    """Strategies the cross-check holds within mavo_slack of the reference's gain."""
    tie: str = "zero"
    """dlion-mavo tie rule (`lionsim bench --tie`): zero | alternate | random."""

    def setting(self) -> dict[str, Any]:
        """What makes runs of this case comparable with a baseline (all but the strategies)."""
        setting = {"workload": self.workload, "size": self.size, "workers": self.workers,
                   "data_split": self.data_split, "steps": self.steps, "batch_size": self.batch_size,
                   "seed": self.seed}
        if self.tie != "zero":  # the default stays unnamed, so existing baselines still match
            setting["tie"] = self.tie
        return setting

    @property
    def pinned(self) -> bool:
        """Whether the case sets the hyperparameters (else the strategies' defaults train)."""
        return self.hyper is not None

    def bench_config(self, strategy: str, seed: int) -> BenchConfig:
        """The `lionsim bench` run of one strategy of this case at `seed`."""
        lr, weight_decay = self.run_hyper(strategy)[:2] if self.pinned else (None, None)
        return BenchConfig(workload=self.workload, model_size=self.size, workers=self.workers,
                           batch_size=self.batch_size, steps=self.steps, seed=seed,
                           strategies=[strategy], lr=lr, weight_decay=weight_decay,
                           data_split=self.data_split, eval_every=self.steps, tie=self.tie)

    def run_hyper(self, strategy: str) -> tuple[float, float, tuple[float, float]]:
        """(lr, weight decay, betas) the run of `strategy` trains with: the case's (lr, weight
        decay) where it pins them, the strategy's own defaults for the workload elsewhere."""
        from lionsim.strategies import STRATEGIES, StrategyConfig

        name = strategy.partition("@")[0]
        lr = weight_decay = None
        if self.pinned:
            if name not in self.hyper:
                raise LionsimError(f"case {self.name} has no (lr, weight decay) for strategy {name!r}; "
                                   f"it has: {', '.join(self.hyper)}")
            lr, weight_decay = self.hyper[name]
        hyper = STRATEGIES.get(name).resolve_hyper(StrategyConfig(workload=self.workload, lr=lr,
                                                                  weight_decay=weight_decay))
        return hyper.lr, hyper.weight_decay, tuple(hyper.betas)


MAIN = ("adamw", "sgdm", "lion", "dlion-mavo", "dlion-mavo@a2a-1bit", "dlion-avg", "lioncub-l1")
LION_RUNS = ("lion", "dlion-mavo", "dlion-mavo@a2a-1bit", "dlion-avg", "lioncub-l1")

SUITE: tuple[Case, ...] = (
    Case(name="mlp-n4-iid", workload="mlp", workers=4, steps=100, batch_size=32,
         strategies=MAIN, hyper=MLP_HYPER),
    Case(name="mlp-n8-iid", workload="mlp", workers=8, steps=100, batch_size=32,
         strategies=LION_RUNS, hyper=MLP_HYPER),
    Case(name="mlp-n4-dir0.5", workload="mlp", workers=4, data_split="dirichlet:0.5", steps=100,
         batch_size=32, strategies=("adamw", "lion", "dlion-mavo", "dlion-avg", "lioncub-l1"),
         hyper=MLP_HYPER, mavo_slack=SKEWED_MAVO_SLACK),
    Case(name="mlp-n8-dir0.5", workload="mlp", workers=8, data_split="dirichlet:0.5", steps=100,
         batch_size=32, strategies=("lion", "dlion-mavo@a2a-1bit", "dlion-avg", "lioncub-l1"),
         hyper=MLP_HYPER, mavo_slack=SKEWED_MAVO_SLACK),
    Case(name="gpt-n4-iid", workload="gpt", workers=4, steps=100, batch_size=8,
         strategies=("adamw", "lion", "dlion-mavo", "dlion-avg", "lioncub-l1"), hyper=GPT_HYPER),
    Case(name="vit-n4-iid", workload="vit", workers=4, steps=150, batch_size=16,
         strategies=("adamw", "lion", "dlion-mavo@a2a-1bit"), hyper=VIT_HYPER),
    Case(name="mlp-n8-defaults", workload="mlp", workers=8, steps=100, batch_size=32,
         strategies=("adamw", "lion", "dlion-mavo", "dlion-mavo@a2a-1bit", "dlion-avg", "lioncub-l1"), hyper=None),
)


def case_names(cases: tuple[Case, ...] | list[Case] = SUITE) -> list[str]:
    return [c.name for c in cases]


def select_cases(patterns: list[str] | None, cases: tuple[Case, ...] | list[Case] = SUITE) -> list[Case]:
    """The cases matching any of `patterns` (exact names or globs), in suite order; all if none.

    A pattern matching no case fails with the list of cases.
    """
    if not patterns:
        return list(cases)
    names = case_names(cases)
    for pattern in patterns:
        if not fnmatch.filter(names, pattern):
            raise LionsimError(f"unknown case {pattern!r}; choose from: {', '.join(names)} (globs like 'mlp-*' work)")
    return [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


def validate_cases(cases: list[Case]) -> None:
    """Reject a bad case (unknown strategy or transport, missing hyperparameters) before any training."""
    seen: set[str] = set()
    for case in cases:
        if case.name in seen:
            raise LionsimError(f"case {case.name} defined twice; case names must be unique")
        seen.add(case.name)
        if not case.strategies:
            raise LionsimError(f"case {case.name} has no strategies")
        labels = [case.bench_config(s, case.seed).validate()[0].label for s in case.strategies]
        if len(set(labels)) < len(labels):
            raise LionsimError(f"case {case.name} runs a strategy twice: {', '.join(labels)}")
