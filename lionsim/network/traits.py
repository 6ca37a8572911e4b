"""What a collective library adds to the link: the backend's traits.

A link (alpha, bandwidth, topology: link.py) says what the wire can carry; a library moves
bytes over it in its own way. On two hosts joined by a shaped 1 Gbit link (docs/backends.md)
gloo pays a fixed per-call cost of 0.15-0.45 ms whatever the size, gets only part of the link
in each direction while an exchange keeps both directions busy, is capped by its own host
(a 2-core machine moves at most about 1 GB/s through gloo however fast the link), and on a
busy host some small calls take a slow path several milliseconds long. Those are the traits;
they stay apart from the link, so a preset link plus a backend's traits predicts, and
`lionsim comm --fit` measures both.

A call of `op` on n bytes (calls.py convention) with dtype d, which an algorithm prices as
L alpha + S beta + R gamma (latency, bytes on the critical path, bytes combined):

    fast(n) = floor(op, n) + stage(op, n) + L alpha + S / min(bandwidth x duplex(op, n), host) + R / reduce(d)
    mean(n) = fast(n) + P x extra                   for n <= slow.max_bytes (else fast(n))

- floor(op, n): seconds every call pays beyond the algorithm's alpha terms (a thread
  hand-off, a wake-up, a kernel launch). A size regime may carry its own: on a shaped link
  part of the floor overlaps the transfer of larger messages, and a token bucket lets their
  first bytes through at once, so a line per size regime fits better than one line.
- duplex(op, n): the share of the link's bandwidth each direction gets in this op, by size
  regime (1: the full link each way; gloo's all-to-all at 2 ranks got about half above a few
  MB). It folds in whatever else makes an op slower or faster per byte than the link.
- host: the most bytes per second one rank's library moves, whatever the link (inf: no cap).
- reduce(d): bytes combined per second in a reduction of dtype d; a dtype without an entry
  uses the link's gamma (0 in every preset).
- staging: a library that runs on host memory (MPI without CUDA support, Horovod built without
  GPU operations, DeepSpeed's first 1-bit Adam with cuda_aware off) copies each call's send
  buffer from the device to the host before the call and its receive buffer back after it:
  stage(n) = c x copy + (send + receive) / rate, c the copies made (Staging.seconds), paid once
  per call beside the floor.
- slow mode: with probability P a call of at most max_bytes takes `extra` seconds more; the
  fast time of such a call varies by `jitter` (its standard deviation over its mean) and the
  extra by `extra_jitter`, which widen the band and leave the mean alone. On a machine whose
  load comes and goes P is itself uncertain: `calm_probability` is the share on a calm moment
  (back-to-back calls), P the share as a training step's calls meet it; the band's lower edge
  takes the calm share, its upper edge P, so it spans the machine's load states.

The model predicts the mean, which is what a run's steps add up to; `quantile` gives the
spread of one call (the two modes' mixture, each mode normal with the jitter's deviation), and
`sum_quantile` that of several calls: which of them are slow independently, their jitters
together (one step's calls meet the machine in one state, so their fast times move as one).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from lionsim.errors import LionsimError
from lionsim.network.checks import check_number

DTYPES = ("float32", "bfloat16", "float16", "int8", "uint8", "int32", "int64")
"""Wire dtypes a call may carry (torch names)."""
MODELS = ("", "nccl")
"""Library tuning models (Traits.model): none, or NCCL's (lionsim.network.nccl)."""


class Regime(NamedTuple):
    """One size range of an op: calls of at most max_bytes (calls.py sizes)."""

    max_bytes: float
    """inf for the last regime."""
    share: float
    """The fraction of the link's bandwidth each direction gets."""
    floor_s: float | None = None
    """This range's own per-call floor; None: the op's."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OpTraits:
    """How a backend runs one collective op beyond the link."""

    floor_s: float = 0.0
    """Seconds every call of the op pays beyond the algorithm's alpha terms (the first regime's,
    and every regime's that has none of its own)."""
    algorithm: str = ""
    """The algorithm the library runs the op with (a registered name: gloo's all-reduce is a
    ring), so the model prices what runs; "" : the cheapest for each call (the ideal library)."""
    duplex: tuple[Regime, ...] = (Regime(math.inf, 1.0),)
    """Size regimes, ascending max_bytes, the last unbounded: the share of the link each
    direction gets (and a floor of its own where the range has one)."""

    def __post_init__(self) -> None:
        check_number("floor_s", self.floor_s, low=0.0, low_open=False)
        object.__setattr__(self, "duplex", tuple(Regime(*r) for r in self.duplex))
        bounds = [r.max_bytes for r in self.duplex]
        if not self.duplex or not math.isinf(bounds[-1]) or any(math.isinf(b) for b in bounds[:-1]):
            raise LionsimError("duplex regimes need a bound (max_bytes) on every regime but the last, which has none")
        if any(b <= a for a, b in zip(bounds, bounds[1:])):
            raise LionsimError(f"duplex regimes' max_bytes must increase, got {bounds[:-1]}")
        for r in self.duplex:
            check_number("duplex share", r.share, low=0.0, low_open=True)
            if r.floor_s is not None:
                check_number("regime floor_s", r.floor_s, low=0.0, low_open=False)

    def regime(self, nbytes: float) -> Regime:
        """The first regime holding `nbytes`."""
        return next(r for r in self.duplex if nbytes <= r.max_bytes)

    def share(self, nbytes: float) -> float:
        return self.regime(nbytes).share

    def floor(self, nbytes: float) -> float:
        own = self.regime(nbytes).floor_s
        return self.floor_s if own is None else own


@dataclass(frozen=True, kw_only=True, slots=True)
class SlowMode:
    """Small calls that sometimes take a slow path (a wake-up that waits for a core)."""

    probability: float = 0.0
    """Chance that one call of at most max_bytes is slow, in [0, 1]."""
    extra_s: float = 0.0
    """Seconds a slow call takes beyond the fast one."""
    max_bytes: float = 0.0
    """The largest call (calls.py size) the slow mode hits."""
    jitter: float = 0.0
    """Standard deviation of a call's fast time over that time, for calls of at most max_bytes
    (their step-to-step spread; it widens the band, not the mean). 0: a fixed fast time."""
    extra_jitter: float = 0.0
    """Standard deviation of a slow call's extra over extra_s (0: a fixed extra)."""
    calm_probability: float | None = None
    """The slow share of back-to-back calls, which the band's lower edge takes; None: probability."""
    shared_cores: bool = False
    """Fitted while ranks shared a host's cores (group.hosts.shared_cores): a wait for a core, not the
    link's. A real run on such a host pays it; the simulator and estimate, whose workers each have a
    host of their own, leave it out (profile.network_for) and say so (profile.host_slow_line)."""

    def __post_init__(self) -> None:
        check_number("slow probability", self.probability, low=0.0, low_open=False, high=1.0)
        check_number("slow extra_s", self.extra_s, low=0.0, low_open=False)
        check_number("slow max_bytes", self.max_bytes, low=0.0, low_open=False, high=math.inf)
        check_number("slow jitter", self.jitter, low=0.0, low_open=False)
        check_number("slow extra_jitter", self.extra_jitter, low=0.0, low_open=False)
        if self.calm_probability is not None:
            check_number("slow calm_probability", self.calm_probability, low=0.0, low_open=False, high=1.0)

    def applies(self, nbytes: float) -> float:
        """The probability that a call of `nbytes` is slow."""
        return self.probability if nbytes <= self.max_bytes and self.extra_s > 0 else 0.0

    def calm_at(self, nbytes: float) -> float:
        """The calm slow share (calm_probability) of a call of `nbytes`."""
        calm = self.probability if self.calm_probability is None else self.calm_probability
        return calm if nbytes <= self.max_bytes and self.extra_s > 0 else 0.0

    def jitter_at(self, nbytes: float) -> float:
        """The fast time's relative deviation for a call of `nbytes`."""
        return self.jitter if nbytes <= self.max_bytes else 0.0


def host_buffers(op: str, nbytes: float, ranks: int) -> tuple[float, float]:
    """(send, receive) bytes of one rank's buffers in a call of `op` on `nbytes` (calls.py sizes)
    among `ranks` ranks: what a host-staged library copies to the host and back."""
    part = nbytes / max(1, ranks)
    return {"all_gather": (part, nbytes), "reduce_scatter": (nbytes, part), "ps_push": (nbytes, 0.0),
            "ps_pull": (0.0, nbytes)}.get(op, (nbytes, nbytes))


@dataclass(frozen=True, kw_only=True, slots=True)
class Staging:
    """A library that runs on host memory: every call copies its send buffer from the device to
    the host and its receive buffer back (module doc)."""

    GBps: float
    """Bytes a second (1e9) one copy moves between the device and the host, each way."""
    copy_s: float = 0.0
    """Seconds one copy costs beyond its bytes (its launch and the wait for it)."""

    def __post_init__(self) -> None:
        check_number("staging GBps", self.GBps, low=0.0, low_open=True)
        check_number("staging copy_s", self.copy_s, low=0.0, low_open=False)

    def seconds(self, op: str, nbytes: float, ranks: int) -> float:
        """The copies of one call: each buffer that holds bytes is one copy (host_buffers)."""
        send, receive = host_buffers(op, nbytes, ranks)
        copies = (send > 0) + (receive > 0)
        return copies * self.copy_s + (send + receive) / (self.GBps * 1e9)


@dataclass(frozen=True, kw_only=True, slots=True)
class Traits:
    """A collective library's traits (module doc). The default is the ideal library: the
    alpha-beta formulas alone (the flat presets assume it; the GPU-cluster presets NCCL's, libraries.py)."""

    name: str = "ideal"
    """What they describe: "ideal", "gloo", "nccl", or a fitted profile's name."""
    backend: str = "any"
    """The backend they were measured on ("gloo", "nccl"), or "any" for the ideal library."""
    ops: tuple[tuple[str, OpTraits], ...] = ()
    """Per op (calls.OPS names); an op without an entry costs no floor at full duplex."""
    reduce_GBps: tuple[tuple[str, float], ...] = ()
    """Per dtype: bytes combined per second in reductions, 1e9 B/s; absent: the link's gamma."""
    host_GBps: float = math.inf
    """One rank's own throughput cap, 1e9 B/s per direction (inf: none)."""
    slow: SlowMode = field(default_factory=SlowMode)
    staging: Staging | None = None
    """A host-staged library's copies per call (module doc); None: the library reads and writes
    device memory itself (NCCL, a CUDA-aware MPI, gloo on CPU tensors)."""
    runs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per op whose algorithm the library's own tuning model (`model`) chooses, the --algorithm
    names it runs that op by (NCCL's all-reduce: tree, ring, NVLS...); see `runs_op`."""
    model: str = ""
    """How the library runs a whole-group call of the ops its tuning model knows: "nccl" (NCCL's
    own algorithm and protocol choice and time, lionsim.network.nccl: a flat ring or tree over
    every GPU, or NVLS / NVLS Tree on NVLink SHARP nodes, never lionsim's hierarchical plans); "": lionsim's plans, priced per phase (module doc)."""
    description: str = ""
    """Where the figures come from (one line)."""

    def __post_init__(self) -> None:
        if not self.name:
            raise LionsimError("traits need a non-empty name")
        if self.model not in MODELS:
            raise LionsimError(f"traits model {self.model!r} is unknown; accepted: {', '.join(repr(m) for m in MODELS)}")
        if isinstance(self.host_GBps, bool) or not isinstance(self.host_GBps, (int, float)) or not self.host_GBps > 0:
            raise LionsimError(f"host_GBps = {self.host_GBps!r} is not a number > 0 (inf: no cap)")
        for dtype, rate in self.reduce_GBps:
            if dtype not in DTYPES:
                raise LionsimError(f"unknown dtype {dtype!r} in reduce_GBps; accepted: {', '.join(DTYPES)}")
            check_number(f"reduce_GBps.{dtype}", rate, low=0.0, low_open=True)

    def op(self, op: str) -> OpTraits:
        return next((t for name, t in self.ops if name == op), _PLAIN)

    def runs_op(self, op: str) -> tuple[str, ...] | None:
        """The algorithms the library runs `op` by: its model's (`runs`), else the one its traits
        pin (gloo's flat ring), else None: lionsim's plans, which price any algorithm as named."""
        declared = dict(self.runs).get(op)
        pinned = self.op(op).algorithm
        return declared if declared is not None else (pinned,) if pinned else None

    def reduce_rate(self, dtype: str) -> float | None:
        """Bytes combined per second for `dtype`, None when the link's gamma applies."""
        rate = next((r for d, r in self.reduce_GBps if d == dtype), None)
        return None if rate is None else rate * 1e9

    @property
    def ideal(self) -> bool:
        """True when the traits add nothing to the alpha-beta formulas."""
        return (all(t == _PLAIN for _, t in self.ops) and not self.reduce_GBps and math.isinf(self.host_GBps)
                and self.slow.applies(0) == 0 and self.slow.jitter_at(0) == 0 and not self.model
                and self.staging is None)

    def stage_s(self, op: str, nbytes: float, ranks: int) -> float:
        """Seconds one call's host copies take (0 for a library on device memory)."""
        return 0.0 if self.staging is None else self.staging.seconds(op, nbytes, ranks)

    def to_dict(self) -> dict:
        """The profile-file form ([traits] table; `profile.traits_from_dict` reads it back)."""
        out: dict = {"name": self.name, "backend": self.backend}
        if math.isfinite(self.host_GBps):
            out["host_GBps"] = self.host_GBps
        if self.description:
            out["description"] = self.description
        if self.model:
            out["model"] = self.model
        if self.slow.applies(0) or self.slow.jitter_at(0):
            out["slow"] = {"probability": self.slow.probability, "extra_us": in_us(self.slow.extra_s),
                           "max_bytes": int(self.slow.max_bytes)} | (
                {"jitter": self.slow.jitter} if self.slow.jitter else {}) | (
                {"extra_jitter": self.slow.extra_jitter} if self.slow.extra_jitter else {}) | (
                {} if self.slow.calm_probability is None else {"calm_probability": self.slow.calm_probability}) | (
                {"shared_cores": True} if self.slow.shared_cores else {})
        if self.reduce_GBps:
            out["reduce_GBps"] = dict(self.reduce_GBps)
        if self.staging is not None:
            out["staging"] = {"GBps": self.staging.GBps, "copy_us": in_us(self.staging.copy_s)}
        for name, t in self.ops:
            entry: dict = {"floor_us": in_us(t.floor_s)} | ({"algorithm": t.algorithm} if t.algorithm else {})
            entry["duplex"] = [({} if math.isinf(r.max_bytes) else {"max_bytes": int(r.max_bytes)}) | {"share": r.share}
                               | ({} if r.floor_s is None else {"floor_us": in_us(r.floor_s)}) for r in t.duplex]
            out.setdefault("ops", {})[name] = entry
        return out


def in_us(seconds: float) -> float:
    """Seconds as microseconds that read back (us / 1e6) to exactly the same float."""
    us = seconds * 1e6
    for candidate in (us, math.nextafter(us, math.inf), math.nextafter(us, -math.inf)):
        if candidate / 1e6 == seconds:
            return candidate
    return us


_PLAIN = OpTraits()
IDEAL = Traits()


@dataclass(frozen=True, slots=True)
class Spread:
    """One call's time as a two-mode mixture: fast, or fast + extra with probability p; the fast
    mode normal with standard deviation jitter_s, the slow one adding extra_sd_s (0: points)."""

    fast_s: float
    extra_s: float = 0.0
    p: float = 0.0
    jitter_s: float = 0.0
    extra_sd_s: float = 0.0
    p_calm: float | None = None
    """The slow share quantiles below the median take (SlowMode.calm_probability); None: p."""

    @property
    def mean_s(self) -> float:
        return self.fast_s + self.p * self.extra_s

    def quantile(self, q: float) -> float:
        """The q-quantile (0 < q < 1): the slow mode once more than 1 - q of calls are slow."""
        return sum_quantile([self], q)

    def share(self, q: float) -> float:
        """The slow share a q-quantile takes: the calm one below the median (module doc)."""
        return self.p if q >= 0.5 or self.p_calm is None else self.p_calm


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _mixture_quantile(base: float, outcomes: list[tuple[float, float, float]], q: float) -> float:
    """The q-quantile of base + a draw of the (extra, probability, sd) outcomes, each normal
    around its extra (a point where sd is 0): bisection on the mixture's distribution function."""
    if all(sd == 0 for _, _, sd in outcomes):
        seen = 0.0
        for extra, prob, _ in sorted(outcomes):
            seen += prob
            if seen >= q - 1e-12:
                return base + extra
        return base + max(e for e, _, _ in outcomes)

    def below(x: float, e: float, sd: float) -> float:
        return _normal_cdf((x - e) / sd) if sd > 0 else float(x >= e)

    lo = min(e - 10 * sd for e, _, sd in outcomes)
    hi = max(e + 10 * sd for e, _, sd in outcomes)
    for _ in range(100):
        mid = (lo + hi) / 2
        if sum(p * below(mid, e, sd) for e, p, sd in outcomes) < q:
            lo = mid
        else:
            hi = mid
    return base + (lo + hi) / 2


def sum_quantile(calls: Sequence[Spread], q: float) -> float:
    """The q-quantile of the total of independent calls (a step's collectives): exact over
    which calls were slow (2^k cases for the k calls that can be), so no normal approximation
    misplaces a rare slow mode. The calls' jitters add up as one normal (fully correlated: a
    step's calls share the machine's load; independent jitters would shrink the band by sqrt(k)
    and miss steps on a loaded machine, as the emulated link showed), and so do the slow calls'
    extra spreads. Below the median each call is slow with its calm share (Spread.share)."""
    base = sum(c.fast_s for c in calls)
    sd = sum(c.jitter_s for c in calls)
    risky = [c for c in calls if c.share(q) > 0 and c.extra_s > 0]
    if len(risky) > 16:  # beyond 65k cases: the mean is as good a summary as any
        return base + sum(c.share(q) * c.extra_s for c in risky)
    outcomes = []
    for slow in itertools.product((False, True), repeat=len(risky)):
        prob, extra, spread = 1.0, 0.0, sd
        for c, s in zip(risky, slow):
            prob *= c.share(q) if s else 1 - c.share(q)
            extra += c.extra_s if s else 0.0
            spread += c.extra_sd_s if s else 0.0  # slow extras move together, as the jitters do
        outcomes.append((extra, prob, spread))
    return _mixture_quantile(base, outcomes, q)
