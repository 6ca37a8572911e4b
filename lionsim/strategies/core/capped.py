"""The note where an option asks for more than a chunk or matrix holds: a top-k above the values of
a chunk (demo, sparseloco), a rank above a matrix's min(n, m) (powersgd).

A note, not a refusal: the value is capped where it acts, as PyTorch's PowerSGD hook caps the rank
at min(n, m) per matrix, so such a run is a valid one that sends everything a chunk holds (or
every tensor whole); what was silent is that a larger value changes nothing. The note names the
cap, so the reader learns that any value above it sends the same, under bench's and estimate's
tables (Strategy.capped_note)."""

from __future__ import annotations

from lionsim.strategies.core.form import option_spec


def capped_line(strategy, field: str, cap: int, holds: str) -> str:
    """The line where `strategy`'s option `field` is above `cap`, what `holds` says holds at most;
    "" where it is not."""
    value = getattr(strategy.opts, field)
    if value <= cap:
        return ""
    flag = option_spec(strategy.name, strategy.Options, field).flag
    return (f"{strategy.name}: {flag} {value} is capped at {cap:,}, {holds}: any value above {cap:,} sends "
            "the same.")
