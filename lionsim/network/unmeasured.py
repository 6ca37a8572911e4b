"""The ops a profile's library prices without having measured them, and the line that says so.

`lionsim comm --fit` measures the ops --collective names (by default all-reduce, all-gather,
all-to-all and broadcast) and gives every other op a stand-in (lionsim.network.fit): the measured
ops' per-call floor (their median) at full duplex. A library's fixed cost is mostly per call, not
per op: gloo's built-in traits (lionsim.network.libraries), each op measured on one link, have
floors of 0.33 to 0.72 ms (broadcast 0.33, all-reduce 0.58, all-to-all 0.60, all-gather 0.72),
so a measured op's floor prices another within about a factor of 2, where no floor (what an op
without an entry costs) leaves out all of it and favours the runs that issue that op. Duplex is
not carried over: it is what an op's two directions do (broadcast 1.0 of the link, the exchanges
0.58-0.76), not a per-call cost.

The profile's [measured] `ops` lists what was measured, `stand_ins` the ops given the stand-in (a
floor read back from the file's microseconds can differ from the median of the others by an ulp,
so it is not told by value where the fit says). A profile written before that record, or
by hand, whose [traits.ops] holds some ops but not another, prices that other as the ideal library
does: no floor, full duplex. Either way a run that issues such an op is priced on figures no one
measured for it: `line` names the ops, the runs and how they are priced (estimate's caption, comm's
and bench's notes), `described` the same for a fitted profile's header.
"""

from __future__ import annotations

from statistics import median

from lionsim.network.calls import OPS
from lionsim.network.traits import OpTraits
from lionsim.numbers import in_words

MEASURED_AS = {"ps_push": "broadcast", "ps_pull": "broadcast"}
"""What comm --fit measures to price an op it cannot measure itself: the parameter server's calls
(lionsim.network.fit prices them as broadcast)."""
IDEAL_HOW = "with no floor at full duplex (the ideal library's pricing)"
"""How an op without an entry in a library's [traits.ops] is priced (traits.Traits.ops)."""


def stand_in_floor(floors: list[float]) -> float:
    """The floor (s) an unmeasured op is priced with: the measured ops' median, to 4 significant
    digits as the fit writes floors."""
    return float(f"{median(floors):.4g}")


def measured_ops(network) -> tuple[str, ...] | None:
    """The ops `network`'s profile measured ([measured] `ops`, which comm --fit writes); None where
    it does not say (a preset, a hand-written profile, a fit from before the record)."""
    ops = network.measured.get("ops")
    return tuple(ops) if isinstance(ops, list) else None


def unmeasured(network) -> dict[str, str]:
    """op -> how it is priced, for each op (calls.OPS order) the library of `network` prices without
    having measured it (module doc); {} for a built-in library (its figures are its own for every
    op) and a library with no per-op entries (a hand-written one that adds no per-op figure)."""
    from lionsim.network.libraries import TRAITS

    traits = network.traits
    if any(traits is t for _, t in TRAITS.items()) or not traits.ops:
        return {}
    entries, chosen = dict(traits.ops), dict(traits.runs)  # runs: ops its tuning model prices
    listed = measured_ops(network)
    measured = {op: entries[op] for op in (entries if listed is None else listed) if op in entries}
    stood = network.measured.get("stand_ins")  # the fit's record; absent from a profile fitted before it
    return {op: _how(entries.get(op), measured, None if not isinstance(stood, list) else op in stood)
            for op in OPS if op not in measured and op not in chosen}


def _how(entry: OpTraits | None, measured: dict[str, OpTraits], stand_in: bool | None = None) -> str:
    """How an unmeasured op's `entry` (None: none) prices it, beside the `measured` ops' entries;
    `stand_in`: whether the fit gave it the measured ops' floor, as [measured] `stand_ins` records
    (None, an older fit's: told by its floor, which a file's microseconds can miss by an ulp)."""
    if entry is None:
        return IDEAL_HOW
    us, full = _us(entry.floor_s), all(r.share == 1 and r.floor_s is None for r in entry.duplex)
    if stand_in is None:
        stand_in = entry.floor_s == stand_in_floor([t.floor_s for t in measured.values()]) if measured else False
    if full and measured and stand_in:  # the fit's
        names = list(measured)
        return f"with {names[0]}'s floor ({us}) at full duplex" if len(names) == 1 else \
            f"with the measured ops' median floor ({us}) at full duplex"
    same = next((op for op, t in measured.items() if (t.floor_s, t.duplex) == (entry.floor_s, entry.duplex)), None)
    if same is not None:  # the parameter server's calls: broadcast's
        return f"with {same}'s floor and duplex"
    floor = "no floor" if entry.floor_s == 0 else f"a floor of {us} a call"
    return f"with {floor} " + ("at full duplex" if full else "and duplex shares by size")


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:,.0f} us" if us >= 100 else f"{us:.3g} us"


def described(network) -> str:
    """The unmeasured ops by how each is priced, "" where every op was measured:
    "all_gather and all_to_all with all_reduce's floor (566 us) at full duplex; ..."."""
    by: dict[str, list[str]] = {}
    for op, how in unmeasured(network).items():
        by.setdefault(how, []).append(op)
    return "; ".join(f"{in_words(ops)} {how}" for how, ops in by.items())


def header_line(network) -> str:
    """A fitted profile's header line on the ops it did not measure (described), "" where none."""
    text = described(network)
    return text and f"not measured, so priced by a stand-in (a library's fixed cost is mostly per call): {text}"


def line(network, source: str, issued: dict[str, set[str]], *, calibrated: bool = False) -> str:
    """One line naming the ops the library of `network` (its profile `source`, as the user named it)
    did not measure that the runs issue (`issued`: run label -> its ops; a label "" for a table of
    ops, comm's), the runs, and how those ops are priced; "" where every issued op was measured.
    `calibrated`: `network` is bench --calibrate's fit, no file to refit, so the line offers a new
    fit and --network in place of --calibrate (a calibration measures the calls on the whole group,
    lionsim.measure.calibrate: a node's subgroup's are what it leaves out)."""
    gaps = unmeasured(network)
    runs_of = {op: [label for label, ops in issued.items() if op in ops] for op in gaps}
    hit = [op for op in gaps if runs_of[op]]
    if not hit:
        return ""
    by: dict[str, list[str]] = {}
    for op in hit:
        by.setdefault(gaps[op], []).append(op)
    parts = []
    for how, ops in by.items():
        runs = list(dict.fromkeys(label for op in ops for label in runs_of[op] if label))
        parts.append(f"{in_words(ops)}{f' ({in_words(runs)})' if runs else ''}, priced {how}")
    fitted = bool(network.measured)  # a fit's record (ops listed or not), else a profile written by hand
    head = f"Not measured in {source}" if fitted else f"Without an entry in {source}'s [traits.ops]"
    backend = network.traits.backend if network.traits.backend in ("gloo", "nccl") else "gloo|nccl"
    wanted = {MEASURED_AS.get(op, op) for op in OPS if op in hit or op not in gaps}  # beside the others
    kept = [op for op in OPS if op in wanted]
    fit = f"--fit {source if fitted and not calibrated else 'FILE.toml'} --collective {','.join(kept)}"
    then = "; bench --network FILE.toml in place of --calibrate prices the runs by that fit" if calibrated else ""
    return (f"{head}: {'; '.join(parts)}. lionsim comm --backend {backend} {fit} measures "
            f"{'it' if len(hit) == 1 else 'them'} with the rest{then}.")
