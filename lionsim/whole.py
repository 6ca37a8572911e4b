"""Whole numbers as the user types them: every whole-number option (--workers, --steps, --threads,
--eval-samples, a strategy's integer flag ...) reads 1000, 1e3 or 2.5e3 exactly, as a decimal
(`read_whole`), a count such as --params also 350M or 1.5B (`read_count`), and keeps the text it
was read from, so that every refusal echoes the value as typed (`typed`): "bad --steps 1e50", not
its fifty-one digits. Also the most workers any command
takes (MAX_WORKERS) and the most steps (MAX_STEPS), whose ranges lionsim.ranges words. No imports
beyond the standard library: the checks that run before torch loads use it.
"""

from __future__ import annotations

from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation

WHOLE = "a whole number (1000, 1e3 or 2.5e3)"
"""What read_whole takes, in its refusals."""
MAX_DIGITS = 100
"""Digits a whole-number option may have: past any count, size or seed lionsim takes, short of a
number whose digits alone cost time to build."""
MAX_WORKERS = 10**8
"""The most workers any command takes (bench, sweep, estimate, strategies -n): 1,000x the largest
clusters trained on (about 10^5 GPUs), so no real count is refused and a what-if at extreme scale
still prices (estimate builds no per-worker state); the payload containers hold the sums at any
count up to it (lionsim.transports.payloads.container_dtype: int64 holds a sum of 10^8 workers'
levels of at most 127 with 10^7-fold room). Past it a count is a typo: 1e19 has no container at all."""
MAX_STEPS = 10**7
"""The most steps a run takes (bench --steps: every step's record stays in memory until the run is
booked; estimate --steps, or --tokens in steps, prices every step) and so the most inner steps a
local-step round takes (--local-steps: an H past it never syncs in any run lionsim makes)."""


class NotWhole(ValueError):
    """read_whole's refusal: the message says what is accepted, `why` the short reason every
    command's one line gives ("not a whole number", "100 digits or more")."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


class Whole(int):
    """An int that remembers the text it was read from (`text`), for refusals to echo."""

    text: str

    def __new__(cls, value: int, text: str) -> Whole:
        self = super().__new__(cls, value)
        self.text = text
        return self

    def __reduce__(self):  # pickled as what it is (a sweep's units cross processes)
        return Whole, (int(self), self.text)


def read_whole(text: str | int) -> int:
    """`text` as a whole number, a Whole that keeps `text`: 1000, 1e3 or 2.5e3, read as a decimal (1e30
    is 10**30 exactly, not float's 1000000000000000019884624838656). NotWhole (a ValueError), saying
    what is accepted and why not, where it is not whole (1.5), not finite (inf, nan) or has MAX_DIGITS
    digits or more. An int (a default, a config file's) is returned as it is."""
    return _read(text, {}, WHOLE)


COUNT_SUFFIXES = {"k": 3, "m": 6, "b": 9, "t": 12}
"""A count's suffixes (read_count), any case, as powers of ten: thousand, million, billion,
trillion, as model sizes are written (GPT-2 350M, LLaMA 7B). G is not one: `comm --sizes` reads G as
2^30 bytes."""
COUNT = "a whole number (1000, 1e3, 2.5e3, 350M or 1.5B; K, M, B, T: 1e3, 1e6, 1e9, 1e12, any case)"
"""What read_count takes, in its refusals."""


def read_count(text: str | int) -> int:
    """read_whole, also taking a trailing K, M, B or T in any case (COUNT_SUFFIXES): "350M" is
    350,000,000 and "1.5B" 1,500,000,000, exactly (the decimal's exponent shifted, never rounded)."""
    return _read(text, COUNT_SUFFIXES, COUNT)


def _read(text: str | int, powers: dict[str, int], forms: str) -> int:
    """read_whole with a trailing suffix of `powers` (a power of ten each) taken; `forms`: what is
    accepted, in a refusal."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    shown = str(text).strip()
    power = powers.get(shown[-1:].lower(), 0)
    try:
        value = Decimal(shown[:-1].strip() if power else shown)
    except InvalidOperation:
        value = None
    if value is not None and value.is_finite() and power:
        if value.adjusted() + power >= MAX_DIGITS:  # refused below by its digits, not built
            value = Decimal(f"1e{MAX_DIGITS}")
        else:  # exact: a context as precise as the digits typed, the exponent shifted
            value = value.scaleb(power, context=Context(prec=max(1, len(value.as_tuple().digits)),
                                                        Emax=MAX_EMAX, Emin=MIN_EMIN))
    if value is None and powers and shown[-1:].isalpha() and _number(shown[:-1]):  # 1.3G: a suffix it lacks
        raise NotWhole(f"takes {forms}; got {text!r}",
                       f"{shown[-1]} is no suffix it takes ({', '.join(k.upper() for k in powers)})")
    if value is None or not value.is_finite() or value != value.to_integral_value():
        raise NotWhole(f"takes {forms}; got {text!r}", "not a whole number")
    if value.adjusted() >= MAX_DIGITS:  # 1e999999999 would build a number of a billion digits
        raise NotWhole(f"takes {forms} of fewer than {MAX_DIGITS} digits; got {text!r}",
                       f"{MAX_DIGITS} digits or more")
    return Whole(int(value), shown)


def _number(text: str) -> bool:
    """Whether `text` reads as a finite decimal."""
    try:
        return Decimal(text.strip()).is_finite()
    except InvalidOperation:
        return False


class Text(str):
    """Text as the user typed it, which `typed` echoes bare: "bad --format xml", not 'xml' (an empty
    or blank one quoted: "bad --sizes ''")."""


def typed(value: object) -> str:
    """A value as the user gave it, for a refusal: a whole number's own text (1e50, 2.5e3, 8192), an
    int given as one in full, a float in at most 6 significant digits (3e11, 1e30; not
    1000000000000000019884624838656), Text bare, a bool as a config file spells it (true), anything
    else as repr."""
    if isinstance(value, Whole):
        return value.text
    if isinstance(value, Text) and value.strip():
        return str(value)
    if isinstance(value, bool):  # only a config file gives one: its spelling (TOML, JSON), not Python's
        return "true" if value else "false"
    if not isinstance(value, (int, float)):
        return repr(str(value) if isinstance(value, Text) else value)
    if isinstance(value, int):
        return str(value)
    mantissa, e, power = f"{value:.6g}".partition("e")
    return mantissa + (f"e{int(power)}" if e else "")  # 3e11, not 3e+11
