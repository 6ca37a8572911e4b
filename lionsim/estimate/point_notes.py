"""The notes an estimate sweep carries from its points: what `lionsim estimate` at one swept point
notes under its tables, each said once with the runs and the points it holds at.

An estimate at one point says why its figures are what they are: int8-allreduce sends int32 from
128 workers on (a speedup that falls there), NCCL's cap prices the link across nodes, a flat
compressing run's hier: form is faster, a time to target is extrapolated or has no figure, a run
issues an op the profile's library never measured (unmeasured_entries). A sweep
prints one table over all its points, and the breakdown above it is one point's (--workers): a
note that holds only at some swept points was said nowhere. Here each point's notes are gathered
(`entries`), grouped by what they say (`group`: a run's note at several points once, runs whose
note and points agree on one line), and written with their points (`lines`, the spans of
lionsim.reports.points). A note the breakdown printed that holds at every point is not said again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

from lionsim.estimate.config import Resolved
from lionsim.estimate.hier_hint import faster_forms, faster_text
from lionsim.estimate.library_note import sockets_cap_line, unmeasured_ops_line
from lionsim.estimate.table import NOTE, UNACTED
from lionsim.network import Network
from lionsim.reports.points import labels, spans_text
from lionsim.reports.to_target import notes as to_target_notes

TO_TARGET = "time to target"
"""What a note from the time to target's columns is about (--from-run), said before it."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One note at one swept point: about run `run` ("" the whole table), its `text`."""

    run: str
    text: str
    point: int
    """Index into the sweep's values."""
    about: str = ""
    """"" for the step's notes, TO_TARGET for the time to target's."""


@dataclass(frozen=True, slots=True)
class PointNote:
    """A note as the sweep says it: the runs it is about (("",) the whole table) and its points."""

    runs: tuple[str, ...]
    text: str
    points: tuple[int, ...]
    about: str = ""


def entries(r: Resolved, point: int, workers: int, network: Network, rows: list[dict], variable: str) -> list[Entry]:
    """The notes an estimate of `r` on `workers` workers of `network` (sweep point `point`, whose
    priced rows are `rows`) prints about its runs: each run's transport footnote (a wider
    container), and over workers the library's cap across nodes (over bandwidth the crossover
    table's capped line says it) and each faster hier: form (over bandwidth the breakdown's caption
    names them at the network's own rate: pricing each form at up to 1,000 rates doubled the
    sweep's time); with --from-run the time to target's notes."""
    found = [Entry(f"{row['strategy']}@{row['transport']}", row[key], point) for row in rows
             for key in (NOTE, UNACTED) if row.get(key)]  # UNACTED: --tokens' steps at this count in a warm-up
    if variable == "workers" and (cap := sockets_cap_line(network, workers)):
        found.append(Entry("", cap, point))
    if variable == "workers":  # whether a node's sum pays depends on the nodes, not on the link's rate
        at = dataclasses.replace(r, workers=workers, network=network)
        found += [Entry(run, faster_text(hier), point) for run, hier, _priced in faster_forms(at, rows)]
    if r.convergence is not None:
        for row in rows:
            label = f"{row['strategy']}@{row['transport']}"
            found += [Entry(label, part, point, TO_TARGET) for part in to_target_notes(SimpleNamespace(**row))]
    return found


def unmeasured_entries(r: Resolved, values, variable: str, spec) -> list[Entry]:
    """The line an estimate of `r` at each swept point (`values` of `variable`) prints where a run
    issues an op the profile (`spec`, as the user named it) never measured (unmeasured_ops_line),
    found once a worker count: the ops a run issues depend on its workers, not on the link's rate,
    so a bandwidth sweep finds it once, where each point's would probe every run again."""
    by_count: dict[int, str] = {}
    found = []
    for point, value in enumerate(values):
        workers = int(value) if variable == "workers" else r.workers
        if workers not in by_count:
            by_count[workers] = unmeasured_ops_line(dataclasses.replace(r, workers=workers), spec)
        found += [Entry("", by_count[workers], point)] if by_count[workers] else []
    return found


def group(found: list[Entry]) -> list[PointNote]:
    """`found` said once each: a run's note with every point it holds at, then the runs whose note
    holds at the same points on one line; in the order first found."""
    points: dict[tuple[str, str, str], list[int]] = {}
    for e in found:
        at = points.setdefault((e.run, e.about, e.text), [])
        at += [] if e.point in at else [e.point]
    runs: dict[tuple[str, str, tuple[int, ...]], list[str]] = {}
    for (run, about, text), at in points.items():
        runs.setdefault((about, text, tuple(sorted(at))), []).append(run)
    return [PointNote(tuple(who), text, at, about) for (about, text, at), who in runs.items()]


HEADING = "notes at the swept points (as an estimate at each prints them):"
"""The line over a sweep's point notes."""


def lines(notes: list[PointNote], values, variable: str, every: list[str], said: set[str] = frozenset()) -> list[str]:
    """`notes` as the sweep prints them, under HEADING, a line each, run by run in the order of
    `every` (all the runs priced; the whole table's first): the runs ("every run"), the points
    (their spans: "128-1,024 workers") and the note. A note in
    `said` (the breakdown's, at --workers) that holds at every point is left out: said already.
    [] where none is left."""
    everywhere = tuple(range(len(values)))
    kept = [n for n in notes if not (n.points == everywhere and n.text in said)]
    if not kept:
        return []
    order = {run: i for i, run in enumerate(every)}  # the whole table's notes first, then run by run
    kept.sort(key=lambda n: (min(order.get(run, -1) for run in n.runs), n.points[0]))
    names = labels(values, variable)
    out = [HEADING]
    for note in kept:
        who = ("every run " if set(note.runs) == set(every) and len(every) > 1 else
               "" if note.runs == ("",) else f"{', '.join(note.runs)} ")
        text = note.text if note.text.endswith(".") else note.text + "."
        about = f"{note.about}: " if note.about else ""
        out.append(f"  {who}at {spans_text(note.points, names, variable)}: {about}{text}")
    return out
