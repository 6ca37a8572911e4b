"""Fit a network profile to measured collectives (`lionsim comm --backend gloo|nccl --fit`).

Each collective is fitted in its algorithm's formula at the measured N (fitted.py's
FIT_ALGORITHMS): time = L(N) alpha + B(N) n beta, linear in (alpha, beta), so a size
range is a weighted least-squares problem. The weights make it minimise the *relative*
error, (model - t) / t, because sizes span orders of magnitude and an absolute fit would
let the largest messages decide everything; iteratively reweighted (IRLS) towards the sum
of |relative error|, so one size disturbed by a busy machine does not drag the line (a
squared loss would). alpha >= 0 and beta > 0 are kept by refitting with the bound active.

Regimes: the sizes (in order) are cut into at most `max_regimes` contiguous ranges of at
least `min_points` sizes each, every cut tried; each range gets its own line and the
cutting with the smallest `objective` (mean, median or worst |relative error| over all
sizes) wins, except that fewer regimes win whenever they come within `tie_tolerance` of it
(no regime is added for noise). A cut between sizes a < b becomes
max_bytes = floor(sqrt(a b)), the geometric middle.

`[inter]` of the written profile is one line fitted to every measured row together (each
in its own formula): the link the ops without an entry (ps_push, ps_pull) are priced with.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, Group
from lionsim.network.cost import price
from lionsim.network.fitted import FIT_ALGORITHMS, FittedCollective, Regime
from lionsim.network.link import GB, US, Link, Network

BETA_FLOOR = 1e-15
"""Seconds per byte when a range shows no growth with size (1e6 GB/s: bandwidth never binds)."""
_OBJECTIVES = {"mean": np.mean, "median": np.median, "max": np.max}
FIT_ERROR_COLUMNS = ("collective", "workers", "bytes", "measured_s", "fitted_s", "error")


@dataclass(frozen=True, kw_only=True, slots=True)
class FitConfig:
    """How regimes are searched."""

    max_regimes: int = 3
    """Most size ranges per collective, each with its own alpha and beta."""
    min_points: int = 2
    """Fewest measured sizes in one range. Two fit a line exactly, so a short range is taken
    only where it lowers the objective by more than tie_tolerance: a real jump (gloo's
    all_gather past 32 MB here), not noise."""
    objective: str = "mean"
    """What the regime search minimises over the sizes: "mean", "median" or "max" |relative error|."""
    tie_tolerance: float = 0.01
    """How much a cutting with more regimes must lower the objective to be taken over fewer."""
    irls_steps: int = 15
    """Reweighting rounds of each line fit (0: plain least squares on relative error)."""
    digits: int = 5
    """Significant digits kept in the written alpha_us and bandwidth_GBps."""

    def __post_init__(self) -> None:
        if self.objective not in _OBJECTIVES:
            raise LionsimError(f"unknown fit objective {self.objective!r}; accepted: {', '.join(_OBJECTIVES)}")
        if self.max_regimes < 1 or self.min_points < 1:
            raise LionsimError("a fit needs max_regimes >= 1 and min_points >= 1")


def coefficients(op: str, algorithm: str, workers: int) -> tuple[float, float]:
    """(L, B) with time = L alpha + B n beta for `op` by `algorithm` among `workers` ranks."""
    unit = Group(ranks=workers, link=Link(alpha_s=1.0, bandwidth_Bps=1.0))
    terms = COLLECTIVE_ALGORITHMS.get(algorithm).cost(op, 1.0, unit)
    return terms.latency_s, terms.bandwidth_s


def fit_line(x: np.ndarray, t: np.ndarray, irls_steps: int = 0) -> tuple[float, float]:
    """(alpha, beta) >= (0, BETA_FLOOR) minimising sum |(x @ (alpha, beta) - t) / t|^2, or
    with `irls_steps` > 0 reweighted towards sum |(x @ (alpha, beta) - t) / t|.

    x: [m, 2], each row (L, B n) of one measurement; t: [m] measured seconds."""
    alpha, beta = _weighted_line(x, t, np.ones(len(t)))
    for _ in range(irls_steps):
        r = np.abs(x @ np.array([alpha, beta]) / t - 1)
        alpha, beta = _weighted_line(x, t, 1 / np.sqrt(np.maximum(r, 1e-4)))
    return alpha, beta


def _weighted_line(x: np.ndarray, t: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Bounded least squares of w * (x @ theta / t - 1)."""
    a = x / t[:, None] * w[:, None]  # relative-error rows: a @ theta should be w
    ones = w
    scale = np.abs(a).max(axis=0)  # columns differ by ~1e7 (alpha vs bytes): scale for conditioning
    alpha, beta = np.linalg.lstsq(a / scale, ones, rcond=None)[0] / scale
    if alpha < 0:
        alpha, beta = 0.0, float(np.linalg.lstsq(a[:, 1:], ones, rcond=None)[0][0])
    if beta < BETA_FLOOR:
        beta = BETA_FLOOR
        alpha = max(0.0, float(np.linalg.lstsq(a[:, :1], ones - a[:, 1] * beta, rcond=None)[0][0]))
    return float(alpha), float(beta)


def _rounded_link(alpha: float, beta: float, digits: int) -> Link:
    def sig(v: float) -> float:
        return float(f"{v:.{digits}g}")

    return Link.from_units(alpha_us=sig(alpha / US), bandwidth_GBps=sig(1.0 / beta / GB))


def _cuttings(m: int, cfg: FitConfig):
    """Every way to cut m ordered points into 1..max_regimes ranges of >= min_points: the cut indices."""
    for k in range(1, cfg.max_regimes + 1):
        for cuts in itertools.combinations(range(1, m), k - 1):
            edges = (0, *cuts, m)
            if all(b - a >= cfg.min_points for a, b in zip(edges, edges[1:])):
                yield edges


def fit_collective(op: str, workers: int, sizes: np.ndarray, times: np.ndarray,
                   cfg: FitConfig = FitConfig()) -> FittedCollective:
    """Fitted regimes for one collective measured at `workers` ranks (sizes ascending, unique)."""
    algorithm = FIT_ALGORITHMS[op]
    lat, bw = coefficients(op, algorithm, workers)
    x = np.stack([np.full(len(sizes), lat), bw * sizes], axis=1)
    if len(sizes) < 2:
        raise LionsimError(f"--fit needs at least 2 measured sizes of {op}; got {len(sizes)}")
    best: tuple[float, int, tuple] | None = None
    for edges in _cuttings(len(sizes), cfg) if len(sizes) >= cfg.min_points else [(0, len(sizes))]:
        lines = [fit_line(x[a:b], times[a:b], cfg.irls_steps) for a, b in zip(edges, edges[1:])]
        model = np.concatenate([x[a:b] @ np.array(line) for (a, b), line in zip(zip(edges, edges[1:]), lines)])
        score = float(_OBJECTIVES[cfg.objective](np.abs(model / times - 1)))
        regimes = len(edges) - 1
        better = best is None or (score < best[0] - cfg.tie_tolerance if regimes > best[1] else score < best[0])
        if better:
            best = (score, regimes, tuple(zip(edges, edges[1:], lines)))
    assert best is not None
    out = []
    for i, (a, b, (alpha, beta)) in enumerate(best[2]):
        last = i == len(best[2]) - 1
        bound = math.inf if last else math.floor(math.sqrt(sizes[b - 1] * sizes[b]))
        out.append(Regime(max_bytes=bound, link=_rounded_link(alpha, beta, cfg.digits)))
    return FittedCollective(op=op, algorithm=algorithm, regimes=tuple(out), fitted_workers=workers)


def _medians(measured: pd.DataFrame) -> pd.DataFrame:
    """One row per (collective, workers, bytes): the median of time_s, sizes ascending."""
    return (measured.groupby(["collective", "workers", "bytes"], as_index=False)["time_s"].median()
            .sort_values(["collective", "bytes"], kind="stable"))


def fit_network(measured: pd.DataFrame, *, name: str, description: str,
                cfg: FitConfig = FitConfig()) -> tuple[Network, pd.DataFrame]:
    """A flat Network with a fitted entry per measured collective, and its error on every point.

    measured: columns collective, workers, bytes, time_s (one N per collective). Errors are
    of the returned Network priced by `price` (what `--network` gives), not of the raw fit."""
    points = _medians(measured)
    if points.empty:
        raise LionsimError("--fit needs measured rows; none were measured")
    entries, rows, t_all = [], [], []
    for op, group in points.groupby("collective", sort=False):
        if op not in FIT_ALGORITHMS:
            raise LionsimError(f"--fit cannot fit {op}; accepted: {', '.join(FIT_ALGORITHMS)}")
        if group.workers.nunique() != 1:
            counts = sorted(group.workers.unique())
            raise LionsimError(f"--fit takes one worker count per collective; {op} has {counts}")
        n = int(group.workers.iloc[0])
        sizes, times = group.bytes.to_numpy(float), group.time_s.to_numpy(float)
        entries.append(fit_collective(op, n, sizes, times, cfg))
        lat, bw = coefficients(op, FIT_ALGORITHMS[op], n)
        rows.append(np.stack([np.full(len(sizes), lat), bw * sizes], axis=1))
        t_all.append(times)
    inter = _rounded_link(*fit_line(np.concatenate(rows), np.concatenate(t_all), cfg.irls_steps), cfg.digits)
    net = Network(name=name, inter=inter, description=description, collectives=tuple(entries))
    errors = []
    for r in points.itertuples(index=False):
        fitted = price(CollectiveCall(r.collective, int(r.bytes)), int(r.workers), net).time_s
        errors.append((r.collective, r.workers, r.bytes, r.time_s, fitted, fitted / r.time_s - 1))
    return net, pd.DataFrame(errors, columns=list(FIT_ERROR_COLUMNS))


def error_summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Per collective: sizes, median and worst |error| (fractions)."""
    mag = errors.assign(abs_error=errors.error.abs())
    return (mag.groupby("collective", sort=False)["abs_error"]
            .agg(points="size", median_abs_error="median", worst_abs_error="max").reset_index())
