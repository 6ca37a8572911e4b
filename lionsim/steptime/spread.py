"""Uneven workers (`--compute-spread`): how each worker's compute time varies from step to step.

Each spec gives a factor per worker per step that multiplies its compute (forward + backward);
several specs multiply together:

    lognormal:SIGMA          independent jitter: exp(SIGMA z), z ~ N(0, 1) per worker per step
                             (median 1; 0 <= SIGMA <= 3: MAX_SIGMA)
    slow:K:FACTOR            K persistent slow workers (which ones: drawn once from the seed),
                             FACTOR slower at every step: compute time x FACTOR (1 <= K <= W,
                             1 <= FACTOR <= 1000: a "slow" worker is never faster; MAX_FACTOR)
    episodes:P:FACTOR:STEPS  fail-slow episodes: each step a worker not in one starts one with
                             probability P; it lasts STEPS steps (the first included) at FACTOR
                             (1 to 1000, as slow's)
    trace:FILE.csv           compute times measured elsewhere, replayed: a CSV with the header
                             `step,worker,compute_s` and one row per (step, worker); workers
                             0..W-1 (exactly the run's W), every step holding all of them, times
                             finite and > 0 (seconds). Each time over the trace's median is the
                             factor, so the trace's shape multiplies this run's own compute
                             (a trace from another model or device still applies); run step t
                             replays the trace's ((t - 1) mod S)-th step: a short trace repeats.

Deterministic: the same seed gives the same factors, every strategy of a bench sees the same
ones, and a step's factors do not depend on which steps were asked for before (each step draws
from its own stream, numpy's PCG64 seeded by (seed, spec, step); episodes replay their chain).
"""

from __future__ import annotations

import csv
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from lionsim.errors import LionsimError
from lionsim.ranges import refusal, span
from lionsim.whole import Text

FORMS = "lognormal:SIGMA, slow:K:FACTOR, episodes:P:FACTOR:STEPS or trace:FILE.csv"
TRACE_COLUMNS = ("step", "worker", "compute_s")


def _bad(text: str, why: str) -> LionsimError:
    return LionsimError(refusal("--compute-spread", Text(text), FORMS, why))


MAX_SIGMA = 3.0
"""lognormal's top SIGMA: at 3 one step in a hundred runs a worker over 1,000x its median (exp(3 x
2.33)), far past measured jitter; past about 38 the expected slowest worker overflows to inf."""
MAX_FACTOR = 1000.0
"""slow's and episodes' top FACTOR: a worker 1,000x slower is stalled, not slow (1e300 priced steps
of 5.9e300 s)."""


def _number(text: str, part: str, name: str, *, low: float, low_open: bool, high: float = math.inf,
            why: str = "") -> float:
    """`part` as a number in the range (`why`: the reason for its bounds, ranges.span's brackets)."""
    try:
        value = float(part)
    except ValueError:
        raise _bad(text, f"{name} {part!r} is not a number") from None
    if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
        top = high if high < math.inf else None
        raise _bad(text, f"{name} {part} must be {span(low, top, above=low_open, why=why)}")
    return value


def _integer(text: str, part: str, name: str, low: int) -> int:
    value = _number(text, part, name, low=low, low_open=False)
    if not value.is_integer():
        raise _bad(text, f"{name} {part} must be {span(low, whole=True)}")
    return int(value)


class Spec(ABC):
    text: str
    """The spec as given."""

    def check(self, workers: int) -> None:
        """Fail (one line) if the spec cannot apply to `workers` workers."""

    @abstractmethod
    def factors(self, seed: int, index: int, step: int, workers: int, cache: dict) -> np.ndarray:
        """float64 [W]: each worker's factor at `step` (1-based); `index` is the spec's place,
        `cache` a dict the caller keeps for this spec and worker count (for chains of steps)."""


@dataclass(frozen=True, slots=True)
class Lognormal(Spec):
    text: str
    sigma: float

    def factors(self, seed: int, index: int, step: int, workers: int, cache: dict) -> np.ndarray:
        return np.exp(self.sigma * np.random.default_rng([seed, index, step]).standard_normal(workers))


@dataclass(frozen=True, slots=True)
class Slow(Spec):
    text: str
    count: int
    factor: float

    def check(self, workers: int) -> None:
        if self.count > workers:
            raise _bad(self.text, f"K = {self.count} slow workers is more than the {workers} workers")

    def slow_workers(self, seed: int, index: int, workers: int) -> np.ndarray:
        return np.random.default_rng([seed, index]).choice(workers, self.count, replace=False)

    def factors(self, seed: int, index: int, step: int, workers: int, cache: dict) -> np.ndarray:
        if "factors" not in cache:
            cache["factors"] = np.ones(workers)
            cache["factors"][self.slow_workers(seed, index, workers)] = self.factor
        return cache["factors"]


@dataclass(frozen=True, slots=True)
class Episodes(Spec):
    text: str
    probability: float
    factor: float
    steps: int

    def factors(self, seed: int, index: int, step: int, workers: int, cache: dict) -> np.ndarray:
        """The chain of steps replayed from step 1, or resumed from the cache's last step."""
        done, left = cache.get("chain", (0, np.zeros(workers, dtype=np.int64)))
        if step <= done:  # asked again for an earlier step: replay
            done, left = 0, np.zeros(workers, dtype=np.int64)
        for t in range(done + 1, step + 1):
            starts = (left == 0) & (np.random.default_rng([seed, index, t]).random(workers) < self.probability)
            left = np.where(starts, self.steps, left)  # steps left in each episode, this one included
            now = left > 0
            left = np.maximum(left - 1, 0)
        cache["chain"] = (step, left)
        return np.where(now, self.factor, 1.0)

    def stationary(self) -> float:
        """The steady-state chance that a worker is in an episode: S P / (S P + 1 - P) (each
        episode of S steps follows on average (1 - P) / P steps without one)."""
        p, s = self.probability, self.steps
        return 1.0 if p == 1 else s * p / (s * p + 1 - p)


@dataclass(frozen=True, slots=True)
class Trace(Spec):
    text: str
    table: np.ndarray
    """float64 [S, W]: each traced step's factors (times over the trace's median); NaN where the
    trace has no time (check refuses that)."""
    path: Path | None = None
    step_ids: tuple[int, ...] = ()
    """The trace's step numbers, one per row of `table`."""

    def check(self, workers: int) -> None:
        # holes first, within the workers both the trace and the run have: the line names the run's
        # workers (a trace of workers 0 and 5 under --workers 2 lacks worker 1, not workers 1..4)
        steps, width = self.table.shape
        for s, w in ((s, w) for s in range(steps) for w in range(min(width, workers))):
            if np.isnan(self.table[s, w]):
                raise _bad(self.text, f"{self.path} has no time for step {self.step_ids[s]}, worker {w}: every step "
                                      f"needs workers 0..{workers - 1} (--workers {workers})")
        if width != workers:
            raise _bad(self.text, f"the trace has {width} workers and the run {workers}")

    def factors(self, seed: int, index: int, step: int, workers: int, cache: dict) -> np.ndarray:
        return self.table[(step - 1) % len(self.table)]


def load_trace(text: str, path: Path) -> Trace:
    """A trace file (module doc) as factors [S, W], NaN where it has no time (Trace.check, which knows
    the run's workers, refuses that); every problem is one line."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        raise _bad(text, f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    header = [c.strip() for c in rows[0]] if rows else []
    if sorted(header) != sorted(TRACE_COLUMNS) or len(header) != 3:
        raise _bad(text, f"the trace's columns are {', '.join(header) or 'none'}; it needs exactly {', '.join(TRACE_COLUMNS)}")
    at = [header.index(c) for c in TRACE_COLUMNS]
    cells: dict[tuple[int, int], float] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            step, worker, seconds = float(row[at[0]]), float(row[at[1]]), float(row[at[2]])
        except (ValueError, IndexError):
            raise _bad(text, f"row {line} of {path} is not three numbers: {','.join(row)}") from None
        if not (step.is_integer() and worker.is_integer() and worker >= 0):
            raise _bad(text, f"row {line} of {path}: step and worker must be integers, worker >= 0")
        if not (math.isfinite(seconds) and seconds > 0):
            raise _bad(text, f"row {line} of {path}: compute_s {row[at[2]]} is not a finite time > 0")
        if (int(step), int(worker)) in cells:
            raise _bad(text, f"row {line} of {path}: step {int(step)}, worker {int(worker)} appears twice")
        cells[int(step), int(worker)] = seconds
    if not cells:
        raise _bad(text, f"{path} holds no rows")
    steps, workers = sorted({s for s, _ in cells}), 1 + max(w for _, w in cells)
    table = np.array([[cells.get((s, w), np.nan) for w in range(workers)] for s in steps])
    return Trace(text, table / np.nanmedian(table), Path(path), tuple(steps))


def parse_spec(text: str) -> Spec:
    """One `--compute-spread` spec (module doc)."""
    if not isinstance(text, str):
        raise _bad(str(text), "not a spec")
    kind, _, rest = text.strip().partition(":")
    kind, parts = kind.strip().lower(), rest.split(":") if rest else []
    if kind == "trace" and rest:
        return load_trace(text, Path(rest))
    arity = {"lognormal": 1, "slow": 2, "episodes": 3}
    if kind not in arity:
        raise _bad(text, f"unknown kind {kind!r}")
    if len(parts) != arity[kind]:
        raise _bad(text, f"{kind} takes {arity[kind]} value(s)")
    if kind == "lognormal":
        return Lognormal(text, _number(text, parts[0], "SIGMA", low=0.0, low_open=False, high=MAX_SIGMA,
                                       why="at 3 one step in 100 runs a worker over 1,000x its median"))
    if kind == "slow":
        return Slow(text, _integer(text, parts[0], "K", 1), _slowdown(text, parts[1]))
    return Episodes(text, _number(text, parts[0], "P", low=0.0, low_open=False, high=1.0),
                    _slowdown(text, parts[1]), _integer(text, parts[2], "STEPS", 1))


def _slowdown(text: str, part: str) -> float:
    """A slow worker's or a fail-slow episode's FACTOR: its compute time x FACTOR, so at least 1 (0.5
    would make a "slow" worker twice as fast: refused, as it contradicts the spec's name; 1 is an
    even control); at most MAX_FACTOR."""
    return _number(text, part, "FACTOR", low=1.0, low_open=False, high=MAX_FACTOR,
                   why="1: as fast as the others; 1,000x slower is stalled, not slow")


@dataclass(frozen=True, slots=True)
class ComputeSpread:
    """Every spec of a run, multiplied together."""

    specs: tuple[Spec, ...]
    seed: int = 0
    caches: dict = field(default_factory=dict, compare=False, repr=False)
    """Per (spec, worker count): what a spec keeps between steps (an episode chain's state)."""

    @classmethod
    def parse(cls, texts: list[str] | tuple[str, ...], seed: int = 0) -> ComputeSpread | None:
        """The specs of `--compute-spread` (None when none are given)."""
        specs = tuple(parse_spec(t) for t in texts or ())
        return cls(specs, seed) if specs else None

    def check(self, workers: int) -> None:
        for spec in self.specs:
            spec.check(workers)

    def factors(self, step: int, workers: int) -> np.ndarray:
        """float64 [W]: each worker's compute factor at `step` (1-based)."""
        out = np.ones(workers)
        for index, spec in enumerate(self.specs):
            out *= spec.factors(self.seed, index, step, workers, self.caches.setdefault((index, workers), {}))
        return out

    def delay(self, first: int, local: int, workers: int) -> Callable[[int, float], float]:
        """A real process holding workers first..first+local-1 of W: its sleep at a step, given the
        seconds its gradients took, (its slowest worker's factor - 1) x one worker's compute. A
        factor below 1 cannot make a real worker faster: it runs at full speed."""
        def seconds(step: int, took: float) -> float:
            slowest = float(self.factors(step, workers)[first:first + local].max())
            return max(0.0, slowest - 1.0) * took / local
        return seconds

    def describe(self) -> str:
        return " x ".join(s.text for s in self.specs)
