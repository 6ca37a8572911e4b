"""A synchronous step with uneven workers: it waits for the slowest (lionsim.steptime.spread).

Every exchange needs every worker's bucket, so it is ready when the slowest worker's is: with
worker i's compute scaled by f_i, bucket j is ready at max_i f_i (F + B C_j / P) + E C_j / P,
the timeline of timeline.py at the slowest worker's factor. So for one step, with T(f) the
step time of timeline.py at compute factor f:

    step_s            T(max f)
    compute_s         the median worker's forward + backward (compute_median_s)
    compute_max_s     the slowest worker's
    wait_s            T(max f) - T(median f): what waiting for the slowest adds to the median
                      worker's step (its idle time beyond what the network makes it wait anyway)

T is nondecreasing and convex in f (a maximum of lines), so `lionsim estimate` needs the
distribution of max f over N workers, not only its mean: E[step_s] = E[T(M)], and the step's
p50 / p99 are T at M's p50 / p99. max_distribution gives it:

    exact        one spec: lognormal by quadrature of M's quantile function, u -> Q(u^(1/N)),
                 over the logit of u (both tails resolved; exact to ~1e-6, tested on the
                 exponential, whose expected maximum is the harmonic number H_N);
                 slow: the factor itself; episodes: the chain's steady state (a worker is in an
                 episode with probability q = S P / (S P + 1 - P), independently), so M = FACTOR
                 with probability 1 - (1 - q)^N, else 1; trace: the trace's own steps
    monte carlo  several specs together: SAMPLES steady-state steps of N workers drawn from the
                 spread's seed

A step that exchanges nothing (a local step) waits for no one: its workers pay their drift at
the next sync (rounds.py).

The median worker's factor is the median of one worker's factor distribution (lognormal: 1;
slow: the median of the N fixed factors; episodes: FACTOR when q > 1/2; the sample median in a
Monte Carlo), not the expected median of N draws: they differ by O(1/N).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from lionsim.steptime.spread import ComputeSpread, Episodes, Lognormal, Slow, Trace
from lionsim.steptime.timeline import PricedStep, StepTimes, StepWork

SAMPLES = 4096
"""Monte Carlo steps drawn when several specs combine."""
POINTS = 4096
"""Quadrature points of an exact continuous maximum."""
TAIL = 60.0
"""The quadrature variable runs from -TAIL to ln N + TAIL: the mass beyond is below e^-TAIL."""


def scaled(work: StepWork, factor: float) -> StepWork:
    """`work` with its forward and backward scaled by `factor`."""
    return dataclasses.replace(work, forward_s=work.forward_s * factor, backward_s=work.backward_s * factor)


def step_seconds(priced: PricedStep, work: StepWork, factors: np.ndarray | float) -> np.ndarray:
    """T(f): step_s of `priced.times(scaled(work, f))` for every factor f at once."""
    f = np.asarray(factors, dtype=np.float64)
    window = work.backward_s * f + work.encode_s
    if not priced.count:
        exposed = np.zeros_like(f)
    elif not priced.during_backward:  # less what later steps' compute hides (PricedStep.hidden)
        exposed = np.broadcast_to(priced.hidden(work.forward_s * f, work.backward_s * f, work.encode_s), f.shape)
    else:
        exposed = np.broadcast_to(priced.exposed(window), f.shape)
    return (work.forward_s + work.backward_s) * f + work.encode_s + exposed + priced.extra.time_s \
        + work.decode_s + work.update_s


def uneven_times(priced: PricedStep, work: StepWork, factors: np.ndarray, lead: np.ndarray | None = None) -> StepTimes:
    """One step whose workers' compute is scaled by `factors` [W] (module doc); `lead` [W]: each
    worker's lead in compute factors from local steps since the last wait (rounds.py), which
    the step waits for too, and its compute_max_s includes (the round's slowest, less the medians
    its local steps booked)."""
    median = float(np.median(factors))
    late = float(factors.max() if lead is None else (factors + lead).max())
    at_median = priced.times(scaled(work, median))
    wait = float(step_seconds(priced, work, late)) - at_median.step_s
    return dataclasses.replace(at_median, wait_s=max(0.0, wait), compute_max_s=(work.forward_s + work.backward_s) * late)


@dataclass(frozen=True, slots=True)
class MaxDistribution:
    """The slowest of N workers' compute factor at a steady step, as weighted points."""

    values: np.ndarray
    weights: np.ndarray
    """Sum to 1."""
    median: float
    """The median worker's factor (module doc)."""
    method: str
    """How it was computed: "exact" or "monte carlo (...)"."""
    exact_quantile: Callable[[float], float] | None = None
    """A continuous maximum's quantile function (the points only approximate it)."""

    def mean(self) -> float:
        return float(self.weights @ self.values)

    def quantile(self, p: float) -> float:
        if self.exact_quantile is not None:
            return self.exact_quantile(p)
        order = np.argsort(self.values, kind="stable")
        cdf = np.cumsum(self.weights[order])
        return float(self.values[order][min(np.searchsorted(cdf, p - 1e-12), len(order) - 1)])


def max_of(survival_quantile: Callable[[np.ndarray], np.ndarray], workers: int,
           points: int = POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights): the maximum of N independent draws with the given quantile function,
    written as a function of the survival probability q = 1 - p (so q near 0, the tail, is exact
    in floating point), as quadrature points in the logit of the maximum's own probability u
    (module doc): u = 1 / (1 + e^-s), du = u (1 - u) ds, both tails resolved."""
    s = np.linspace(-TAIL, np.log(workers) + TAIL, points)
    log_u = -np.log1p(np.exp(-s))
    q = -np.expm1(log_u / workers)  # one draw's survival probability at the maximum's u
    weights = np.exp(log_u - np.log1p(np.exp(s)))  # u (1 - u)
    weights[[0, -1]] /= 2  # the trapezoid rule on an even grid
    return survival_quantile(q), weights / weights.sum()


def lognormal_survival_quantile(sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    """q -> exp(sigma Phi^-1(1 - q)) = exp(-sigma Phi^-1(q))."""
    def quantile(q: np.ndarray) -> np.ndarray:
        return np.exp(-sigma * torch.special.ndtri(torch.from_numpy(np.asarray(q, dtype=np.float64))).numpy())
    return quantile


def max_distribution(spread: ComputeSpread, workers: int, samples: int = SAMPLES) -> MaxDistribution:
    """The slowest worker's factor over N workers (module doc)."""
    spread.check(workers)
    if len(spread.specs) == 1:
        exact = _exact(spread.specs[0], spread.seed, workers)
        if exact is not None:
            return exact
    return _monte_carlo(spread, workers, samples)


def _exact(spec, seed: int, workers: int) -> MaxDistribution | None:
    if isinstance(spec, Lognormal):
        survival = lognormal_survival_quantile(spec.sigma)
        values, weights = max_of(survival, workers)
        quantile = lambda p: float(survival(-np.expm1(np.log(p) / workers)))  # noqa: E731  P(M <= x) = F(x)^N
        return MaxDistribution(values, weights, 1.0, "exact", quantile)
    if isinstance(spec, Slow):
        fixed = spec.factors(seed, 0, 1, workers, {})
        return MaxDistribution(np.array([fixed.max()]), np.ones(1), float(np.median(fixed)), "exact")
    if isinstance(spec, Episodes):
        q = spec.stationary()
        p_any = -np.expm1(workers * np.log1p(-q)) if q < 1 else 1.0
        median = spec.factor if q > 0.5 else (1 + spec.factor) / 2 if q == 0.5 else 1.0
        return MaxDistribution(np.array([1.0, max(1.0, spec.factor)]), np.array([1 - p_any, p_any]), median, "exact")
    if isinstance(spec, Trace):
        return MaxDistribution(spec.table.max(1), np.full(len(spec.table), 1 / len(spec.table)),
                               float(np.median(spec.table)), "exact")
    return None


def _monte_carlo(spread: ComputeSpread, workers: int, samples: int) -> MaxDistribution:
    rng = np.random.default_rng([spread.seed, len(spread.specs), samples])
    draws = np.ones((samples, workers))
    for index, spec in enumerate(spread.specs):
        if isinstance(spec, Lognormal):
            draws *= np.exp(spec.sigma * rng.standard_normal((samples, workers)))
        elif isinstance(spec, Slow):
            draws *= spec.factors(spread.seed, index, 1, workers, {})
        elif isinstance(spec, Episodes):
            draws *= np.where(rng.random((samples, workers)) < spec.stationary(), spec.factor, 1.0)
        else:  # a trace: its steps drawn at random
            draws *= spec.table[rng.integers(len(spec.table), size=samples)]
    return MaxDistribution(draws.max(1), np.full(samples, 1 / samples), float(np.median(draws)),
                           f"monte carlo ({samples} steps, seed {spread.seed})")


def expected_times(priced: PricedStep, work: StepWork, dist: MaxDistribution) -> tuple[StepTimes, float, float]:
    """(the expected step, its p50, its p99) when the slowest factor follows `dist`."""
    at_median = priced.times(scaled(work, dist.median))
    end = float(dist.weights @ step_seconds(priced, work, dist.values))
    times = dataclasses.replace(at_median, wait_s=max(0.0, end - at_median.step_s),
                                compute_max_s=(work.forward_s + work.backward_s) * dist.mean())
    p50, p99 = (float(step_seconds(priced, work, dist.quantile(p))) for p in (0.5, 0.99))
    return times, p50, p99
