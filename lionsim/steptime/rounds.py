"""Uneven workers between syncs: a step that exchanges nothing waits for no one (stragglers.py).

A local-step strategy (localsgd, diloco*, muloco, sparseloco, streaming-diloco: Strategy.sync_every
H > 1) sends nothing on its local steps, so its workers drift apart for a round of H steps and
wait once, before the sync's collective. With S_i worker i's factors summed over the round and m
the median worker's factor at one step (MaxDistribution.median):

    local step   the timeline at m: wait_s 0, and compute_max_s m's (nobody waits for the
                 slowest worker here: its lead is booked at the sync)
    sync step    the timeline at x = max_i S_i - (H - 1) m: the slowest worker's lead over
                 H - 1 median local steps lands on the sync step, whose wait_s is the round's,
                 E[T(x)] - T(m), and whose compute_max_s is x's

So a round's compute_max_s add up to max_i S_i x the compute, the round's slowest worker, whom the
sync waits for: estimate's mean step of a round has E[max_i S_i] / H x the compute, and so has the
mean of bench's rows over whole rounds (summary.csv), one meaning in both tools. With the exchange
after backward every row's wait_s is its compute_max_s less its compute_s, as at H = 1. bench books
step by step (Drift): a local step at its own median worker's factor m_t, the sync at
max_i (f_i + lead_i), each worker's lead its factors less the medians since the last sync.

So a round's wait is (E[max_i S_i] - H m) x the compute where the exchange runs after backward
(the local-step methods' reference schedule), and at H = 1 it is the per-step wait. With
--overlap buckets the lead is priced as a longer sync-step backward, which hides comm that a late
start would not: less than the even step's exposed comm per round. Independent jitter averages
out over a round (S_i's spread grows as sqrt(H), so the wait per step falls as 1 / sqrt(H)); a
persistent slow worker's lead does not (S_i = H FACTOR).

Streaming DiLoCo sends a fragment every H / P steps, and a fragment's all-reduce needs every
worker, so its rounds are the gaps between sends (sync_distribution): where P does not divide H,
g = H // P steps and g + 1, (H - P g) of its P gaps the longer, each gap's round priced and the
sync step's factor their mixture, so the wait per step is (sum over gaps of a gap's wait) / H. A
fast worker could run on for the tau steps between a send and its merge, absorbing some of the
lead; that is not credited (an upper bound for tau > 0).

round_distribution gives max_i S_i:

    exact        slow workers (S_i = H x their factor); episodes (one spec: the chain walked H
                 steps from its steady state, each worker independent; with slow workers, their
                 groups); one trace (with slow workers): every round of its cycle, round k
                 replaying rows ((k - 1) H + j) mod S
    monte carlo  jitter (a sum of lognormals has no closed form) and several episode specs: ROUNDS
                 one-worker rounds drawn from the spread's seed, the maximum of N of them exact on
                 that sample (P(max <= x) = prod over slow groups of F(x / factor)^count); a trace
                 with jitter or episodes: rounds of all N workers together, BUDGET draws at most
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from lionsim.steptime.spread import ComputeSpread, Episodes, Lognormal, Slow, Trace
from lionsim.steptime.stragglers import SAMPLES, MaxDistribution, max_distribution, scaled, uneven_times
from lionsim.steptime.timeline import PricedStep, StepTimes, StepWork

ROUNDS = 1 << 16
"""One-worker rounds drawn for jitter (each worker's round is independent of the others')."""
BUDGET = 1 << 25
"""Draws (rounds x workers x steps) of a Monte Carlo of all workers together (a trace with jitter)."""


def round_distribution(spread: ComputeSpread, workers: int, steps: int) -> MaxDistribution:
    """The sync step's factor x = max_i S_i - (steps - 1) m over a round of `steps` steps (module
    doc); `steps` 1: the per-step distribution itself."""
    step = max_distribution(spread, workers)
    if steps == 1:
        return step
    key = ("round", workers, steps)  # a sweep asks again for each strategy of one H
    if key not in spread.caches:
        spread.caches[key] = _round_max(spread, workers, steps)
    values, weights, method = spread.caches[key]
    return MaxDistribution(values - (steps - 1) * step.median, weights, step.median, method)


def sync_distribution(spread: ComputeSpread, workers: int, send_rate: Fraction) -> MaxDistribution:
    """The sync step's factor of a strategy that sends at `send_rate` (a / b in lowest terms: a sends
    in b steps) as the mixture of its gaps' rounds: b - a g of its a gaps take g + 1 steps, the
    others g = b // a (module doc); a gap of one step is the per-step distribution."""
    a, b = send_rate.numerator, send_rate.denominator
    short = b // a
    longer = b - a * short  # gaps of short + 1 steps
    first = round_distribution(spread, workers, short)
    if longer == 0:
        return first
    second = round_distribution(spread, workers, short + 1)
    share = longer / a
    return dataclasses.replace(
        first, values=np.concatenate([first.values, second.values]),
        weights=np.concatenate([(1 - share) * first.weights, share * second.weights]), exact_quantile=None)


def local_times(priced: PricedStep, work: StepWork, median: float) -> StepTimes:
    """A step that exchanges nothing: the median worker's, waiting for no one; its compute_max_s is
    the median's too (the slowest worker's lead is the sync's: module doc)."""
    return priced.times(scaled(work, median))


class Drift:
    """bench's booking, step by step: each worker's lead over the median worker since the last
    step that waited (module doc), paid by the next step that exchanges."""

    def __init__(self, workers: int) -> None:
        self.lead = np.zeros(workers)

    def times(self, priced: PricedStep, work: StepWork, factors: np.ndarray, waits: bool) -> StepTimes:
        if not waits:
            median = float(np.median(factors))
            self.lead += factors - median
            return local_times(priced, work, median)
        times = uneven_times(priced, work, factors, self.lead)
        self.lead[:] = 0.0
        return times


def _round_max(spread: ComputeSpread, workers: int, steps: int) -> tuple[np.ndarray, np.ndarray, str]:
    specs = spread.specs
    traces = [s for s in specs if isinstance(s, Trace)]
    fixed = _fixed(spread, workers)
    if traces:
        if len(traces) == 1 and all(isinstance(s, (Trace, Slow)) for s in specs):
            return *_trace_rounds(traces[0], fixed, steps), "exact"
        return _joint(spread, workers, steps)
    jitter = [s for s in specs if isinstance(s, Lognormal)]
    episodes = [s for s in specs if isinstance(s, Episodes)]
    if not jitter and len(episodes) <= 1:
        sums, probs = _episode_sums(episodes[0], steps) if episodes else (np.array([float(steps)]), np.ones(1))
        return *_max_over(sums, probs, fixed), "exact"
    if "one worker" not in spread.caches.setdefault(("round", steps), {}):  # the same draws for every N
        rng = np.random.default_rng([spread.seed, len(specs), steps, ROUNDS])
        spread.caches["round", steps]["one worker"] = _drawn(jitter, episodes, steps, ROUNDS, rng, np.ones(1))[:, 0]
    sums = spread.caches["round", steps]["one worker"]
    values, weights = _max_over(sums, np.full(len(sums), 1 / len(sums)), fixed)
    return values, weights, f"monte carlo ({ROUNDS} rounds of {steps} steps, seed {spread.seed})"


def _fixed(spread: ComputeSpread, workers: int) -> np.ndarray:
    """[W]: each worker's persistent factor (every slow spec's, multiplied; 1 for the others)."""
    out = np.ones(workers)
    for index, spec in enumerate(spread.specs):
        if isinstance(spec, Slow):
            out *= spec.factors(spread.seed, index, 1, workers, {})
    return out


def _max_over(sums: np.ndarray, probs: np.ndarray, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max_i fixed_i S_i for independent S_i ~ (sums, probs): P(max <= x) = prod_g F(x / f_g)^n_g
    over the groups of workers with one fixed factor f_g."""
    order = np.argsort(sums, kind="stable")
    sums, cdf = sums[order], np.minimum(np.cumsum(probs[order]), 1.0)
    factors, counts = np.unique(fixed, return_counts=True)
    candidates = np.unique(np.concatenate([f * sums for f in factors]))
    below = np.ones_like(candidates)
    for f, n in zip(factors, counts):
        at = np.searchsorted(f * sums, candidates, side="right") - 1
        below *= np.where(at >= 0, cdf[np.maximum(at, 0)], 0.0) ** n
    weights = np.diff(below, prepend=0.0)
    keep = weights > 0
    return candidates[keep], weights[keep] / weights[keep].sum()


def _steady_left(spec: Episodes) -> np.ndarray:
    """The chain's steady state: P(steps left in an episode after a step = k), k = 0..STEPS-1 (each
    k >= 1 as likely as a start, P x P(0))."""
    left = np.full(spec.steps, spec.probability)
    left[0] = 1.0
    return left / left.sum()


def _episode_sums(spec: Episodes, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """One worker's round: S = steps + (FACTOR - 1) x its steps in an episode, that count's exact
    distribution walking the chain from its steady state. States k >= steps stay in an episode to
    the round's end, so they are one state."""
    top = min(spec.steps - 1, steps)
    start = _steady_left(spec)
    dist = np.zeros((top + 1, steps + 1))  # [steps left, steps in an episode so far]
    dist[:top, 0] = start[:top]
    dist[top, 0] += start[top:].sum()
    p = spec.probability
    for _ in range(steps):
        nxt = np.zeros_like(dist)
        nxt[0] += (1 - p) * dist[0]
        nxt[top, 1:] += p * dist[0, :-1]  # an episode starts: STEPS - 1 left after this step
        nxt[:-1, 1:] += dist[1:, :-1]  # in an episode: one fewer left
        dist = nxt
    return steps + (spec.factor - 1) * np.arange(steps + 1.0), dist.sum(0)


def _drawn(jitter, episodes, steps: int, rounds: int, rng: np.random.Generator, fixed: np.ndarray,
           traces=()) -> np.ndarray:
    """[rounds, W]: each worker's factors summed over a round of `steps`, drawn (episodes from
    their steady state; a trace from a round of its cycle drawn at random)."""
    shape = (rounds, len(fixed))
    sigma = math.sqrt(sum(s.sigma ** 2 for s in jitter))  # lognormals multiply: one lognormal
    left = [rng.choice(e.steps, size=shape, p=_steady_left(e)) for e in episodes]
    first = [rng.integers(len(t.table), size=rounds) * steps for t in traces]
    total = np.zeros(shape)
    for t in range(steps):
        f = np.exp(sigma * rng.standard_normal(shape)) if jitter else np.ones(shape)
        for i, e in enumerate(episodes):
            starts = (left[i] == 0) & (rng.random(shape) < e.probability)
            now = starts | (left[i] > 0)
            left[i] = np.where(starts, e.steps, left[i]) - now
            f *= np.where(now, e.factor, 1.0)
        for trace, at in zip(traces, first):
            f *= trace.table[(at + t) % len(trace.table)]
        total += f * fixed
    return total


def _joint(spread: ComputeSpread, workers: int, steps: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A trace with jitter or episodes: rounds of all workers together (the trace ties them)."""
    rounds = int(min(SAMPLES, max(64, BUDGET // (workers * steps))))
    rng = np.random.default_rng([spread.seed, len(spread.specs), steps, rounds])
    of = lambda kind: [s for s in spread.specs if isinstance(s, kind)]  # noqa: E731
    sums = _drawn(of(Lognormal), of(Episodes), steps, rounds, rng, _fixed(spread, workers), of(Trace)).max(1)
    return sums, np.full(rounds, 1 / rounds), f"monte carlo ({rounds} rounds of {steps} steps, seed {spread.seed})"


def _trace_rounds(trace: Trace, fixed: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Every round of the trace's cycle, alike weighted: rounds start at rows 0, H, 2H, ... mod S."""
    table = trace.table * fixed
    length = len(table)
    whole, part = divmod(steps, length)
    cum = np.cumsum(np.vstack([np.zeros((1, table.shape[1])), table, table]), 0)
    firsts = (np.arange(length // math.gcd(length, steps)) * steps) % length
    sums = whole * table.sum(0) + cum[firsts + part] - cum[firsts]
    maxima = sums.max(1)
    return maxima, np.full(len(maxima), 1 / len(maxima))
