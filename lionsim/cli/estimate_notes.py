"""The notes `lionsim estimate` prints about its runs: the breakdown's caption lines, the hints
under a CSV or JSON table, and the footnotes estimate.json records for `lionsim report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

from lionsim.schedules import AFTER_BACKWARD

if TYPE_CHECKING:  # annotations only
    import pandas as pd


IDEAL_HINT = ("Library ideal: each collective priced by its alpha-beta formula alone. GPUs run NCCL (over sockets "
              "on Ethernet): --traits nccl prices it, --gpus-per-node sets your nodes' GPUs.")
"""Said on stderr under a CSV or JSON table when the ideal library priced rows that cross nodes (a flat
preset: 10gbe)."""
IDEAL_CAPTION_HINT = ("GPUs run NCCL (over sockets on Ethernet), not the ideal library: --traits nccl prices it, "
                      "--gpus-per-node sets your nodes' GPUs.")
"""IDEAL_HINT under the breakdown, whose title names the library and whose caption says comm is priced by
alpha-beta: only what they do not say."""


NODES_CLAUSE = ", --gpus-per-node sets your nodes' GPUs"
"""The hints' pointer to --gpus-per-node, left out where nodes already hold several GPUs (it was given)."""


def library_hint(frame: pd.DataFrame, hint: str = IDEAL_HINT) -> str:
    """`hint` where the ideal library, taken by default (a preset's: not --traits, not a profile's
    traits key), priced comm across nodes, else ""; without NODES_CLAUSE on nodes of several GPUs."""
    row = frame.iloc[0]
    crosses = int(row["workers"]) > int(row["gpus_per_node"])
    chosen = frame.attrs.get("library_chosen", False)
    if row.get("library") != "ideal" or not crosses or chosen:
        return ""
    return hint.replace(NODES_CLAUSE, "") if int(row["gpus_per_node"]) > 1 else hint


BUCKETS_NOTE = ("Per bucket or tensor each exchange pays a call's latency at a smaller call's rate: comm and "
                "exposed may exceed one exchange after backward. ")
"""Why a bucketed step's comm can be the larger, said where a row runs per bucket or tensor (in its
place, the frame's attrs["slower_line"] where a row's whole step is the larger: caption_notes)."""
OVERLAP_WORDS = {"buckets": "each bucket during backward", "tensors": "each tensor during backward",
                 AFTER_BACKWARD: "once after backward"}
"""The breakdown caption's words for a row's overlap mode (estimate.csv's overlap)."""


def overlap_text(modes: dict[str, list[str]]) -> str:
    """The caption's overlap sentence from each mode's runs (labels): the mode most runs took, then
    each other mode with its runs, so the caption lists no more labels than it must."""
    common = max(modes, key=lambda mode: len(modes[mode]))  # the first of equals
    said = f"{common} ({OVERLAP_WORDS.get(common, common)})"
    others = [f"{mode} ({OVERLAP_WORDS.get(mode, mode)}) for {', '.join(runs)}" for mode, runs in modes.items()
              if mode != common]
    return f"{said} for every run" if not others else f"{said}, but {'; '.join(others)}"


def need_overlap_note(frame: pd.DataFrame) -> str:
    """--need's note where its rows mix overlap modes (each row's schedule, estimate.csv's overlap):
    the runs that exchange during backward hide part of their exchange behind it; those that
    exchange after it wait for all of it. A reason a run can need more bandwidth than one sending
    more bytes only between runs of different schedules, so the note says it of those alone and
    names such a pair where the table shows one (fewer bytes across, more GB/s needed); a pair of
    one schedule that inverts (fp8 beside bf16: the codec's own costs) is not its to explain. ""
    where every row runs alike."""
    rows = list(frame.itertuples(index=False))
    after = [r for r in rows if r.overlap == AFTER_BACKWARD]
    during: dict[str, list] = {}
    for r in rows:
        if r.overlap != AFTER_BACKWARD:
            during.setdefault(r.overlap, []).append(r)
    if not after or not during:
        return ""

    def named(runs: list) -> str:
        return ", ".join(f"{r.strategy}@{r.transport}" for r in runs)

    def verb(runs: list) -> str:
        return "exchanges" if len(runs) == 1 else "exchange"

    hidden = "; ".join(f"{named(runs)} {verb(runs)} {OVERLAP_WORDS.get(mode, mode)}" for mode, runs in during.items())
    inverted = [(a, b) for a in after for runs in during.values() for b in runs
                if a.inter_bytes < b.inter_bytes and a.bandwidth_needed_GBps > b.bandwidth_needed_GBps]  # NaN: never
    pair = "" if not inverted else (f" ({named([inverted[0][0]])} sends fewer than {named([inverted[0][1]])} "
                                    "yet needs more)")
    return (f"Overlap: {hidden}, which hides part of the exchange behind it; {named(after)} {verb(after)} "
            f"{OVERLAP_WORDS[AFTER_BACKWARD]}, where all of it waits: between runs of these different schedules "
            f"(only those), fewer bytes across can need more bandwidth{pair}.")


def need_says_cap(frame: pd.DataFrame) -> bool:
    """Whether --need's table prints the fabric's cap and what lifts it under its rows (a reason its
    rows share: lionsim.estimate.need.shared_reason), so the breakdown's caption leaves its own out."""
    from lionsim.estimate.need import shared_reason

    return "need_note" in frame.columns and any(shared_reason(row) for row in frame.to_dict("records"))


def local_step_note(frame: pd.DataFrame) -> str:
    """What the overlap column means for a strategy whose payload exists only after its own step
    (Strategy.after_step: local SGD, DiLoCo): per bucket, its inner step run in backward bucket by
    bucket and each bucket's outer gradient exchanged as it is made (Strategy.step_in_backward; the
    local-step papers' simulations, no reference implementation); under any other mode, after
    backward (lionsim.steptime.overlap)."""
    from lionsim.strategies.core.base import STRATEGIES

    names = {"buckets": [], "after": []}
    for row in frame.drop_duplicates("strategy").itertuples(index=False):
        if row.overlap in names and getattr(STRATEGIES.get(row.strategy), "after_step", False):
            names[row.overlap].append(row.strategy)
    bucketed = (f"{', '.join(names['buckets'])}: the inner step run in backward per bucket, each bucket's outer "
                "gradient exchanged as it is made (what the local-step papers simulate; no reference code runs "
                "it). ") if names["buckets"] else ""
    tensors = "tensors" in set(frame["overlap"])  # asked per tensor, yet these ran after backward
    after = (f"{', '.join(names['after'])} run after backward: their payload exists only after their own step "
             "(only --overlap buckets runs it in backward). ") if names["after"] and tensors else ""
    return bucketed + after


def memory_note(frame: pd.DataFrame) -> str:
    """The runs that do not fit on their worker, one line (lionsim.estimate.memory.fits_note); "" where all do."""
    from lionsim.estimate.memory import fits_note

    return fits_note(frame.to_dict("records")) if "memory_fits" in frame.columns else ""


def memory_line(frame: pd.DataFrame) -> str:
    """memory_note as the caption's first sentence (capital, full stop), the report's note the same;
    where every run fits, how much the largest needs (lionsim.estimate.memory.fits_line)."""
    from lionsim.estimate.memory import fits_line

    note = memory_note(frame) or (fits_line(frame.to_dict("records")) if "memory_fits" in frame.columns else "")
    return f"{note[0].upper()}{note[1:].removesuffix('.')}." if note else ""


class Note(NamedTuple):
    """One note of the breakdown's caption about its runs, and where the caption puts it."""

    text: str
    place: str
    """"first": a line at the caption's top (what decides the answer: a run that does not fit, the fastest step);
    "overlap": in BUCKETS_NOTE's place, after the overlap sentence; "sentence": after the caption's own
    sentences; "line": a line of its own under them; "cap": the
    fabric's cap, a line of its own unless --need's table says it (need_says_cap)."""


def caption_notes(frame: pd.DataFrame) -> list[Note]:
    """Every note the breakdown's caption prints about its runs, the one list both the caption
    (breakdown_table) and estimate.json (footnotes) take them from, in the order the report lists
    them: the baseline --from-run took from DIR (every speedup is against it), the runs slower per bucket
    than after backward (lionsim.estimate.bucket_note), the transports' footnotes,
    the whole table's, the codec's share of a step (lionsim.estimate.codec_note), the short-bench H,
    the ideal library's hint, the fabric's cap, the library's lines, the memory warning, the fastest
    step priced; none empty."""
    notes = [Note(frame.attrs.get("baseline_line", ""), "line"),
             Note(frame.attrs.get("slower_line", ""), "overlap"),  # in BUCKETS_NOTE's place
             *(Note(note, "sentence") for note in frame.attrs.get("notes", ())),  # the transports' footnotes
             *(Note(note, "sentence") for note in frame.attrs.get("caption_notes", ())),  # the whole table's
             Note(frame.attrs.get("codec_line", ""), "line"),  # what the speedups rest on: lionsim's codec kernels
             Note(short_bench_note(frame), "line"), Note(library_hint(frame, IDEAL_CAPTION_HINT), "line"),
             Note(frame.attrs.get("cap_line", ""), "cap"),
             *(Note(line, "line") for line in frame.attrs.get("library_lines", ())),
             Note(memory_line(frame), "first"),  # whether a run can happen at all, right under the table
             Note(frame.attrs.get("fastest_line", ""), "first")]  # then the answer, before the terms
    return [note for note in notes if note.text]


def footnotes(frame: pd.DataFrame, algorithm_notes: Iterable[str] = ()) -> list[str]:
    """Every note the breakdown's caption prints about its runs (caption_notes) and a sweep's
    `algorithm_notes` (a run's line indented under the line naming the library), with the whole
    run's lines on a warm-up it never left (unacted_notes), each once:
    estimate.json records them so `lionsim report` carries what the terminal said."""
    lines = [*(note.text for note in caption_notes(frame)), *frame.attrs.get("unacted_notes", ()), *algorithm_notes]
    return list(dict.fromkeys(line for line in lines if line))


def point_lines(frame: pd.DataFrame, swept) -> list[str]:
    """What an estimate at each of `swept`'s points notes, each note once with its runs and points
    (lionsim.estimate.point_notes), less what the tables of `frame` (the estimate at --workers)
    printed where it holds at every point."""
    from lionsim.estimate.hier_hint import faster_text
    from lionsim.estimate.point_notes import lines
    from lionsim.reports.to_target import has_to_target, notes

    said = {note.text for note in caption_notes(frame)} | set(frame.attrs.get("notes", ()))
    said |= set(frame.attrs.get("unacted_notes", ()))  # under the whole run's table
    said |= {faster_text(hier) for hier in frame.attrs.get("faster_hier", ())}  # in hier_notes' words there
    if has_to_target(frame):  # the time to target table's notes on its runs
        said |= {part for row in frame.itertuples(index=False) for part in notes(row)}
    every = list(dict.fromkeys(swept.rows["strategy"] + "@" + swept.rows["transport"]))
    return lines(list(swept.point_notes), swept.sweep.values, swept.sweep.variable, every, said)


def short_bench_note(frame: pd.DataFrame) -> str:
    """One line where a local-step run took lionsim's short-bench H (Strategy.short_bench_default):
    the option that sets it and each method's authors' H at scale; "" where none did. lionsim keeps
    the bench's H as estimate's default (docs/time-model.md says why), so this note is its warning."""
    authors = frame.attrs.get("short_bench") or {}
    if not authors:
        return ""
    named: dict[str, list[str]] = {}  # one text, every strategy it names
    for strategy, text in authors.items():
        named.setdefault(text, []).append(strategy)
    return ("H: lionsim's default, measured on its 100-step benches (docs/methods-2025-defaults.md), far below "
            "the authors' at scale; set --local-steps H (or --opt NAME.local_steps=H). Theirs: "
            + "; ".join(f"{', '.join(names)} {text}" for text, names in named.items()) + ".")


def unmeasured_note(frame: pd.DataFrame) -> str:
    """The caption's line on the ops the profile's library never measured (lionsim.network.unmeasured)
    as a note starts it (lower case, as comm's); "" where none."""
    line = frame.attrs.get("unmeasured_line", "")
    return line[:1].lower() + line[1:]

