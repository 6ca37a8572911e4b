"""How a table's step times were obtained, in a few words for its caption, from the run's own
provenance (run.json's `timing` notes and `config`, estimate.csv's columns), never assumed:

    step times modelled: comp on h100 (FLOPs at peak x mfu), enc/upd (memory passes at h100's
    bandwidth), comm on 1gbe (alpha-beta)
    step times: comp measured (median of 5 passes, 3 warm-up dropped); enc/upd measured (median
    of 19 steps, 1 warm-up dropped); comm modelled on 1gbe (alpha-beta)

run.json's notes say it at length (lionsim.training.record.timing_notes); these are their short
form. No pandas here: the CLI's tables import it.
"""

from __future__ import annotations

import re

from lionsim.numbers import plural
from lionsim.compute.device_file import device_shown, known_device

UNKNOWN = "run.json says how each was obtained"
"""What a caption says where the record carries no timing notes (a run written before them, or
a summary shown without its run.json)."""


def comm_pricing(library: str | None) -> str:
    """How a network model priced a collective: "alpha-beta" (the ideal library: each collective's
    formula alone), else by the library's traits, as --traits and comm_priced_by name them ("nccl
    traits": NCCL's tuning model; "gloo traits": gloo's fitted floors and rates)."""
    return "alpha-beta" if library in (None, "", "ideal") else f"{library} traits"


def priced_library(meta: dict) -> str | None:
    """The library whose traits priced a run's comm, from run.json: the network's own record
    (network.traits.name: a GPU-cluster preset's nccl, a gloo run's gloo), which says it whether or
    not --traits was typed; else the config's --traits (a record written without it)."""
    traits = (meta.get("network") or {}).get("traits")
    name = traits.get("name") if isinstance(traits, dict) else traits
    return name or (meta.get("config") or {}).get("traits")


def _median(note: str, steps, warmup, kinds=None) -> str:
    """`(median of N steps, W warm-up dropped)` of a per-step measured time; a compute figure timed
    once per bench says its passes (`measured once per bench: median of 5 ... (after 3 dropped)`).
    Booking takes a median per kind of step (training.booking.medians_by_kind): where a run took
    several (run.json's timing.step_kinds: local-step and phased methods) each median covers fewer
    than N steps, so it says `median per step kind over N steps`."""
    passes = re.search(r"median of (\d+) .*?after (\d+) dropped", note)
    if passes:
        return f"(median of {plural(int(passes[1]), 'pass', 'passes')}, {passes[2]} warm-up dropped)"
    warm = int(warmup or 0)
    median = "median per step kind" if isinstance(kinds, int) and kinds > 1 else "median"
    if isinstance(steps, int) and not isinstance(steps, bool):
        over = " over" if median != "median" else " of"
        return f"({median}{over} {plural(steps - warm, 'step')}, {warm} warm-up dropped)"
    return f"({median}, {warm} warm-up dropped)"


def run_times(meta: dict | None, network: str | None = None, link: str | None = None,
              pricing: str | None = None) -> str:
    """A bench's (or a sweep cell's) step times in a few words, from run.json `meta`: each part
    measured (median of how many, warm-up dropped) or modelled (on what, by what). `network`:
    where comm was priced (None: run.json's; a sweep passes "each row's network"); `link`: where a
    gloo/nccl run's collectives were measured (titles.link_name); `pricing`: what priced comm (None:
    run.json's library, comm_pricing; a sweep whose networks' libraries differ says so)."""
    meta = meta or {}
    timing, config = meta.get("timing") or {}, meta.get("config") or {}
    notes = {key: timing.get(key) for key in ("compute_s", "encode_s", "comm_s")}
    if not all(isinstance(note, str) for note in notes.values()):
        return UNKNOWN
    steps, warmup, kinds = config.get("steps"), timing.get("warmup_steps"), timing.get("step_kinds")
    compute = config.get("compute")
    known = known_device(compute)  # read once (a device file's): its name, launches and kernel floor below
    device = device_shown(compute, known)
    network = network or (meta.get("network") or {}).get("name") or config.get("network")
    parts = []
    if notes["compute_s"].startswith("measured"):
        parts.append(("comp", "measured", _median(notes["compute_s"], steps, warmup)))
    else:
        how = _modelled_compute(known, timing.get("compute_counted"))
        parts.append(("comp", "modelled", f"on {device} ({how})"))
    if notes["encode_s"].startswith("measured"):
        parts.append(("enc/upd", "measured", _median(notes["encode_s"], steps, warmup, kinds)))
    else:
        floor = f", at least {known.kernel_s * 1e6:g} us a kernel" if known is not None else ""
        parts.append(("enc/upd", "modelled", f"(memory passes at {device}'s bandwidth{floor})"))
    if notes["comm_s"].startswith("measured"):
        where = f"on {link} " if link else ""
        parts.append(("comm", "measured", where + _median(notes["comm_s"], steps, warmup, kinds)))
    else:
        parts.append(("comm", "modelled", f"on {network} ({pricing or comm_pricing(priced_library(meta))})"))
    return said(parts)


def _modelled_compute(known, counted) -> str:
    """How a device's compute was priced: its FLOPs at peak x mfu, or, where its kernels' launches
    outlast them (every built-in workload's on every device), the launches, which no device's
    peak changes (lionsim.steptime.work.device_work: the larger of the two). `known`: the run's
    device (device_file.known_device), None where none is known."""
    if known is None or not isinstance(counted, dict):
        return "FLOPs at peak x mfu"
    from lionsim.compute.launches import launch_times, launch_words

    kernels = int(counted.get("kernels") or 0)
    floor_s, flops_s = launch_times(float(counted.get("flops") or 0.0), kernels, known)
    return f"{launch_words(kernels, known)}, not FLOPs" if floor_s > flops_s else "FLOPs at peak x mfu"


def said(parts: list[tuple[str, str, str]]) -> str:
    """(part, how, what) as one phrase: "step times modelled: a x, b y" where every part was
    obtained alike, else "step times: a measured x; b modelled y"."""
    hows = {how for _, how, _ in parts}
    if len(hows) == 1:
        return f"step times {hows.pop()}: " + ", ".join(f"{part} {what}" for part, _, what in parts)
    return "step times: " + "; ".join(f"{part} {how} {what}" for part, how, what in parts)


def estimate_times(row) -> str:
    """An estimate's step times in a few words, from an estimate.csv row: every part modelled,
    compute from counted FLOPs at the device's peak x mfu, local (encode, decode, update) from the
    kernel table the caption names, comm by the library's model on the network."""
    return said([("compute", "modelled", f"on {row['device']} (FLOPs at peak x mfu {row['mfu']:g})"),
                 ("local", "modelled", "(kernel table)"),
                 ("comm", "modelled", f"on {row['network']} ({comm_pricing(row.get('library'))})")])


def library_note(meta: dict | None) -> str | None:
    """What priced a run's modelled comm, from run.json: the library's traits (priced_library) and
    what they model, or alpha-beta alone; None where comm was measured or the record says nothing."""
    meta = meta or {}
    comm = (meta.get("timing") or {}).get("comm_s")
    if not isinstance(comm, str) or comm.startswith("measured"):
        return None
    library = priced_library(meta)
    if library in (None, "", "ideal"):
        return "comm priced by alpha-beta (the ideal library: each collective's formula alone)"
    traits = (meta.get("network") or {}).get("traits")
    what = traits.get("description") if isinstance(traits, dict) else None
    return f"comm priced with {library} traits" + (f" ({what})" if what else "")


def wait_note(config: dict | None, local_steps: bool = False) -> str | None:
    """What a run's step_s adds for uneven workers (run.json's config: --compute-spread), None
    without a spread; `local_steps`: some run syncs once a round (lionsim.steptime's round wait)."""
    spread = (config or {}).get("compute_spread")
    if not spread:
        return None
    specs = ", ".join(spread) if isinstance(spread, list) else str(spread)
    text = (f"step_s includes the wait for the slowest worker under --compute-spread {specs} (wait_s: what "
            "waiting adds to the median worker's step, whose compute is compute_s)")
    if local_steps and (config or {}).get("backend", "sim") == "sim":
        text += ("; a local-step run waits once a round, at its sync: its local steps' wait_s is 0 and "
                 "the sync's carries the round's wait")
    elif local_steps:  # gloo/nccl ranks exchange their losses every step (lionsim.training.booking)
        text += "; every step waits, a local-step run's too: the ranks exchange their losses each step"
    return text
