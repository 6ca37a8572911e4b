"""`lionsim estimate --from-run DIR`: steps to target at scale, from the convergence DIR measured.

The assumption, plainly: this is the time to target at scale if convergence at scale behaves as it
did in DIR's training (relative to the baseline, and across worker counts as DIR's sweep measured
it). lionsim trains nothing here.

For an estimate row (strategy@transport) lionsim takes the trained run of DIR it matches (the same
strategy@transport, else the first trained run of the same strategy: `how` says which) and its
ratio to the run's baseline B in each cell c (a bench run is one cell). A run of the same strategy
stands for another transport only where both carry the same values (a2a-1bit for int8-allreduce;
hier:fp32-allreduce, the same fp32 sums node by node: Transport.reorders, for fp32-allreduce);
where either rounds them (bf16, fp8: Transport.rounds) or votes by node (not `exact`), training
over one says nothing of converging over the other: no figure, and the note says why (_borrowed).

    rho_c = steps_to_target_c(run) / steps_to_target_c(B)             (both to cell c's target)

The ratio, not the raw count, because each cell's target is its own baseline's loss late in its
run (unless the run fixed --target-loss): the ratio is what cells share. Then, at the estimate's N:

    rho(N)     the ratios fitted against log N by least squares over every cell the run reached:
               a + b ln N with two or more worker counts measured, their mean with one (a bench
               run: its ratio, as measured, at whatever N)
    S(N)       the baseline's steps to target at scale: --steps (or --tokens' steps at N), else
               the run's own: B's steps to target fitted against log N the same way (a bench
               run: B's steps to target as measured), within rho's one-doubling bound below
    steps_to_target(N) = ceil(S(N) x rho(N))                          (a run stops at a whole step)

and the estimate prices a whole run of that many steps with every phase it has
(lionsim.estimate.run: warm-ups, local steps and their syncs, momentum syncs): time_to_target_s.

The band (time_to_target_lo_s / _hi_s) is the fits' residual spread: sigma = sqrt(SSR / (n - k))
for n points and k fitted coefficients (the sample standard deviation over seeds when one worker
count was measured), applied at its extremes to both factors,

    steps_lo = ceil((S - sigma_S) x (rho - sigma_rho))      steps_hi = ceil((S + sigma_S) x (rho + sigma_rho))

with sigma_S = 0 where --steps / --tokens gives S. The speedup's band (to_target_speedup_lo / _hi)
pairs the ends that share one S: the baseline's time over the run's at both low ends, and at both
high ends, the smaller of the two its low end, widened to hold the speedup itself (speedup_band). Every run's band takes the same
S -/+ sigma_S, so this counts S's spread once; the crossed pairs (the baseline's low end over the
run's high end) would count it twice. NaN where either run has no band (or no lower end).

A fit extrapolated so far that S(N) or rho(N) falls to zero or below is held at its value at the
nearest measured worker count (the note says `clamped`, and the command prints a hint that --steps /
--tokens sets S at scale): a run to target of no steps is not a figure, and the nearest measurement
is the least assumption. Where n = k (one run, or one point per coefficient: an exact fit) there is
no spread to measure and no band (NaN), and the note says so: a line through two worker counts
"fitted on 2 counts: no band", one cell "no band: one bench run, no spread to measure (...)" or "no
band: one cell reached the target, at 8 workers: ...". A run measured at other worker counts than
the estimate's is marked: `beyond` when N lies outside the measured range (extrapolated), a note
beside a bench run measured at one N.

Two bounds keep the fit of rho from saying more than the run measured (ratio_at):

- no crossing to the other side of the baseline: where every cell the run reached measured it
  slower to the target than B (every rho_c > 1), rho(N) is at least 1.0 at every N, and where every
  cell measured it faster (every rho_c < 1), at most 1.0. A run measured needing more steps than B
  at every count does not become a win by extrapolation alone (a line through 1.66 at 2 workers and
  1.45 at 4 reaches 0.41 at 128). Held there, the note says so: "held at the baseline's steps:
  measured slower to the target at every count, 2-4 workers". The band keeps its spread about the
  held value. A run with ratios on both sides of 1.0 (or one at it) is fitted as it is.
- a trend through 2 worker counts is taken one doubling past them, no further: beyond twice the
  larger count (or below half the smaller) rho(N) is held at its value at the nearest measured
  count, which a line through two counts passes through (their cells' mean), and the note says
  "fitted on 2 counts: ratio held beyond 8 workers". Two points fix a slope but say nothing of
  whether it lasts; within one doubling the line is used (and marked extrapolated), past it the
  nearest measurement is the least assumption. So a sweep at 2 and 4 workers prices 8 from the
  trend and 16 or more at 4 workers' ratio: a figure at 16 can be further from B's than at 8.
  Three or more counts are extrapolated as fitted (the no-crossing bound still applies). The run's
  own S(N) is bounded the same way (one_doubling_on), for the same reason: "ratio and baseline's
  steps held beyond 8 workers" (a line through 49 steps at 2 workers and 38 at 4 gave 16 at 16).

Two rules give no time to target where the run measured nothing that could stand for one:

- no extrapolation past a measured miss: a run reached the target at a worker count where it reached
  it in every cell there (every seed: the seeds repeat one measurement, and one that missed is a
  measured miss). Above the largest such count, where it missed at a measured count above it, there
  is no figure (nor, the other way, below the smallest where it missed below); a run that missed in
  some cell at every count has none anywhere. The fit through the cells it reached would otherwise
  carry it straight past the count where it failed. Its note names the counts it missed at:
  "missed the target at 4 workers (reached it in every cell up to 2): no figure beyond 2 workers,
  past a measured miss at 4" ("toward" it where priced between the two, "at" it at 4). A miss
  between two counts it reached at is fitted over, as before ("reached the target in k of n cells").
- convergence is the options it was trained with: where an option the estimate reads (STEP or RUN,
  lionsim.forms; a TRAINING one the estimate refuses, so it prices nothing of it and the figure is
  the trained value's) differs from the trained run's, the step is priced as asked but the run says
  nothing about converging with it: no figure, and the note names both and the fix ("the run trained
  it at --local-steps 2, this estimate prices 100: time to target needs the trained value (drop
  --local-steps, or train at 100)", trained_otherwise). Every option the estimate reads moves
  convergence too (H, a rank, a ratio, a warm-up), so all of them count. Only an option the user
  gave can differ: the others are priced as the run trained them (lionsim.estimate.trained_options).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from lionsim.estimate.from_run import Measured, Reach
from lionsim.forms import STEP, TRAINING
from lionsim.numbers import in_words, plural
from lionsim.reports.to_target import held_past_doubling
from lionsim.strategies.core.form import META  # an option's rule (its `priced`)
from lionsim.transports.base import TRANSPORTS

MISSED_PAST = "missed the target at"
"""How at_scale's note begins where N lies past a count the run measured missing the target (module doc)."""
TWO_COUNTS = "fitted on 2 counts: no band"
"""The note of a figure fitted through exactly two points (one per coefficient): no spread to measure."""
NO_BAND = "no band"
"""How the note begins where there is no band for a reason other than TWO_COUNTS' (one cell measured)."""
HELD_TWO = "fitted on 2 counts: ratio held"
"""How the note begins where a trend through 2 worker counts was held past one doubling (module doc)."""
HELD_STEPS = "fitted on 2 counts: baseline's steps held"
"""The same where it was the baseline's own steps to target S(N) that were held (module doc)."""
HELD_BOTH = "fitted on 2 counts: ratio and baseline's steps held"
"""The same where both were, past the same doubling."""
HELD_BASELINE = "held at the baseline's steps"
"""How the note begins where rho(N) would have crossed 1.0 from the side every cell measured (module doc)."""
CLAMPED = "clamped"
"""How to_target_note begins the part that says a fit was held at the nearest measured N."""
STEPS_INSTEAD = "--steps or --tokens sets the baseline's steps at scale instead"
"""What the hints below say to do: price the run the user plans."""
CLAMP_HINT = ("hint: a fit of the baseline's steps to target against log N fell to zero at this N and was held at the "
              f"nearest measured worker count; {STEPS_INSTEAD}")
"""The one line `estimate --from-run` prints when the baseline's fit was clamped (module doc)."""
OWN_STEPS_HINT = ("hint: the baseline's steps to target at scale are the trained run's own ({steps}, for its model, "
                  f"not the one priced); {STEPS_INSTEAD}, for the run you plan")
"""The one line it prints otherwise where neither gave them (unless the run's model is near the priced size)."""

FAR_SMALLER = 10
"""A proxy whose model has this many times fewer parameters than the priced one, or more, is said to be far
smaller in the time-to-target table's caveat (an order of magnitude: convergence at scale is least sure)."""


def unreached_hint(frame) -> str:
    """The one line `estimate --from-run` prints when a priced run did not reach DIR's target (its steps
    column says "not reached", or it missed at a count below the one priced): what would give it a
    figure. "" when every trained run reached it. It names no loss: the target is the baseline's own
    (lionsim.reports.summary), and the loss every run got to is the worst run's, the target that once
    made every speedup meaningless (docs/time-model.md). Training longer keeps the baseline's target;
    --target-loss re-targets from the loss curves DIR holds, at a loss the user chooses."""
    runs = frame.drop_duplicates(["strategy", "transport"])  # a sweep's rows: each run once
    notes = [n for n in runs["to_target_note"]
             if isinstance(n, str) and n.startswith(("did not reach", MISSED_PAST))]  # anywhere, or at a count
    if not notes:
        return ""
    first = runs.iloc[0]
    command = "sweep" if first.get("to_target_kind") == "sweep" else "bench"  # the command that made DIR
    return (f"hint: {len(notes)} of {len(runs)} runs priced did not reach the target loss in {first['to_target_from']}: "
            f"train them longer ({command} --steps) so that they reach it; or give --target-loss L here, a loss "
            "that matters to you: their steps to L are read again from its loss curves, no training (not the "
            "worst run's final loss: a target set by the worst run makes every speedup meaningless)")


TO_TARGET_COLUMNS = [
    "steps_to_target", "time_to_target_s", "to_target_speedup", "time_to_target_lo_s", "time_to_target_hi_s",
    "steps_to_target_lo", "steps_to_target_hi", "to_target_phases", "to_target_ratio", "to_target_per_doubling",
    "to_target_match", "to_target_how", "to_target_note", "to_target_beyond", "to_target_basis",
    "to_target_from", "to_target_kind", "to_target_workload", "to_target_workers", "to_target_params",
    "to_target_loss", "to_target_rule", "to_target_baseline", "to_target_common_loss", "to_target_lr_edges",
    "to_target_speedup_lo", "to_target_speedup_hi",
]
"""The columns --from-run adds to estimate.csv (docs/outputs.md says what each holds)."""


@dataclass(frozen=True, slots=True)
class Fit:
    """y = intercept + slope x ln(N) over a run's cells (slope 0: their mean, one N measured)."""

    intercept: float
    slope: float
    spread: float
    """The residual standard deviation (module doc); NaN with no degree of freedom left."""
    points: int
    counts: tuple[int, ...]
    """The worker counts fitted, ascending."""
    lowest: float = math.nan
    highest: float = math.nan
    """The smallest and largest value fitted."""

    def at(self, workers: int) -> float:
        return self.intercept + self.slope * math.log(workers)

    @property
    def per_doubling(self) -> float:
        """The change of y per doubling of N (NaN: one N measured, no trend)."""
        return self.slope * math.log(2.0) if len(self.counts) > 1 else math.nan


def fit(workers: list[int], values: list[float]) -> Fit:
    """Least squares of `values` against ln(workers): a line with two or more distinct counts, else the mean."""
    x, y = np.log(np.asarray(workers, dtype=float)), np.asarray(values, dtype=float)
    counts = tuple(sorted(set(int(w) for w in workers)))
    if len(counts) > 1:
        slope, intercept = np.polyfit(x, y, 1)
        k = 2
    else:
        slope, intercept, k = 0.0, float(y.mean()), 1
    residual = y - (intercept + slope * x)
    dof = len(y) - k
    spread = math.sqrt(float(residual @ residual) / dof) if dof > 0 else math.nan
    return Fit(intercept=float(intercept), slope=float(slope), spread=spread, points=len(y), counts=counts,
               lowest=float(y.min()), highest=float(y.max()))


def one_doubling_on(line: Fit, workers: int) -> tuple[float, str]:
    """The fit at `workers`, where a trend through 2 counts is taken one doubling past them, no further
    (module doc): beyond it, its value at the nearest measured count. With where it was held ("beyond
    16", "below 2"; "" where the fit was used as it is)."""
    counts = line.counts
    if held_past_doubling(counts, workers):
        past, nearest = (f"beyond {2 * counts[-1]:,}", counts[-1]) if workers > counts[-1] else \
            (f"below {counts[0] / 2:,g}", counts[0])
        return line.at(nearest), past
    return line.at(workers), ""


def ratio_at(rho: Fit, workers: int) -> tuple[float, list[str]]:
    """rho(N) from the ratio's fit within the two bounds of the module doc, and the notes that say
    which held it: a trend through 2 counts is held at the nearest measured count's value past one
    doubling beyond them, and the ratio does not cross 1.0 from the side every measured ratio lies on."""
    ratio, past = one_doubling_on(rho, workers)
    notes = [f"{HELD_TWO} {past} workers"] if past else []
    counts = rho.counts
    side = "slower" if rho.lowest > 1.0 else "faster" if rho.highest < 1.0 else ""
    if (side == "slower" and ratio < 1.0) or (side == "faster" and ratio > 1.0):
        ratio = 1.0
        span = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
        notes.append(f"{HELD_BASELINE}: measured {side} to the target at every count, {span} workers")
    return ratio, notes


@dataclass(frozen=True, slots=True)
class AtScale:
    """One estimate row's steps to target at N workers, and what they came from."""

    steps: float
    """Whole steps (NaN: none: not trained, not reached, or a fit that falls to zero)."""
    lo: float
    hi: float
    """The band's steps (NaN: no spread measured)."""
    match: str
    """The trained run it came from ("" if none)."""
    how: str
    """"exact" (same strategy@transport), "by strategy" or "not trained"."""
    note: str
    """What a reader must know beside the figure ("" if nothing)."""
    beyond: bool = False
    """N outside the measured worker counts (a fit extrapolated, or one run at another N)."""
    ratio: float = math.nan
    """rho(N): steps to target relative to the run's baseline."""
    per_doubling: float = math.nan
    """rho's change per doubling of N (NaN: one N measured)."""


def speedup_band(base_lo: float, base_hi: float, lo: float, hi: float, point: float = math.nan) -> tuple[float, float]:
    """The speedup's band (module doc): the baseline's time to target over a run's at both bands' low
    ends and at both high ends (the same S in each pair), ascending, widened to hold `point`, the
    speedup itself (the two ratios can both lie on one side of it: 3.44-3.45x beside 3.38x); NaN where
    an end is missing."""
    ends = (base_lo / lo, base_hi / hi)
    if not all(math.isfinite(e) and e > 0 for e in ends):
        return math.nan, math.nan
    ends += (point,) if math.isfinite(point) else ()
    return min(ends), max(ends)


def whole(x: float) -> float:
    """A run stops at the first whole step that reaches the target (a hair of float error forgiven)."""
    return float(math.ceil(x - 1e-9)) if math.isfinite(x) else math.nan


class Convergence:
    """The convergence DIR measured, ready to scale (module doc)."""

    def __init__(self, measured: Measured) -> None:
        self.measured = measured
        by_label: dict[str, list[Reach]] = {}
        for reach in measured.reaches:
            by_label.setdefault(reach.label, []).append(reach)
        self.by_label = by_label
        base = by_label[measured.baseline]
        self.baseline_fit = fit([r.workers for r in base], [r.baseline_steps for r in base])
        self._fits: dict[str, Fit | None] = {}

    def match(self, strategy: str, transport: str) -> tuple[str | None, str]:
        """(the trained run an estimate row takes its convergence from, how it was matched)."""
        label = f"{strategy}@{transport}"
        if label in self.by_label:
            return label, "exact"
        same = [trained for trained in self.measured.labels if trained.split("@", 1)[0] == strategy]
        return (same[0], "by strategy") if same else (None, "not trained")

    def ratio_fit(self, label: str) -> Fit | None:
        """rho against ln N over the cells `label` reached (None: it reached in none)."""
        if label not in self._fits:
            reached = [r for r in self.by_label[label] if math.isfinite(r.steps)]
            self._fits[label] = fit([r.workers for r in reached], [r.steps / r.baseline_steps for r in reached]) \
                if reached else None
        return self._fits[label]

    def missed(self, label: str) -> tuple[int | None, int | None, list[int]]:
        """(the smallest and the largest measured worker count where `label` reached the target in every
        cell, None where there is none; the counts where it missed in some cell). A seed that missed is
        a measured miss at its count: the seeds are repeats of one measurement (module doc)."""
        counts: dict[int, bool] = {}
        for c in self.by_label[label]:
            counts[c.workers] = counts.get(c.workers, True) and math.isfinite(c.steps)
        full = sorted(n for n, every in counts.items() if every)
        return (full[0] if full else None, full[-1] if full else None,
                sorted(n for n, every in counts.items() if not every))

    def at_scale(self, strategy: str, transport: str, workers: int, base_steps: int | None,
                 priced=None) -> AtScale:
        """Steps to target of strategy@transport at `workers` (module doc); `base_steps`: the
        baseline's steps at scale from --steps / --tokens, or None for the run's own; `priced`: the
        strategy priced (its options against those the run trained with: trained_otherwise)."""
        label, how = self.match(strategy, transport)
        if label is None:
            where = self.measured.kind.split()[-1]  # "run" or "sweep"
            return AtScale(math.nan, math.nan, math.nan, "", how, f"not trained in the {where}")
        if how == "by strategy" and (why := _borrowed(label, transport)):
            return AtScale(math.nan, math.nan, math.nan, "", "not trained", why)
        if (first := self.measured.warmup_until.get(label)) is not None:  # it never trained as its method
            return AtScale(math.nan, math.nan, math.nan, label, how,
                           f"its trained run ended inside its warm-up (its first step past it, {first}, never ran): "
                           f"its steps to target are not the method's; train it past step {first}")
        if otherwise := (trained_otherwise(self.measured.options.get(label), priced)
                         or synced_otherwise(self.measured.momentum_sync, priced)):
            return AtScale(math.nan, math.nan, math.nan, label, how, otherwise)
        cells = self.by_label[label]
        rho = self.ratio_fit(label)
        if rho is None:
            diverged = [c.diverged_at for c in cells if math.isfinite(c.diverged_at)]
            why = ("" if not diverged else f" (diverged at step {diverged[0]:.0f})" if len(cells) == 1
                   else f" (diverged in {len(diverged)})")
            return AtScale(math.nan, math.nan, math.nan, label, how,
                           "did not reach the target" + self._in_any(len(cells)) + why)
        notes = []
        reached = rho.points
        if reached < len(cells):
            notes.append(f"reached the target in {reached} of {len(cells)} cells (fitted over those)")
        low, high, missed = self.missed(label)
        past = [n for n in missed if high is None or (workers > high and n > high) or (workers < low and n < low)]
        if past:  # no extrapolation past a measured miss (module doc)
            where = ("in every cell at none of the counts measured" if high is None else
                     f"in every cell up to {high:,}" if past[0] > high else f"in every cell from {low:,}")
            return AtScale(math.nan, math.nan, math.nan, label, how,
                           f"{MISSED_PAST} {_counts(past)} workers (reached it {where}): "
                           + _no_figure(workers, low, high, past), True)
        s_past = ""
        if base_steps is None:  # the run's own S(N): a trend through 2 counts goes one doubling on, as rho's
            (s, s_past), s_spread = one_doubling_on(self.baseline_fit, workers), self.baseline_fit.spread
        else:
            s, s_spread = float(base_steps), 0.0
        ratio, held = ratio_at(rho, workers)
        if s_past:  # one note where both were held past the same doubling
            both = f"{HELD_TWO} {s_past} workers"
            held = [f"{HELD_BOTH} {s_past} workers" if n == both else n for n in held]
            if f"{HELD_BOTH} {s_past} workers" not in held:
                held.insert(0, f"{HELD_STEPS} {s_past} workers")
        counts = rho.counts
        beyond = workers < counts[0] or workers > counts[-1]
        if len(counts) == 1 and workers != counts[0]:
            notes.append(f"measured at {counts[0]:,} workers only")
        elif beyond:
            notes.append(f"extrapolated beyond the measured {counts[0]:,}-{counts[-1]:,} workers")
        notes += held
        if not (ratio > 0 and s > 0):  # a fit extrapolated to no steps at all: held at the nearest measured N
            nearest = counts[0] if workers < counts[0] else counts[-1]
            fell = [what for what, value in (("the baseline's steps", s), ("the ratio", ratio)) if not value > 0]
            if not s > 0:
                s = self.baseline_fit.at(nearest)
            if not ratio > 0:
                ratio = rho.at(nearest)
            notes.append(f"{CLAMPED} ({' and '.join(fell)} fitted against log N fall to zero by {workers:,} workers)"
                         f": held at {nearest:,} workers, the nearest measured")
            if not (ratio > 0 and s > 0):
                notes.append(f"the fit falls to zero by {workers:,} workers: no figure")
                return AtScale(math.nan, math.nan, math.nan, label, how, "; ".join(notes), beyond, ratio,
                               rho.per_doubling)
        exact = [f for f in (rho, self.baseline_fit if base_steps is None else None)
                 if f is not None and len(f.counts) == 2 and f.points == 2]
        if exact:  # a line through two points: no spread to measure
            notes.append(TWO_COUNTS)
        elif why := self._no_spread(rho, base_steps is None):  # no band, and why: never silently
            notes.append(f"{NO_BAND}: {why}")
        lo = (s - s_spread) * (ratio - rho.spread)
        low = whole(lo) if lo > 0 else math.nan  # a band that reaches zero steps has no lower end
        if lo <= 0 and math.isfinite(lo):
            notes.append("the band reaches zero steps: no lower end")
        return AtScale(whole(s * ratio), low, whole((s + s_spread) * (ratio + rho.spread)), label, how,
                       "; ".join(notes), beyond, ratio, rho.per_doubling)

    def _no_spread(self, rho: Fit, own_steps: bool) -> str:
        """Why the band has no spread to measure where a fit it takes had one point (a line through two
        counts is TWO_COUNTS' note), e.g. "one bench run, no spread to measure (...)"; "" where it has one."""
        fits = [f for f in (rho, self.baseline_fit if own_steps else None) if f is not None and f.points == 1]
        if not fits:
            return ""
        seeds = "(a sweep over seeds gives one)"
        if self.measured.kind == "bench run":
            return f"one bench run, no spread to measure {seeds}"
        return f"one cell reached the target, at {fits[0].counts[0]:,} workers: no spread to measure {seeds}"

    def source_columns(self) -> dict:
        """Where the convergence came from, the same on every row."""
        m = self.measured
        return {"to_target_from": m.path, "to_target_kind": m.kind, "to_target_workload": m.workload,
                "to_target_workers": " ".join(str(w) for w in m.workers), "to_target_params": m.params,
                "to_target_loss": m.target_loss, "to_target_rule": m.target, "to_target_baseline": m.baseline,
                "to_target_common_loss": m.common_loss, "to_target_lr_edges": "; ".join(m.lr_edges)}

    def _in_any(self, cells: int) -> str:
        if self.measured.kind == "bench run":
            return ""
        return " in its one cell" if cells == 1 else f" in any of its {plural(f'{cells:,}', 'cell')}"


def _changes(transport: str) -> str:
    """How `transport` changes the values it carries ("" where it carries them as they are)."""
    if transport not in TRANSPORTS:  # a plug-in's, not loaded here: nothing says it carries them unchanged
        return "a transport this estimate does not know"
    kind = TRANSPORTS.get(transport)
    return ("rounds the values it carries" if kind.rounds else
            "" if kind.exact or kind.reorders else "does not give the flat aggregate")


def _borrowed(label: str, transport: str) -> str:
    """Why the trained run `label` cannot stand for its strategy over `transport` (module doc): "" where
    both transports carry the same values, else the note (one part: no "; "), e.g. "never trained
    over bf16-allreduce, which rounds the values it carries: the adamw@fp32-allreduce run's steps to
    target do not stand for it (train adamw@bf16-allreduce for a figure)"."""
    strategy, trained = label.split("@", 1)
    for name in (transport, trained):
        if why := _changes(name):
            said = f", which {why}" if name == transport else f" ({name} {why})"
            return (f"never trained over {transport}{said}: the {label} run's steps to target do not stand for "
                    f"it (train {strategy}@{transport} for a figure)")
    return ""


def _no_figure(workers: int, low: int | None, high: int | None, past: list[int]) -> str:
    """Why at_scale gives no figure at `workers` beyond the counts a run reached the target at
    (`low`..`high`, None where none) toward the misses `past`: short of the nearest miss ("toward"),
    at it, or past it."""
    if high is None:
        return "no count to extrapolate from"
    up = past[0] > high
    edge, miss = (f"beyond {high:,}", past[0]) if up else (f"below {low:,}", past[-1])
    side = ("at" if workers == miss else "toward" if (workers < miss) == up else "past")
    return f"no figure {edge} workers, {side} a measured miss at {miss:,}"


def _counts(counts: list[int]) -> str:
    """Worker counts in words: "4" or "4, 8 and 16"."""
    return in_words([f"{n:,}" for n in counts])


def trained_otherwise(trained: dict | None, strategy) -> str:
    """Where an option the estimate reads (STEP or RUN: lionsim.forms) differs from the one the run
    trained with (only where the user gave it: the others are the trained ones, lionsim.estimate.
    trained_options), why there is no time to target, forwards and with the fix (module doc), e.g.
    "the run trained it at --local-steps 10, this estimate prices 2: time to target needs the trained
    value (drop --local-steps, or train at 2)"; "" where they agree or the run did not record them. A
    TRAINING option is not compared: the estimate refuses it, so its priced value is only the default
    and the figure is the trained value's convergence whatever it is."""
    opts = getattr(strategy, "opts", None)
    if not trained or opts is None or not dataclasses.is_dataclass(opts):
        return ""
    read = {f.name for f in dataclasses.fields(opts)
            if getattr(f.metadata.get(META), "priced", STEP) != TRAINING}
    priced = dataclasses.asdict(opts)
    differ = [(k, v, priced[k]) for k, v in trained.items() if k in read and _value(v) != _value(priced[k])]
    if not differ:
        return ""
    flag = _flags(strategy)
    flags = in_words([flag.get(k, k) for k, _, _ in differ])
    was = in_words([f"{flag.get(k, k)} {v}" for k, v, _ in differ])
    now = in_words([f"{p}" for _, _, p in differ])
    value = "value" if len(differ) == 1 else "values"
    return (f"the run trained it at {was}, this estimate prices {now}: time to target needs the trained {value} "
            f"(drop {flags}, or train at {now})")


def synced_otherwise(trained: str, strategy) -> str:
    """As trained_otherwise, for the Lion family's --momentum-sync (a run option, not the strategy's):
    a run's steps to target are those of the sync it trained with; "" where they agree, or where
    the strategy keeps no per-worker momentum."""
    if strategy is None or not getattr(strategy, "has_momentum_sync", False):
        return ""
    priced = strategy.cfg.momentum_sync
    if priced == trained:
        return ""
    return (f"the run trained it with --momentum-sync {trained}, this estimate prices {priced}: time to target "
            f"needs the trained sync (drop --momentum-sync, or train with {priced})")


def _flags(strategy) -> dict[str, str]:
    """A strategy's option fields' flags (`local_steps` -> `--local-steps`); {} where it has no name."""
    from lionsim.strategies.core.form import option_specs

    kind = type(strategy)
    name = getattr(kind, "name", None)
    return {s.field: s.flag for s in option_specs(name, kind.Options)} if name else {}


def _value(v):
    """A recorded option as comparable: JSON gives lists where a dataclass holds tuples."""
    return tuple(v) if isinstance(v, (list, tuple)) else v
