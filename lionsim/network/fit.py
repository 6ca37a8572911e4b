"""Fit a profile (a link plus the backend's traits) to measured collectives (`comm --fit`,
`bench --calibrate`).

What a sweep at R ranks can tell apart, and how each piece is found:

1. The slow mode (traits.SlowMode): in calls of at most 256 KiB, an iteration is slow when it
   takes more than max(1 ms, 2x) beyond its size's typical (25th percentile) time. Pooled over
   those sizes: the probability, the median extra, and the largest size still hit (at least
   5% of its iterations slow). Fewer than 2% slow (or 3 iterations) in all: no slow mode.
   The jitter: over the same sizes' fast iterations, each over its size's fast mean, the
   spread between their 10th and 90th percentiles as a normal's standard deviation
   ((q90 - q10) / 2.563), so the band a step's calls are given holds the fast steps too; the
   extra's jitter: the same spread of the slow iterations' extras over their median.
2. Each size's fast time: the mean of its iterations that are not slow (the model predicts
   means; the slow mode adds its own mean back).
3. The link's bandwidth B: what the op that uses the link best reaches at its largest sizes
   (broadcast when measured: one direction, nothing combined), each op's line fitted as in 4
   with its rate free, the rate read at its largest size (its bytes over the time its floor
   and alpha leave). An op's rate counts as measured only where its largest size is above
   the small calls' (SLOW_MAX_BYTES: there a busy host's wake-ups swamp the bytes) and its
   bytes make at least half that size's fast time (BYTES_MIN_SHARE); else the rate rests on
   differences within the floor's noise (8 MB/s read from 1-64 kB on a busy 2-core host), and
   B is the prior network's, the profile saying so (link_source). Its alpha is the prior
   network's (`--network`): at a few ranks a per-message alpha and the library's per-call floor
   cannot be told apart, so the floor takes what alpha does not.
4. Per op, in its base dtype (float32 when measured, else the first): fast time = floor_k +
   L alpha + S n / (B share_k) in size regime k, with (L, S) the coefficients of the op's
   algorithm at R ranks (FIT_ALGORITHMS: what gloo runs; the fitted traits pin it, so the
   model prices the op by the same formula). Linear in (floor_k, 1/share_k): least squares in
   relative error, reweighted (IRLS) towards the sum of |relative error| so one disturbed size
   does not drag the line; every cutting into at most 3 contiguous regimes of at least 2
   sizes, cut above 16 KiB, is tried, fewer regimes winning within 1% mean |error|. A line per
   regime, not one floor for all: on a shaped link part of the floor overlaps the transfer of
   larger messages, and a token bucket lets their first bytes through at once. What makes a
   profile: every share in (0, 1] (a fraction of B: 1/share >= 1/B is a bound of the least
   squares), and a fast time that never falls as size grows: a cutting whose next regime's
   line lies below the last one's at the cut is no candidate (one regime always is).
5. Per further dtype of a reducing op: what its times add beyond the base dtype's model,
   per byte combined, as that dtype's reduction rate (none when it adds < 2% or less).
6. The host cap: the backend's built-in one, raised to B when the link measured faster.
7. Every op not measured (calls.OPS): the parameter server's calls broadcast's traits where it was
   measured (lionsim's parameter server runs a gather and a broadcast); any other a stand-in, the
   measured ops' median per-call floor at full duplex, in its FIT_ALGORITHMS algorithm, rather
   than no floor: a library's fixed cost is mostly per call (lionsim.network.unmeasured says why
   and names such ops where a run issues one). [measured] `ops` lists the ops measured.

The errors returned are of the written profile priced by `price` (what --network gives), on
every measured size: the model's mean against the measured mean.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError
from lionsim.numbers import binary_bytes_text, bytes_text, set_in_binary
from lionsim.network.calls import OPS, REDUCING_OPS, CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, Group
from lionsim.network.cost import price
from lionsim.network.libraries import backend_traits
from lionsim.network.link import Link, Network
from lionsim.network.traits import OpTraits, Regime, SlowMode, Traits
from lionsim.network.unmeasured import stand_in_floor

SLOW_MAX_BYTES = 256 * 1024
"""Sizes the slow mode is looked for in (it is a wake-up cost: it hides under larger transfers)."""
REGIME_MIN_BYTES = 16 * 1024
"""Size regimes split only above this size: below it the bytes cost little beside the floor,
and a regime there would fit noise (a share of 0.001 on a 500-byte call)."""
BYTES_MIN_SHARE = 0.5
"""An op's fitted rate is a measured bandwidth only where its bytes take at least this share of
its largest size's fast time, that size above SLOW_MAX_BYTES (module doc, 3)."""
FIT_ERROR_COLUMNS = ("collective", "dtype", "workers", "bytes", "measured_s", "fitted_s", "error", "measured_median_s",
                     "iterations")
"""measured_s: the mean of the iterations (what the model's mean is compared with)."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One measured (collective, dtype, size): the slowest rank's time of every iteration."""

    op: str
    dtype: str
    nbytes: int
    """Bytes moved, calls.py convention."""
    times: tuple[float, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class FitConfig:
    """How duplex regimes are searched, and how far the slow mode reaches."""

    slow_up_to: float = 0.0
    """The slow mode reaches at least this size (bytes), however few of its iterations were
    slow: bench --calibrate gives its in-step sizes, all measured as a step meets them, where
    a few dozen iterations cannot tell a size that is never slow from one slow a quarter of the time."""
    slow_from: tuple[Measured, ...] = ()
    """Points the slow mode's probability and extra are found on instead of all of them (bench
    --calibrate: the calls measured as a step meets them); the jitter and which iterations are
    slow stay those of every point."""
    calm_from: tuple[Measured, ...] = ()
    """Points whose slow share is the calm one (traits.SlowMode.calm_probability; bench
    --calibrate: the same sizes back to back); none: no calm share."""
    shared_cores: bool = False
    """The ranks shared a host's cores (group.hosts.shared_cores): the slow mode found is marked a
    host's (traits.SlowMode.shared_cores)."""
    max_regimes: int = 3
    min_points: int = 2
    tie_tolerance: float = 0.01
    """How much more regimes must lower the mean |relative error| to be taken over fewer."""
    irls_steps: int = 15


FIT_ALGORITHMS = {"all_reduce": "ring", "all_gather": "ring", "reduce_scatter": "ring", "reduce": "ring",
                  "all_to_all": "pairwise", "broadcast": "ring", "ps_push": "param_server", "ps_pull": "param_server"}
"""The algorithm each op is fitted in and then priced by (the fitted traits pin it): what gloo
runs (ring all-reduce and all-gather, pairwise all-to-all; broadcast as one chain)."""


def coefficients(op: str, workers: int, nbytes: float) -> tuple[float, float, float]:
    """(L, S, R): latencies, bytes on the critical path and bytes combined of `op` on `nbytes`
    among `workers` ranks by its FIT_ALGORITHMS algorithm."""
    unit = Group(ranks=workers, link=Link(alpha_s=1.0, bandwidth_Bps=1.0, gamma_s_per_byte=1.0))
    terms = COLLECTIVE_ALGORITHMS.get(FIT_ALGORITHMS[op]).cost(op, nbytes, unit)
    return terms.latency_s, terms.bandwidth_s, terms.reduce_s


Z90 = 2.563
"""The width between a normal's 10th and 90th percentiles, in standard deviations."""


def _jitter(points: list[Measured], flags: dict[int, np.ndarray], within: list[int]) -> float:
    """The fast iterations' relative spread over `within` (module doc, 1), 4 significant digits."""
    rel = []
    for i in within:
        t = np.asarray(points[i].times)[~flags[i]]
        if len(t) >= 4:
            rel.append(t / t.mean())
    if not rel:
        return 0.0
    q10, q90 = np.percentile(np.concatenate(rel), [10, 90])
    return float(f"{(q90 - q10) / Z90:.4g}")


def slow_mode(points: list[Measured], up_to: float = 0.0) -> tuple[SlowMode, dict[int, np.ndarray]]:
    """The slow mode (module doc, 1) and, per point index, which iterations were slow; it reaches
    at least `up_to` bytes (FitConfig.slow_up_to)."""
    none = {i: np.zeros(len(p.times), bool) for i, p in enumerate(points)}
    flags, typical = dict(none), {}
    for i, p in enumerate(points):
        t = np.asarray(p.times)
        if p.nbytes <= SLOW_MAX_BYTES and len(t) >= 4:
            typical[i] = float(np.percentile(t, 25))
            flags[i] = t > typical[i] + max(1e-3, 2 * typical[i])
    hit = [points[i].nbytes for i in typical if flags[i].mean() >= 0.05]
    small = list(typical)
    only_jitter = SlowMode(max_bytes=max((points[i].nbytes for i in small), default=0),
                           jitter=_jitter(points, none, small))
    if not hit:
        return only_jitter, none
    reach = max(max(hit), up_to)
    within = [i for i in typical if points[i].nbytes <= reach]
    slow = np.concatenate([flags[i] for i in within])
    extras = np.concatenate([np.asarray(points[i].times)[flags[i]] - typical[i] for i in within])
    if slow.sum() < 3 or slow.mean() < 0.02:
        return only_jitter, none
    extra = float(np.median(extras))
    q10, q90 = np.percentile(extras, [10, 90])
    return SlowMode(probability=float(slow.mean()), extra_s=extra, max_bytes=reach, jitter=_jitter(points, flags, within),
                    extra_jitter=float(f"{(q90 - q10) / Z90 / extra:.4g}") if extra > 0 else 0.0), flags


def _fast_mean(p: Measured, slow: np.ndarray) -> float:
    t = np.asarray(p.times)
    return float(t[~slow].mean()) if (~slow).any() else float(t.mean())


def _lstsq_relative(a: np.ndarray, t: np.ndarray, irls_steps: int, offset: np.ndarray | None = None) -> np.ndarray:
    """theta >= 0 minimising sum |(offset + a @ theta - t) / t| (IRLS from least squares);
    columns that come out negative are dropped (held at 0) and the rest refitted."""
    offset = np.zeros(len(t)) if offset is None else offset
    free = np.ones(a.shape[1], bool)
    w = np.ones(len(t))
    for _ in range(irls_steps + 1):
        while True:
            rows = a[:, free] / t[:, None] * w[:, None]
            scale = np.abs(rows).max(axis=0)
            scale[scale == 0] = 1.0
            theta_free = np.linalg.lstsq(rows / scale, (1 - offset / t) * w, rcond=None)[0] / scale
            if (theta_free >= 0).all() or free.sum() == 1:
                break
            free[np.flatnonzero(free)[theta_free < 0]] = False
        theta = np.zeros(a.shape[1])
        theta[free] = np.maximum(theta_free, 0.0)
        r = np.abs((offset + a @ theta) / t - 1)
        w = 1 / np.sqrt(np.maximum(r, 1e-4))
    return theta


def _cuttings(sizes: np.ndarray, cfg: FitConfig):
    m = len(sizes)
    allowed = [c for c in range(1, m) if sizes[c - 1] >= REGIME_MIN_BYTES]
    for k in range(1, cfg.max_regimes + 1):
        for cuts in itertools.combinations(allowed, k - 1):
            edges = (0, *cuts, m)
            if all(b - a >= cfg.min_points for a, b in zip(edges, edges[1:])) or k == 1:
                yield edges


def _rises(regimes: list[Regime], sizes: np.ndarray, base: np.ndarray) -> bool:
    """Whether a line per regime (floor + base / share) never falls at a cut: each regime's
    line at its bound at or above the one before's. The bytes term is interpolated between
    the sizes either side of the cut: exact, since every FIT_ALGORITHMS cost is linear in n."""
    for k, (low, high) in enumerate(zip(regimes, regimes[1:])):
        i = int(np.searchsorted(sizes, low.max_bytes))  # the first size above the cut
        at = np.interp(low.max_bytes, sizes[i - 1:i + 1], base[i - 1:i + 1])
        if high.floor_s + at / high.share < low.floor_s + at / low.share:
            return False
    return True


def fit_op(sizes: np.ndarray, t: np.ndarray, lat: np.ndarray, crit: np.ndarray, alpha: float, bandwidth: float,
           cfg: FitConfig = FitConfig(), max_share: float | None = 1.0) -> tuple[Regime, ...]:
    """An op's size regimes, each with its own floor and a duplex share (of `bandwidth`, at most
    `max_share`; None: unbounded, inf where the bytes cost nothing), from its fast times `t` at
    ascending `sizes` (module doc, 4)."""
    y = t - lat * alpha  # what the floors and the bytes must explain
    base = crit / bandwidth  # seconds at share 1
    least = 0.0 if max_share is None else 1.0 / max_share  # the smallest 1/share
    best: tuple[float, int, tuple[Regime, ...]] | None = None
    for edges in _cuttings(sizes, cfg):
        model, regimes = lat * alpha, []
        for lo, hi in zip(edges, edges[1:]):
            a = np.stack([np.ones(hi - lo), base[lo:hi]], axis=1)  # [floor, 1/share above the least]
            floor, above = _lstsq_relative(a, np.maximum(y[lo:hi], 1e-9), cfg.irls_steps, least * base[lo:hi])
            inv = least + above
            model = model + np.concatenate([np.zeros(lo), floor + base[lo:hi] * inv, np.zeros(len(sizes) - hi)])
            bound = math.inf if hi == len(sizes) else math.floor(math.sqrt(sizes[hi - 1] * sizes[hi]))
            regimes.append(Regime(bound, float(f"{1.0 / inv:.4g}") if inv > 0 else math.inf, float(f"{floor:.4g}")))
        if not _rises(regimes, sizes, base):
            continue
        score = float(np.mean(np.abs(model / t - 1)))
        if best is None or (score < best[0] - cfg.tie_tolerance if len(regimes) > best[1] else score < best[0]):
            best = (score, len(regimes), tuple(regimes))
    assert best is not None  # one regime: a floor and 1/share >= 0 rise with size
    return best[2]


def _op_traits(op: str, regimes: tuple[Regime, ...]) -> OpTraits:
    """The op's traits, pinned to the algorithm it was fitted in: the first regime's floor is
    the op's, a later regime keeps its own only where it differs."""
    first = regimes[0].floor_s
    return OpTraits(floor_s=first, algorithm=FIT_ALGORITHMS[op],
                    duplex=tuple(Regime(r.max_bytes, r.share, None if r.floor_s == first else r.floor_s)
                                 for r in regimes))


def _link_rate(regimes: tuple[Regime, ...], sizes: np.ndarray, t: np.ndarray, lat: np.ndarray, crit: np.ndarray,
               alpha: float) -> float | None:
    """The op's rate at its largest size (B/s): its bytes over what its fast time leaves beyond
    alpha and its last regime's floor (`regimes` fitted at bandwidth 1), where that size is
    above SLOW_MAX_BYTES and its bytes take at least BYTES_MIN_SHARE of its fast time; None
    where not (module doc, 3). Read at the largest size itself, not off the line: with one
    size above many small ones, the robust line takes that size for a disturbed one."""
    moving = t[-1] - lat[-1] * alpha - regimes[-1].floor_s
    if sizes[-1] <= SLOW_MAX_BYTES or moving < BYTES_MIN_SHARE * t[-1]:
        return None
    return float(crit[-1] / moving)


def link_source(net: Network) -> str:
    """What the fitted link's bandwidth and alpha rest on, as the fit recorded it (one line)."""
    return net.measured.get("link", "")


def fit_profile(points: list[Measured], *, workers: int, prior: Network, backend: str, name: str,
                description: str, record: dict | None = None,
                cfg: FitConfig = FitConfig()) -> tuple[Network, pd.DataFrame]:
    """A flat profile (link + traits) fitted to `points` at `workers` ranks, and its errors.
    The profile's [measured] record says in `link` which of the link's figures were measured
    and which are the prior's (link_source)."""
    if not points:
        raise LionsimError("--fit needs measured rows; none were measured")
    slow, flags = slow_mode(points, cfg.slow_up_to)
    if cfg.slow_from:
        own = slow_mode(list(cfg.slow_from), cfg.slow_up_to)[0]
        calm = slow_mode(list(cfg.calm_from), cfg.slow_up_to)[0].probability if cfg.calm_from else None
        slow = replace(slow, probability=own.probability, extra_s=own.extra_s, extra_jitter=own.extra_jitter,
                       max_bytes=max(own.max_bytes, slow.max_bytes),
                       calm_probability=None if calm is None else min(calm, own.probability))
    if cfg.shared_cores and slow.probability > 0:
        slow = replace(slow, shared_cores=True)
    fast = {i: _fast_mean(p, flags[i]) for i, p in enumerate(points)}
    groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, p in enumerate(points):
        groups.setdefault((p.op, p.dtype), []).append((i, p.nbytes))
    for key in groups:
        groups[key].sort(key=lambda item: item[1])
        if len({b for _, b in groups[key]}) < 2:
            raise LionsimError(f"--fit needs at least 2 measured sizes of {key[0]} ({key[1]}); got 1")
    alpha = prior.inter.alpha_s
    lines, bases = {}, {}  # per op in its base dtype: (sizes, fast times, L, S)
    for op in dict.fromkeys(op for op, _ in groups):
        dtypes = [d for o, d in groups if o == op]
        bases[op] = "float32" if "float32" in dtypes else dtypes[0]
        idx = groups[(op, bases[op])]
        sizes = np.array([b for _, b in idx], float)
        coef = np.array([coefficients(op, workers, b) for b in sizes])
        lines[op] = (sizes, np.array([fast[i] for i, _ in idx]), coef[:, 0], coef[:, 1])
    rates = {}  # each op's rate at its largest sizes, its shares free (bandwidth 1: shares in B/s)
    for op, (sizes, t, lat, crit) in lines.items():
        rate = _link_rate(fit_op(sizes, t, lat, crit, alpha, 1.0, cfg, max_share=None), sizes, t, lat, crit, alpha)
        if rate is not None:
            rates[op] = rate
    bandwidth, source = _bandwidth(rates, lines, prior)
    ops = {op: _op_traits(op, fit_op(sizes, t, lat, crit, alpha, bandwidth, cfg))
           for op, (sizes, t, lat, crit) in lines.items()}
    reduce = {}
    for op in ops:
        dtypes = [d for o, d in groups if o == op]
        base = bases[op]
        for dtype in dtypes:
            if dtype != base and op in REDUCING_OPS:
                rate = _reduce_rate(op, groups[(op, dtype)], fast, ops[op], workers, prior, alpha, bandwidth)
                if rate is not None:
                    reduce[dtype] = rate
    measured = list(ops)
    for ps in ("ps_push", "ps_pull"):  # lionsim's parameter server runs a gather and a broadcast
        if "broadcast" in ops and ps not in ops:
            ops[ps] = replace(ops["broadcast"], algorithm=FIT_ALGORITHMS[ps])
    floor = stand_in_floor([ops[op].floor_s for op in measured])
    stand_ins = [op for op in OPS if op not in ops]  # recorded: read back, a floor may differ by an ulp
    for op in stand_ins:  # not measured: the measured per-call floor, not none (module doc, 7)
        ops[op] = OpTraits(floor_s=floor, algorithm=FIT_ALGORITHMS[op])
    host = max(backend_traits(backend).host_GBps, bandwidth / 1e9)
    traits = Traits(name=name, backend=backend, ops=tuple(ops.items()), reduce_GBps=tuple(reduce.items()),
                    host_GBps=float(f"{host:.4g}"), slow=slow, description=description)
    link = Link(alpha_s=alpha, bandwidth_Bps=bandwidth)
    record = dict(record or {}) | {"link": f"bandwidth {source}; alpha {alpha * 1e6:.3g} us, {prior.name}'s "
                                           "(a few ranks cannot tell it from the per-call floor)", "ops": measured,
                                  "stand_ins": stand_ins}
    net = Network(name=name, inter=link, description=description, traits=traits, measured=record)
    return net, fit_errors(points, net, workers)


def _bandwidth(rates: dict[str, float], lines: dict, prior: Network) -> tuple[float, str]:
    """The link's bandwidth (B/s, 5 significant digits) and what it rests on (module doc, 3)."""
    if rates:
        op = "broadcast" if "broadcast" in rates else max(rates, key=rates.get)
        sizes = lines[op][0]
        why = "" if op == "broadcast" else "; no broadcast measured, so a lower bound of the link"
        return float(f"{rates[op]:.5g}"), f"measured: {op}'s rate at its largest size, {_bytes_text(sizes[-1])}{why}"
    largest = max(lines[op][0][-1] for op in lines)
    prior_rate = prior.inter.bandwidth_Bps * prior.inter.efficiency
    small = largest <= SLOW_MAX_BYTES
    why = (f"the largest size measured ({_bytes_text(largest)}) is at most {_bytes_text(SLOW_MAX_BYTES)}, where "
           "the floor's noise swamps the bytes" if small
           else f"no op's bytes took {BYTES_MIN_SHARE:.0%} of its time at its largest size (above its floor)")
    return float(f"{prior_rate:.5g}"), f"{prior.name}'s, not measured: {why}"


def _bytes_text(n: float) -> str:
    return binary_bytes_text(n) if set_in_binary(n) else bytes_text(n)


def _reduce_rate(op, idx, fast, traits: OpTraits, workers, prior, alpha, bandwidth) -> float | None:
    """Bytes combined per second, 1e9 B/s, that make up what this dtype's times add (module doc, 5)."""
    extra, combined = [], []
    for i, nbytes in idx:
        lat, crit, comb = coefficients(op, workers, nbytes)
        model = traits.floor(nbytes) + lat * alpha + crit / (bandwidth * traits.share(nbytes))
        extra.append(fast[i] - model)
        combined.append(comb)
    extra, combined = np.array(extra), np.array(combined)
    if combined.sum() <= 0:
        return None
    gamma = float(np.dot(extra, combined) / np.dot(combined, combined))
    added = gamma * combined / np.array([fast[i] for i, _ in idx])
    if gamma <= 0 or np.median(added) < 0.02:
        return None
    return float(f"{1.0 / gamma / 1e9:.4g}")


def fit_errors(points: list[Measured], net: Network, workers: int) -> pd.DataFrame:
    """The profile's mean price of every point against its measured mean."""
    rows = []
    for p in points:
        model = price(CollectiveCall(p.op, p.nbytes, dtype=p.dtype), workers, net).time_s
        measured = float(np.mean(p.times))
        rows.append((p.op, p.dtype, workers, p.nbytes, measured, model, model / measured - 1,
                     float(np.median(p.times)), len(p.times)))
    return pd.DataFrame(rows, columns=list(FIT_ERROR_COLUMNS))


def error_summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Per collective and dtype: sizes, median and worst |error| (fractions)."""
    mag = errors.assign(abs_error=errors.error.abs())
    return (mag.groupby(["collective", "dtype"], sort=False)["abs_error"]
            .agg(points="size", median_abs_error="median", worst_abs_error="max").reset_index())
