"""A numeric option's accepted range in words, written one way by every refusal of every command:
"bad --topk-ratio 2; accepted: a number above 0 and at most 1". `span` writes the range, `refusal`
the line; `Range` is a range that also checks a value (a strategy's option fields are made of it:
lionsim.strategies.core.form's `integer` and `between`). The shared options' ranges are here too,
so bench, sweep and estimate refuse --workers, --steps or --seed in the same words. No imports beyond the standard library: the checks that run before
torch loads use it.

The words: "a whole number" (an integer option) or "a number" (a real one; "a finite number"
where no top bounds it, as inf is refused); both ends closed: "from 1 to 100,000,000"; an open
or a missing end: "above 0", "at least 1", "below 1", "at most 1", joined by "and"; a range of one
value: "only 0" (a bound set by other options can close it to one); bounds with
thousands grouped (0.001 and 0.000001 as written); the reason for a bound, where there is one, in brackets.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from decimal import Decimal

from lionsim.whole import MAX_STEPS, MAX_WORKERS, WHOLE, typed

Bound = int | float | str | None


def is_number(v) -> bool:
    """A finite int or float (not a bool): what a numeric option may hold before its range is asked.
    An int past float's range (a profile's 10**400: TOML and JSON read it as an int) is not one:
    the arithmetic it feeds is float's, and math.isfinite itself would raise OverflowError on it."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return abs(v) <= sys.float_info.max if isinstance(v, int) else math.isfinite(v)


def number(value: int | float | str) -> str:
    """A bound as the range shows it: 100,000,000; 0.001; 1e-06's 0.000001; 1e+15's
    1,000,000,000,000,000; text as is."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, float) and 0 < abs(value) < 1e-4:  # where :g would write 1e-06
        return format(Decimal(repr(value)), "f")
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def span(low: Bound = None, high: Bound = None, *, whole: bool = False, above: bool = False,
         below: bool = False, why: str = "") -> str:
    """The range from `low` to `high` in words (None: no bound that side); `above`/`below`: that end
    is open (the bound itself refused); `whole`: whole numbers only; `why`: the reason for a bound."""
    if low is not None and low == high and not (above or below):
        return f"only {number(low)}" + (f" ({why})" if why else "")
    noun = "a whole number" if whole else "a number" if high is not None else "a finite number"
    if low is not None and high is not None and not (above or below):
        words = f"from {number(low)} to {number(high)}"
    else:
        ends = ([] if low is None else [f"{'above' if above else 'at least'} {number(low)}"]) + (
            [] if high is None else [f"{'below' if below else 'at most'} {number(high)}"])
        words = " and ".join(ends)
    return f"{noun} {words}" + (f" ({why})" if why else "")


def refusal(option: str, value: object, accepted: str, why: str = "") -> str:
    """The one line refusing `value` of `option`, echoed as typed: "bad --steps 0; accepted: ..."; `why`
    says what made this value wrong where the range alone does not ("bad --steps 9: ...")."""
    return f"bad {option} {typed(value)}{': ' + why if why else ''}; accepted: {accepted}"


@dataclass(frozen=True, slots=True)
class Range:
    """A range that checks a value and says itself in `span`'s words: a finite number from `low`
    to `high` (None: no top), whole where asked, an end open (`above`, `below`) where asked."""

    low: float
    high: float | None = None
    whole: bool = False
    above: bool = False
    below: bool = False
    why: str = ""
    """Why a bound is where it is, or what a value at it means; "" where it goes without saying."""

    def __call__(self, v) -> bool:
        """`v` is in the range (a bool, text, nan or inf never is)."""
        return (is_number(v) and (not self.whole or float(v).is_integer())
                and (v > self.low if self.above else v >= self.low)
                and (self.high is None or (v < self.high if self.below else v <= self.high)))

    @property
    def words(self) -> str:
        """What the range accepts, as every refusal says it."""
        return span(self.low, self.high, whole=self.whole, above=self.above, below=self.below, why=self.why)

    def refusal(self, option: str, value: object, why: str = "") -> str:
        """The line refusing `value` of `option` with this range's words (`refusal`)."""
        return refusal(option, value, self.words, why)


WORKERS = span(1, MAX_WORKERS, whole=True, why="the most workers lionsim takes")
"""--workers (bench, sweep, estimate, strategies): lionsim.whole.MAX_WORKERS says why its top."""
STEPS = span(1, MAX_STEPS, whole=True, why="the most steps lionsim runs or prices")
"""--steps (bench, sweep, estimate): lionsim.whole.MAX_STEPS says why its top."""
MAX_SEED = 2**63 - 1
"""torch's generators take a signed 64-bit seed."""
SEED = span(0, MAX_SEED, whole=True, why="torch's seeds are signed 64-bit")
"""--seed (bench, sweep, estimate)."""
EVERY_STEPS = span(1, MAX_STEPS, whole=True, why="the most steps lionsim runs")
"""A period in steps (--eval-every; --momentum-sync every:K's K): at most a run's steps."""
AT_LEAST_1 = span(1, whole=True)
"""A count (--batch-size, --eval-every, --jobs ...)."""
AT_LEAST_0 = span(0, whole=True)
"""A count that may be none (--warmup-steps, --warmup ...)."""
POSITIVE = span(0, above=True)
"""A real number above 0 (--lr, --outer-lr ...)."""
MIN_BUCKET_MB = 4e-6
"""The least --bucket-mb: one float32 gradient's 4 bytes. DDP never splits a tensor, so its finest
split is a bucket a tensor; a bucket smaller than one parameter holds none and means nothing."""
BUCKET_MB = span(MIN_BUCKET_MB, why="MB of fp32 gradients; a smaller bucket holds not one 4-byte gradient")
"""--bucket-mb (bench, sweep, estimate)."""
TARGET_LOSS = span(0, above=True, why="a cross-entropy is never below 0, and only a perfect model reaches 0")
"""--target-loss: bench's, sweep's and estimate --from-run's."""

MIN_GBPS, MAX_GBPS = 1e-6, 1e6
"""A link's bandwidth, GB/s: 1 kB/s to 1 PB/s. No link lies past them, and the arithmetic breaks
there: 1e-308 GB/s makes a step's time inf, 1e300 GB/s overflows bytes a second to inf."""
BANDWIDTH_GBPS = Range(MIN_GBPS, MAX_GBPS, why="GB/s: 1 kB/s, below a dial-up modem, to 1 PB/s, past any link built")
"""A link bandwidth a user gives: --sweep bandwidth=, a profile's bandwidth_GBps and reduce_GBps."""

LR = Range(0, above=True)
"""--lr (bench, sweep: each item of its list) and a run's hyper lr; beyond float32 refused beside it."""
WEIGHT_DECAY = Range(0)
"""--weight-decay and a run's hyper weight_decay."""

OPTIONS = {"--workers": WORKERS, "--steps": STEPS, "--seed": SEED, "--lr": LR.words,
           "--weight-decay": WEIGHT_DECAY.words, "--bucket-mb": BUCKET_MB, "--target-loss": TARGET_LOSS}
"""The shared options' ranges by flag, for a value refused before its range is checked (--workers
2.5: "not a whole number; accepted: a whole number from 1 to 100,000,000"; --lr abc: "not a number;
accepted: a finite number above 0", as --lr -1 says it)."""


def bucket_mb_ok(value) -> bool:
    """--bucket-mb `value` is a finite number of at least MIN_BUCKET_MB."""
    return is_number(value) and value >= MIN_BUCKET_MB


def accepted(option: str, whole: bool = True) -> str:
    """What `option` accepts where its value is not a number at all: its range where it is a shared
    option, else what the parser reads (lionsim.whole.WHOLE: 1000, 1e3 or 2.5e3; a number)."""
    return OPTIONS.get(option) or (WHOLE if whole else "a number")
