"""`lionsim estimate`: per-step time breakdown for a model size on N workers, no training."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Iterable, NamedTuple, Optional

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from lionsim.cli import options as o
from lionsim.errors import LionsimError
from lionsim.cli.app import app, console, err_console, out_console
from lionsim.cli.strategy_flags import strategy_options
from lionsim.compute.devices import device_choices  # no torch: the presets' names, for --help
from lionsim.compute.models import MODELS  # no torch: the presets' names, for --help
from lionsim.estimate.defaults import ACCEPTED, DEFAULT_STRATEGIES, hidden_in_help
from lionsim.estimate.plain import count_range  # no torch: the counts' ranges, for their refusals
from lionsim.network.cost import AUTO
from lionsim.cli.output import Format, emit, natural_width, parse_out
from lionsim.numbers import ms_text, plural, run_duration, speedup_text, step_bytes
from lionsim.reports.columns import ROUND_STEPS, rounds_of, strategy_text
from lionsim.whole_nodes import one_node_line

Model = Annotated[Optional[str], typer.Option(
    "--model", "-m", help=f"Model preset: {', '.join(MODELS.names())} (resnet50-tf: ResNet-50 with TensorFlow's "
                          "weight layout, the factors PowerSGD sends from TF code); or your own: FILE.py:FUNC or "
                          "module:FUNC returning an nn.Module or (module, example_input), built on the meta device, "
                          "its FLOPs counted.")]
Params = Annotated[Optional[int], typer.Option(
    "--params", parser=o.whole_in(count_range("params")),
    help="Parameters instead of a preset, e.g. 3e9 (needs --tokens-per-worker).")]
Tensors = Annotated[Optional[int], typer.Option(
    "--tensors", parser=o.whole_in(count_range("tensors")),
    help="Parameter tensors: per-tensor scales, and the compute's launch floor (3 kernels a tensor); default: "
         "the model's, 1 with --params.")]
TokensPerWorker = Annotated[Optional[int], typer.Option(
    "--tokens-per-worker", parser=o.whole_in(count_range("tokens-per-worker")),
    help="Tokens (or patches) per worker per step; default: one sample of the model. For "
         "resnet* and a --model FILE.py:FUNC with an example input: samples (images), "
         "default the example's batch.")]
GpusPerNode = Annotated[Optional[int], typer.Option(
    "--gpus-per-node", parser=o.whole_in(count_range("gpus-per-node")),
    help="Workers per node, overriding the network's (intra link: the network's, else the device's NVLink).")]
ReplicaGpus = Annotated[int, typer.Option(
    "--replica-gpus", parser=o.whole_in(count_range("replica-gpus")),
    help="Devices each worker is made of (default 1): a replica sharded over G devices (FSDP, "
         "ZeRO-3; a DiLoCo worker is a datacenter). --tokens-per-worker are the replica's; its "
         "FLOPs, codec and optimizer passes split over the G devices; traffic inside the replica "
         "is not priced.")]
RunSteps = Annotated[Optional[int], typer.Option(
    "--steps", parser=o.whole_number, help="Also price a whole run of N steps with every phase it has (warm-ups, momentum syncs, local "
                    "steps): run_s and mean_step_s beside the steady step. With --from-run: also the baseline's "
                    "steps to target at scale.")]
RunTokens = Annotated[Optional[int], typer.Option(
    "--tokens", parser=o.whole_number, help="Also price a whole run over T tokens in all: ceil(T / (tokens per worker x workers)) steps "
                     "(instead of --steps).")]
MomentumSync = Annotated[Optional[str], typer.Option(
    "--momentum-sync", help="Lion family: never | every:K | schedule:K, an fp32 all-reduce of the momenta on "
                            "those steps: every:K in the step as one sync over K steps (as a local-step "
                            "exchange over H); schedule:K, whose gaps grow, only in a whole run (--steps).")]
Device = Annotated[Optional[str], typer.Option("--device", show_default=False, help=(
    f"Accelerator: {device_choices()} "
    "(each datasheet's figures and source: lionsim devices). Default: the network's (a profile's `device` "
    "key; the dgx-*, a100x8-* and h100x8-* presets state theirs), else h100. bench's --compute does not "
    "follow a profile's device."))]
Mfu = Annotated[Optional[float], typer.Option(
    "--mfu", help="Model FLOPs utilisation, 0.001 to 1; default: the device's (0.4).")]
BucketMb = Annotated[Optional[float], typer.Option(
    "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients, as DDP's bucket_cap_mb (default 25, DDP's); "
                        "for runs exchanged per bucket (--overlap buckets, or auto where a run's reference does); "
                        "refused where no run is (it would change nothing).")]
Overlap = Annotated[str, typer.Option(
    "--overlap", help=o.OVERLAP_HELP)]
Algorithm = Annotated[str, typer.Option(
    "--algorithm", help="Collective algorithm: auto (cheapest; NCCL's choice under NCCL) or a name from "
                        "`lionsim comm --help`, for the ops it implements (others: cheapest). Under NCCL: ring, tree, "
                        "pairwise or param_server; under gloo: ring, pairwise or param_server; the textbook ones "
                        "(rabenseifner ...) need --traits ideal or mpi.")]
KernelsOpt = Annotated[str, typer.Option(
    "--kernels", help="How encode/decode/update are priced: table (the codec kernel table's rows for --device), "
                      "table:DEVICE (another device's rows, e.g. table:cpu: codecs staged through the host; "
                      "table:v100-tf1.15: TensorFlow 1.15's top-k on a V100), "
                      "or ideal (one fused memory pass each).")]
OptimizerOpt = Annotated[str, typer.Option(
    "--optimizer", help="How the optimizer steps run (with --kernels table): fused (one kernel: FusedAdam, "
                        "torch fused=True; what large-model trainers run), foreach (torch's multi-tensor ops) or "
                        "eager (torch's for-loop, every op per tensor).")]
SweepOpt = Annotated[Optional[str], typer.Option(
    "--sweep", help=f"{ACCEPTED}: crossover table and, with --out, sweep.csv, crossover.csv, sweep.png and sweep.svg. "
                    "bandwidth: GB/s a node the inter link moves, after the network's efficiency (the link's own "
                    "rate is that / efficiency).")]
NeedOpt = Annotated[Optional[str], typer.Option(
    "--need", metavar="utilisation=U",
    help="For each strategy, the inter-node bandwidth (GB/s per node, solved) at which compute (the worker's own "
         "work: all but waiting for the network) is U of the step, U in (0, 1), e.g. utilisation=0.95 (or "
         "utilization=): a table, and bandwidth_needed_GBps in estimate.csv.")]
FromRun = Annotated[Optional[Path], typer.Option(
    "--from-run", metavar="DIR",
    help="A finished `lionsim bench` --out or `lionsim sweep` root: each strategy's run to target at scale, from "
         "its steps to target there relative to its baseline (fitted against log N over a sweep's worker counts), "
         "priced with every phase; --steps/--tokens then give the baseline's steps to target at scale (default: "
         "the run's own); without -s it prices the runs DIR trained, its baseline first. Columns steps_to_target, "
         "time_to_target_s, to_target_speedup.")]
EstimateOut = Annotated[Optional[Path], typer.Option(
    "--out", "-o", parser=parse_out, metavar="DIR", help="Write DIR/estimate.csv, estimate.json (the command, for `lionsim report`), the sweep files and with --from-run to_target.png.")]


RUN_WIDTH = 17
"""Least characters of the run column: a label is two whole lines, strategy and @transport
(reports.widths.fold_run), and the column widens to the longest (run_width) while the table fits
80 columns; past that the names break after a '-' (reports.widths.fit)."""


def _ms(seconds: float) -> str:
    """Milliseconds, one unit per column: 3 significant digits, thousands grouped from 1,000 up
    (999.97 too: "1,000", never "1e+03"), "<0.0001" below a tenth of a microsecond, and a power of
    ten only from 1,000,000 (lionsim.numbers.ms_text)."""
    ms = seconds * 1e3
    if 0 < ms < 1e-4:
        return "<0.0001"
    return ms_text(ms)


def _library(row) -> str:
    """Which library priced comm: "nccl over sockets", "ideal", "gloo" (estimate.csv: library, fabric)."""
    from lionsim.reports.columns import library_text

    return library_text(row)


def topology(row) -> str:
    """Nodes and workers a node, in words: "16 nodes x 1 GPU", "2 nodes x 8 GPUs" (a worker of G devices,
    --replica-gpus, is counted as a worker)."""
    workers = int(row["workers"])
    each = min(int(row["gpus_per_node"]), workers)
    nodes = workers // each
    unit = "GPU" if int(row.get("replica_gpus", 1) or 1) == 1 else "worker"
    return f"{plural(format(nodes, ','), 'node')} x {plural(each, unit)}"


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


def _devices(row, whose: str = "") -> str:
    """The device a worker runs on, or "G x DEVICE a worker" for a replica of G (--replica-gpus), and
    `whose` it is where the network named it ("a100-40gb (the profile's)")."""
    g = int(row.get("replica_gpus", 1) or 1)
    device = row["device"] + (f" ({whose})" if whose else "")
    return device if g == 1 else f"{g} x {device} a worker"


BUCKETS_NOTE = ("Per bucket or tensor each exchange pays a call's latency at a smaller call's rate: comm and "
                "exposed may exceed one exchange after backward. ")
"""Why a bucketed step's comm can be the larger, said where a row runs per bucket or tensor."""
OVERLAP_WORDS = {"buckets": "each bucket during backward", "tensors": "each tensor during backward",
                 "after": "once after backward"}
"""The breakdown caption's words for a row's overlap mode (estimate.csv's overlap)."""


def overlap_text(modes: dict[str, list[str]]) -> str:
    """The caption's overlap sentence from each mode's runs (labels): the mode most runs took, then
    each other mode with its runs, so the caption lists no more labels than it must."""
    common = max(modes, key=lambda mode: len(modes[mode]))  # the first of equals
    said = f"{common} ({OVERLAP_WORDS.get(common, common)})"
    others = [f"{mode} ({OVERLAP_WORDS.get(mode, mode)}) for {', '.join(runs)}" for mode, runs in modes.items()
              if mode != common]
    return f"{said} for every run" if not others else f"{said}, but {'; '.join(others)}"


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
    """memory_note as the caption's first sentence (capital, full stop), the report's note the same; ""."""
    note = memory_note(frame)
    return f"{note[0].upper()}{note[1:].removesuffix('.')}." if note else ""


class Note(NamedTuple):
    """One note of the breakdown's caption about its runs, and where the caption puts it."""

    text: str
    place: str
    """"first": the caption's first sentence (the note that decides the answer: a run that does not fit);
    "sentence": after the caption's own sentences; "line": a line of its own under them; "cap": the
    fabric's cap, a line of its own unless --need's table says it (need_says_cap)."""


def caption_notes(frame: pd.DataFrame) -> list[Note]:
    """Every note the breakdown's caption prints about its runs, the one list both the caption
    (breakdown_table) and estimate.json (footnotes) take them from, in the order the report lists
    them: the baseline --from-run took from DIR (every speedup is against it), the transports' footnotes,
    the whole table's, the short-bench H, the ideal library's hint, the fabric's cap, the library's
    lines, the memory warning; none empty."""
    notes = [Note(frame.attrs.get("baseline_line", ""), "line"),
             *(Note(note, "sentence") for note in frame.attrs.get("notes", ())),  # the transports' footnotes
             *(Note(note, "sentence") for note in frame.attrs.get("caption_notes", ())),  # the whole table's
             Note(short_bench_note(frame), "line"), Note(library_hint(frame, IDEAL_CAPTION_HINT), "line"),
             Note(frame.attrs.get("cap_line", ""), "cap"),
             *(Note(line, "line") for line in frame.attrs.get("library_lines", ())),
             Note(memory_line(frame), "first")]
    return [note for note in notes if note.text]


def footnotes(frame: pd.DataFrame, algorithm_notes: Iterable[str] = ()) -> list[str]:
    """Every note the breakdown's caption prints about its runs (caption_notes) and a sweep's
    `algorithm_notes` (a run's line indented under the line naming the library), each once:
    estimate.json records them so `lionsim report` carries what the terminal said."""
    lines = [*(note.text for note in caption_notes(frame)), *algorithm_notes]
    return list(dict.fromkeys(line for line in lines if line))


def point_lines(frame: pd.DataFrame, swept) -> list[str]:
    """What an estimate at each of `swept`'s points notes, each note once with its runs and points
    (lionsim.estimate.point_notes), less what the tables of `frame` (the estimate at --workers)
    printed where it holds at every point."""
    from lionsim.estimate.hier_hint import faster_text
    from lionsim.estimate.point_notes import lines
    from lionsim.reports.to_target import has_to_target, notes

    said = {note.text for note in caption_notes(frame)} | set(frame.attrs.get("notes", ()))
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


def _h(row) -> int:
    """A row's H (estimate.csv's round_steps), 1 where the frame has none."""
    return getattr(row, ROUND_STEPS, 1)


def run_label(row, h: int | None = None, star: bool = False) -> RunName:
    """A table's run cell: strategy (* for the baseline where `star`) and its H where it has local
    steps (`diloco H=2`: strategy_text, H the row's own unless given), then @transport. Every table
    estimate prints names its runs so, the step table's way."""
    from lionsim.reports.tables import fold_run

    h = _h(row) if h is None else h
    return fold_run(strategy_text(row.strategy, h, star and f"{row.strategy}@{row.transport}" == row.baseline),
                    row.transport)


def _width(frame: pd.DataFrame, star: bool = False) -> int:
    """The run column's width for frame's rows as run_label names them (each as if the baseline
    where `star`)."""
    from lionsim.reports.tables import run_width

    return run_width([(strategy_text(r.strategy, _h(r), star), r.transport) for r in frame.itertuples(index=False)],
                     RUN_WIDTH)


def breakdown_table(frame: pd.DataFrame) -> Table:
    """One row per run: the step breakdown in ms, bytes sent per worker, speedup. Narrow: encode,
    decode and update are folded into `local` and the overlap mode goes to the caption (estimate.csv
    has every column), so it fits 80 columns where its numbers allow (wider where they alone need it:
    lionsim.reports.widths)."""
    from lionsim.reports.columns import model_text, per_worker_text, shows_across
    from lionsim.reports.obtained import estimate_times
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    modes = {mode: [f"{r.strategy}@{r.transport}" for r in frame.itertuples(index=False) if r.overlap == mode]
             for mode in dict.fromkeys(frame["overlap"])}
    overlap = overlap_text(modes)
    workers, per_node = int(first["workers"]), int(first.get("gpus_per_node", 1) or 1)
    one_node = one_node_line(workers, per_node, first["network"])  # nothing crosses nodes: no `across` to define
    across = shows_across(frame) and not one_node  # what one node sends to the others, where a node has several GPUs
    notes = caption_notes(frame)

    def placed(*places: str) -> list[str]:
        return [escape(note.text) for note in notes if note.place in places]  # a profile's [nccl] is text

    # the note that decides the answer first (a run that does not fit its device), then what the columns
    # mean (`across` before the notes that quote it), then the notes on this table, a line each at the end
    table = Table(
        title=(f"lionsim estimate: {model_text(first)}, {per_worker_text(first)}, "
               f"{plural(format(first['workers'], ','), 'worker')} on {first['network']} "
               f"({topology(first)}, library: "
               f"{_library(first)}), {_devices(first, frame.attrs.get('device_from', ''))} at mfu {first['mfu']:g}"),
        caption=("".join(f"{note}\n" for note in placed("first"))
                 + f"ms per step, one worker; {estimate_times(first)}. local: encode + decode + update (estimate.csv: "
                 "each). comm: every exchange; exposed: what backward does not hide. sent: bytes per "
                 "worker per step, as the priced algorithms move them (estimate.csv: algorithm). "
                 + ("across: bytes per node per step to other nodes. " if across else "")
                 + f"speedup: baseline step / step; * baseline. overlap: {overlap}. "
                 f"{BUCKETS_NOTE if set(modes) & {'buckets', 'tensors'} else ''}{local_step_note(frame)}"
                 f"kernels: {' | '.join(dict.fromkeys(frame['kernels']))}, {first['optimizer']} optimizer."
                 + (f" {one_node}" if one_node else "")
                 + "".join(f" {note}" for note in placed("sentence"))
                 + "".join(f"\n{line}" for line in placed("line", *(() if need_says_cap(frame) else ("cap",))))),
        # a line each; the fabric's cap not where --need's table says it once
        caption_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False,
    )
    width = _width(frame, star=True)  # as if each were the baseline
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    # bytes compact, as in every step table (bytes_text); with `across` the speedup header folds where
    # the table would pass the width it may take (80 in a pipe, a wider terminal's or COLUMNS' own)
    names = ("compute", "local", "comm", "exposed", "step", "sent", *(("across",) if across else ()), "speedup")
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    size = step_bytes
    for row in frame.itertuples(index=False):
        table.add_row(
            run_label(row, star=True),
            *(_ms(x) for x in (row.compute_s, row.encode_s + row.decode_s + row.update_s, row.comm_s,
                               row.comm_exposed_s, row.step_s)),
            size(row.wire_bytes), *([size(row.inter_bytes)] if across else []), speedup_text(row.speedup),
        )
    from lionsim.reports.widths import table_width

    if across and natural_width(table) > table_width():
        table.columns[-1].header = "speed\nup"
    return fit(table)


def run_table(frame: pd.DataFrame) -> Table:
    """A whole run (--steps / --tokens): its seconds, mean step beside the steady one, its phases."""
    from lionsim.reports.tables import fit
    from lionsim.reports.widths import Phrases

    first = frame.iloc[0]
    table = Table(title=f"a whole run of {plural(f'{first.run_steps:,}', 'step')}", caption=(
        "time: the run's length (h:mm:ss; past a day in days, d, past a year in years, y); mean step and steady step in ms; speedup: the baseline's run / this run; "
        "phases: the steps of each kind the run has."), caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("time", "mean step", "steady", "speedup"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("phases", overflow="fold")
    for row in frame.itertuples(index=False):
        table.add_row(run_label(row), run_duration(row.run_s), _ms(row.mean_step_s), _ms(row.step_s),
                      speedup_text(row.run_speedup), Phrases(row.run_phases))
    return fit(table)


def spread_table(frame: pd.DataFrame) -> Table:
    """Uneven workers: the median and slowest worker's compute, the wait, the step's percentiles."""
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    # a local-step run's round may be a Monte Carlo where the per-step maximum is exact: each says its own
    by_method: dict[str, list[str]] = {}  # every run named under its method: "adamw, lion: exact; diloco: ..."
    for r in frame.itertuples(index=False):
        by_method.setdefault(r.spread_method, []).append(r.strategy)
    how = first["spread_method"] if len(by_method) == 1 else "; ".join(
        f"{', '.join(dict.fromkeys(names))}: {method}" for method, names in by_method.items())
    local = (frame["local_steps"] > 1).any()
    table = Table(title=f"uneven workers: {first['compute_spread']}, {first['workers']} workers ({how})",
                  caption="ms per step. compute: the median worker's; slowest: the slowest worker's (expected); "
                          "wait: what waiting for it adds to the median worker's step; step: expected, with its p50 "
                          "and p99." + (" A local-step run (local_steps H > 1) waits once a round, at its sync: its "
                                        "slowest, wait, p50 and p99 are the round's over H (slowest: the round's slowest "
                                        "worker, whom the sync waits for)." if local else ""),
                  caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("compute", "slowest", "wait", "step", "p50", "p99", "speedup"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in frame.itertuples(index=False):
        table.add_row(run_label(row),
                      *(_ms(x) for x in (row.compute_median_s, row.compute_max_s, row.wait_s, row.step_s,
                                         row.step_p50_s, row.step_p99_s)), speedup_text(row.speedup))
    return fit(table)


def need_table(frame: pd.DataFrame) -> Table:
    """--need: the inter-node bandwidth each run needs for compute to be U of its step. A reason
    several rows share (a fabric's cap and its remedies, a cap the library priced has not) is printed
    once, under the table, each row marked [1] (need.footnoted; estimate.csv's need_note keeps each
    row's whole text)."""
    from lionsim.estimate.need import REL_TOL, busy_share, footnoted, percent, target_text
    from lionsim.reports.rates import efficiency_of, moved_words
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    u = first["need_utilisation"]
    notes, reasons = footnoted(frame.to_dict("records"))
    footnotes = "".join(escape(f" [{number}] {reason[0].upper()}{reason[1:].removesuffix('.')}.")
                        for number, reason in enumerate(reasons, 1))
    efficiency = efficiency_of(frame)
    moved = moved_words(first["network"], efficiency, "needed", "link")
    table = Table(title=f"inter-node bandwidth for compute at {target_text(u)} of the step", caption=(
        f"{moved}; solved to {REL_TOL:.0e} relative; "
        "compute: the worker's own work (forward, backward, codec, optimizer), the rest of the step waiting for "
        "the network; now: its share on the network as given. Unreachable: per-call latencies, intra-node "
        f"exchanges or the fabric's cap keep the wait above 1 - U at any bandwidth.{footnotes}"),
        caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    link = efficiency < 1.0  # the link's own rate beside what it moves (lionsim.reports.rates)
    # "link Gbit/s" on one line: folded, its second line read as a second bare "Gbit/s" beside the needed one
    for name in ("GB/s", "Gbit/s", *(["link Gbit/s"] if link else []), "now"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", max_width=80 - width - 29 - 13 * link)  # the table fits 80 columns
    for row, note in zip(frame.itertuples(index=False), notes):
        needed = row.bandwidth_needed_GBps
        shown = [f"{x:.4g}" if x == x else "-" for x in (needed, needed * 8, *([needed * 8 / efficiency] if link else []))]
        table.add_row(run_label(row), *shown, percent(busy_share(row._asdict()), u), note)
    return fit(table)


NO_CROSSING_WORDS = {"level": "ties everywhere", "no figure": "no time to target"}
"""The wins column of a run that never crosses 1 (lionsim.estimate.sweep.crossovers decides which,
a tie being a tie at every point); "everywhere" and "nowhere" read as they are, "partly" as its
wins_where says (the ranges where it wins)."""


def extreme_text(speedup: float, at: float, names: dict) -> str:
    """A crossover table's lowest or highest cell: the speedup, then the swept point it is at
    ("4.00x" / "at 32"); "-" where no point has a figure."""
    if not speedup == speedup:
        return "-"
    return f"{speedup_text(speedup)}\nat {names.get(at, f'{at:g}')}"


def crossover_table(crossings: pd.DataFrame, sweep: Sweep, frame: pd.DataFrame, what: str = "",
                    workers: int | None = None) -> Table | Text:
    """Where each strategy starts (or stops) beating the baseline over the sweep: per step, or in
    `what` ("time to target": --from-run's crossovers); one line where only the baseline was priced.
    `workers`: --workers, which priced the table above; a sweep over workers that leaves it out says
    its counts stand in for it there (the table above is the one --workers names: not refused, as a
    --sweep workers= beside a --workers table is how one sees both)."""
    import pandas as pd
    from lionsim.reports.capped import capped_note
    from lionsim.reports.points import labels as point_labels
    from lionsim.reports.rates import efficiency_of, moved_words
    from lionsim.reports.tables import crossing_words, fill, fit, speedup_text, winning_count

    baseline = frame["baseline"].iloc[0]
    if crossings.empty:  # no run but the baseline: a header with no rows said nothing
        return Text(f"nothing to cross{' in ' + what if what else ''}: only the baseline, {baseline}, was priced")
    lo, hi = sweep.values[0], sweep.values[-1]
    of = f"of {what} " if what else ""
    span = (f"{lo:g} to {hi:g} workers" if sweep.variable == "workers"  # not "workers 16 to 1024 workers"
            else f"{sweep.variable} {lo:g} to {hi:g} {sweep.unit}")
    if lo == hi:  # one value priced (--sweep bandwidth=0.125): no span to cross over
        span = f"{lo:g} workers" if sweep.variable == "workers" else f"{sweep.variable} {lo:g} {sweep.unit}"
    points = f"{len(sweep.values)} points"
    if sweep.variable == "workers" and workers is not None and workers not in sweep.values:
        points += f", the sweep's counts in place of --workers {workers:,}, which priced the table above"
    title = (f"crossovers {of}against {baseline} over {span} ({points})" if lo != hi else
             f"{what or 'speedup'} against {baseline} at {span} (one point: nothing to cross)")
    table = Table(title=title, caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    crossing = "crossover\n(workers)" if sweep.variable == "workers" else "crossover"
    rounds = rounds_of(frame)  # crossover.csv has no H: the priced rows' (run_label names each with its own)
    names = dict(zip(sweep.values, point_labels(sweep.values, sweep.variable)))  # each point as the notes say it
    named = crossings.assign(**{ROUND_STEPS: [rounds.get(f"{s}@{t}", 1) for s, t in
                                              zip(crossings["strategy"], crossings["transport"])]})
    width = _width(named)
    # the speedup's range and where it is, not its ends: a peak between them (4.00x at 32 where the ends
    # are 1.08x and 1.11x) is the figure a reader needs; one point: its speedup
    speedups = ["lowest\nspeedup", "highest\nspeedup"] if lo != hi else [f"speedup\nat {lo:g}"]
    for name in ("run", crossing, "wins", *speedups):
        # wins is words ("wins above 9.749 GB/s, ties below"): where the table is over 80 it breaks
        # between them first (fit's column), before a run name breaks after its '-'
        table.add_column(name, justify="left" if name in ("run", "wins") else "right", no_wrap=name != "wins",
                         min_width=width if name == "run" else None, max_width=width if name == "run" else None)
    for row in named.itertuples(index=False):
        if pd.isna(row.crossover):
            where, wins = "-", row.wins_where or NO_CROSSING_WORDS.get(row.wins, row.wins)
        elif row.wins == "partly":  # an edge of the ties: where it starts (or stops) winning, the spans in words
            where = f"{row.crossover:,.0f}" if sweep.variable == "workers" else f"{row.crossover:.4g} {sweep.unit}"
            wins = row.wins_where
        elif sweep.variable == "workers":  # a whole count on the winning side (estimate.sweep), its losing neighbour
            where = crossing_words(row, unit=False)
            wins = winning_count(row)
        else:
            where, wins = f"{row.crossover:.4g} {sweep.unit}", f"{row.wins} {row.crossover:.4g} {sweep.unit}"
        table.add_row(run_label(row), where, wins,
                      *([extreme_text(row.speedup_worst, row.worst_at, names),
                         extreme_text(row.speedup_best, row.best_at, names)] if lo != hi
                        else [speedup_text(row.speedup_first)]))
    captions = []
    if sweep.variable == "workers" and crossings["crossover"].notna().any():
        captions.append("crossover: the worker counts either side of where the speedup crosses 1.00x (every count "
                        "between the swept ones priced; whole nodes beyond one node); wins: from the first count "
                        "that wins, or up to the last.")
    if sweep.variable == "bandwidth":  # which rate the swept one is (lionsim.reports.rates)
        network = str(frame["network"].iloc[0]) if "network" in frame.columns else ""
        captions.append(moved_words(network, efficiency_of(frame), "bandwidth") + ".")
    if lo != hi:
        captions.append(f"lowest, highest: the {what + ' speedup' if what else 'speedup'}'s range over the swept "
                        f"points, each with the point it is at (the first of equals; sweep.csv: every point).")
    table.caption = " ".join(captions) or None
    if capped := capped_note(crossings, sweep.values):  # points past the library's cap repeat its figures
        table.caption = f"{table.caption}\n{capped}" if table.caption else capped
        table.caption_justify = "left"
    return fill(fit(fit(table, column="wins")))


EstimateStrategy = Annotated[Optional[list[str]], typer.Option(
    "--strategy", "-s",
    help="NAME or NAME@TRANSPORT; repeatable, or comma-separated (see `lionsim strategies`). Default: "
         + ", ".join(DEFAULT_STRATEGIES) + " (adamw and lion both over bf16 all-reduce: like with like); "
         "with --from-run DIR: the runs DIR trained, its baseline first.")]


@app.command("estimate")
@strategy_options(hide=hidden_in_help)
def estimate_cmd(
    strategy: EstimateStrategy = None,
    transport: o.Transport = None,
    model: Model = None,
    params: Params = None,
    tensors: Tensors = None,
    tokens_per_worker: TokensPerWorker = None,
    workers: o.Workers = 8,
    gpus_per_node: GpusPerNode = None,
    replica_gpus: ReplicaGpus = 1,
    network: o.Network = "10gbe",
    traits: o.Traits = None,
    device: Device = None,
    mfu: Mfu = None,
    bucket_mb: BucketMb = None,
    overlap: Overlap = "auto",
    algorithm: Algorithm = AUTO,
    tie: o.EstimateTie = "zero",
    momentum_sync: MomentumSync = None,
    steps: RunSteps = None,
    tokens: RunTokens = None,
    baseline: o.Baseline = None,
    compute_spread: o.ComputeSpread = None,
    seed: Annotated[Optional[int], typer.Option("--seed", parser=o.whole_number, help=(
        "Seed of the Monte Carlo of two or more --compute-spread specs (default 0; one spec's distribution is "
        "exact)."))] = None,
    kernels: KernelsOpt = "table",
    optimizer: OptimizerOpt = "fused",
    sweep: SweepOpt = None,
    need: NeedOpt = None,
    from_run: FromRun = None,
    target_loss: Annotated[Optional[float], typer.Option(
        "--target-loss", help="With --from-run: the loss (> 0) its runs' steps to target are measured to again, "
        "from the loss curves DIR holds (no training); default: the target DIR was summarised with.")] = None,
    out: EstimateOut = None,
    trace: Annotated[bool, typer.Option("--trace", help="With --out: write DIR/trace.json, each strategy's modelled "
                                        "step in the Chrome trace-event format (open it in Perfetto).")] = False,
    overwrite: o.Overwrite = False,
    overwrite_sweep: o.OverwriteSweep = False,
    format: Format = "table",
    config: o.Config = None,
    strategy_options: dict | None = None,
    plugins: list[str] | None = None,
) -> None:
    """No training: per-step time breakdown (compute, encode, comm, exposed comm, decode, update) per strategy.

    Strategy options that change only training (learning rates, momenta: `lionsim bench --help`) are not
    listed here, and refused: estimate prices a step's time and bytes."""
    from types import SimpleNamespace

    from lionsim.cli.interruption import watch
    from lionsim.estimate.plain import check_from_run, check_one_model, check_plain, load_plain_network, parse_need

    fields = dict(
        model=model, params=params, tensors=tensors, tokens_per_worker=tokens_per_worker, workers=workers,
        gpus_per_node=gpus_per_node, replica_gpus=replica_gpus, network=network, traits=traits, device=device, mfu=mfu, overlap=overlap,
        bucket_mb=bucket_mb, algorithm=algorithm, baseline=baseline, tie=tie,
        compute_spread=list(compute_spread or []), seed=seed, options=dict(strategy_options or {}),
        momentum_sync=momentum_sync, steps=steps, tokens=tokens, kernels=kernels, optimizer=optimizer,
        from_run=None if from_run is None else str(from_run),
        target_loss=target_loss,
        **({"strategies": list(strategy)} if strategy else {}), transport=transport,
    )
    plain = SimpleNamespace(**fields)
    check_plain(plain, sweep)  # a bad number, form, network or --need is refused before torch loads
    network_given = load_plain_network(plain)  # (resolve loads it again, to price on)
    check_one_model(plain)  # then --from-run's folder: both as resolve refuses them, before torch loads
    if from_run is not None:
        check_from_run(from_run)
    wanted = parse_need(need) if need is not None else None
    if trace and out is None:
        raise LionsimError("--trace writes DIR/trace.json: give --out DIR with it")
    for given, flag in ((overwrite, "--overwrite"), (overwrite_sweep, "--overwrite-sweep")):
        if given and out is None:
            raise LionsimError(f"{flag} lets --out DIR replace another run's files: give --out DIR with it")
    watch(out)  # an interruption before the files are published says what --out holds
    if wanted is not None and sweep is not None:
        raise LionsimError("--need solves for the inter-node bandwidth itself: give --need or --sweep, not both")
    # a bad strategy or transport name (lionsim.name_table), told before resolve's checks of the model and
    # its token count, which need torch; DIR's runs (--from-run) name their own
    if from_run is None:
        from lionsim.estimate.defaults import DEFAULT_STRATEGIES
        from lionsim.name_table import check_runs

        source = None if strategy else "estimate's default strategies"
        check_runs(list(strategy or DEFAULT_STRATEGIES), transport, source)

    from lionsim.estimate import EstimateConfig, estimate, resolve
    from lionsim.estimate.need import with_need
    from lionsim.estimate.sweep import run_sweep
    from lionsim.cli.to_target_view import to_target_table

    cfg = EstimateConfig(**fields)
    frame = estimate(cfg)
    if wanted is not None:
        frame = with_need(frame, resolve(cfg), wanted)
    swept = run_sweep(cfg, sweep) if sweep is not None else None  # every input checked before anything is written
    if swept is not None and swept.sweep.note:
        err_console.print(swept.sweep.note, markup=False, highlight=False)
    traced = None
    if trace:
        from lionsim.estimate.trace import estimate_trace

        traced = estimate_trace(cfg)
    taken = {**fields, "device": frame["device"].iloc[0]}  # --device, else the network's, else h100
    swept_notes = [*swept.algorithm_notes, *point_lines(frame, swept)] if swept is not None else []
    record = _record(taken, sweep, need, trace, footnotes(frame, swept_notes), frame.attrs.get("baseline_line", ""),
                     network_given.to_dict())
    written = _write(out, frame, swept, overwrite, overwrite_sweep, traced, record) if out is not None else []
    # the files exist before anything is printed: a reader that stops early (| head) loses no file
    if from_run is not None and cfg.strategies is None:
        from lionsim.estimate.config import from_run_line
        from lionsim.estimate.from_run import load as load_measured

        err_console.print(from_run_line(load_measured(cfg.from_run, cfg.target_loss)), markup=False,
                          highlight=False)
    tables = [breakdown_table(frame), *([spread_table(frame)] if cfg.compute_spread else []),
              *([run_table(frame)] if cfg.steps is not None or cfg.tokens is not None else []),
              *([need_table(frame)] if wanted is not None else []),
              *([to_target_table(frame)] if from_run is not None else []),
              *([crossover_table(swept.crossings, swept.sweep, swept.rows, workers=workers)] if swept is not None else []),
              *([crossover_table(swept.to_target, swept.sweep, swept.rows, "time to target", workers)]
                if swept is not None and swept.to_target is not None else [])]
    if format != "table":  # csv/json: the sweep's rows with --sweep, else the breakdown, alone on stdout
        emit(swept.rows if swept is not None else frame, format)
        # a script reading the CSV is told what the caption says of how rows were priced (its local_steps
        # and library columns hold the values; these say what they imply)
        for note in (short_bench_note(frame), *frame.attrs.get("built_notes", ()), library_hint(frame),
                     memory_note(frame), unmeasured_note(frame)):
            if note:
                err_console.print(f"note: {note}", markup=False, highlight=False)
    else:
        for table in tables:  # 80 columns off a terminal (wider only where the numbers alone are)
            out_console(natural_width(table)).print(table)
    for line in swept_notes:  # where the priced algorithm changed; what an estimate at a swept point notes
        to = console if format == "table" else err_console
        text = ("" if format == "table" else "note: ") + line
        indent = " " * (len(text) - len(text.lstrip()) + 2)  # a run's line: its wrapped part under its text
        to.print(textwrap.fill(text, max(to.width, 40), subsequent_indent=indent, break_long_words=False,
                               break_on_hyphens=False), markup=False, highlight=False, soft_wrap=True)
    if written:
        (console if format == "table" else err_console).print(
            f"wrote {', '.join(p.name for p in written)} to {out}/", markup=False, highlight=False)
    if from_run is not None and _baseline_clamped(swept.rows if swept is not None else frame):
        from lionsim.estimate.to_target import CLAMP_HINT

        err_console.print(CLAMP_HINT, markup=False, highlight=False)
    if from_run is not None:
        from lionsim.estimate.to_target import unreached_hint

        if hint := unreached_hint(swept.rows if swept is not None else frame):
            err_console.print(hint, markup=False, highlight=False)


def _baseline_clamped(frame) -> bool:
    """Whether a row's baseline steps at scale came from its run's fit held at the nearest measured N
    (lionsim.estimate.to_target: --steps / --tokens would set them)."""
    from lionsim.estimate.to_target import CLAMPED

    if "to_target_note" not in frame.columns:
        return False
    return any(isinstance(n, str) and f"{CLAMPED} (the baseline's steps" in n for n in frame["to_target_note"])


RECORD_FILE = "estimate.json"
"""What made an estimate's --out: the command line (`lionsim report` prints it to reproduce the
files), the options it resolved to, lionsim's version."""


def _record(fields: dict, sweep: str | None, need: str | None, trace: bool, notes: list[str] = (),
            baseline_note: str = "", network: dict | None = None) -> dict:
    """estimate.json's content: the command as typed and the folder it ran in, every option as the
    estimate took it (each path absolute, as run.json records them: lionsim.option_paths), the
    network in its profile form (`network`: what a profile file held, for the report), the notes
    its table's caption printed (footnotes), and which of them says whose the baseline is
    (`baseline_note`, where --from-run took DIR's: the report puts it beside the speedups)."""
    import lionsim
    from lionsim.cli.app import invoked
    from lionsim.option_paths import absolute, placed

    options = placed({**fields, "sweep": sweep, "need": need, "trace": trace}, absolute, "estimate")[0]
    return {"command": "estimate", "argv": invoked(), "cwd": os.getcwd(), "options": options, "notes": list(notes),
            **({"baseline_note": baseline_note} if baseline_note else {}),
            **({"network": network} if network else {}),
            "versions": {"lionsim": lionsim.__version__, "python": sys.version.split()[0]}}


def _write(out: Path, frame, swept, overwrite: bool, overwrite_sweep: bool, trace: str | None = None,
           record: dict | None = None) -> list[Path]:
    """estimate.csv, estimate.json (the command: `record`), trace.json and the sweep's files, staged beside
    --out and published together (an --out holding another run is refused unless --overwrite:
    lionsim.reports.outdir)."""
    from lionsim.cli.output import put_back_said
    from lionsim.reports.files import check_out_dir
    from lionsim.reports.out_lock import holding
    from lionsim.reports.outdir import claim_out
    from lionsim.reports.publish import RunDir

    check_out_dir(out)
    with holding(out):  # one writer per --out: a bench's or another estimate's staging is not cleared under it
        put_back_said(out)  # what a stopped publish set aside
        claim_out(out, overwrite=overwrite, overwrite_sweep=overwrite_sweep)
        return _publish(RunDir(out), out, frame, swept, trace, record)


def _publish(target, out: Path, frame, swept, trace: str | None, record: dict | None) -> list[Path]:
    """_write's files staged in `target` (a RunDir of --out) and published together."""
    import json

    from lionsim.reports.files import write_atomic
    from lionsim.reports.formats import write_csv
    from lionsim.reports.to_target import has_to_target

    target.prepare()

    def write(stage: Path) -> list[Path]:
        paths = [write_atomic(stage / "estimate.csv", lambda f: write_csv(f, frame))]
        if record is not None:
            paths.append(write_atomic(stage / RECORD_FILE,
                                      lambda f: f.write(json.dumps(record, indent=2, default=str) + "\n")))
        if trace is not None:
            paths.append(write_atomic(stage / "trace.json", lambda f: f.write(trace)))
        if swept is None and has_to_target(frame):  # --from-run: the plot `lionsim plot DIR` draws of it
            from lionsim.reports.plots.to_target import plot_to_target

            paths += plot_to_target(frame, stage / "to_target.png")
        if swept is not None:
            spec, rows, crossings = swept
            # matplotlib: only when plots are asked for
            from lionsim.reports.plots.estimate import hierarchical, plot_estimate_sweep, plot_hierarchy

            paths.append(write_atomic(stage / "sweep.csv", lambda f: write_csv(f, rows)))
            paths.append(write_atomic(stage / "crossover.csv", lambda f: write_csv(f, crossings)))
            given = (record or {}).get("options", {}).get("workers")  # --workers: said where the sweep replaced it
            paths += plot_estimate_sweep(rows, crossings, spec.variable, stage / "sweep.png", given)
            if spec.variable == "workers" and hierarchical(rows):
                paths += plot_hierarchy(rows, stage / "hierarchy.png", given)
            if swept.to_target is not None:  # --from-run: the time to target against the swept variable
                from lionsim.reports.plots.to_target import TO_TARGET_CROSSOVER, plot_to_target_sweep

                paths.append(write_atomic(stage / TO_TARGET_CROSSOVER,
                                          lambda f: write_csv(f, swept.to_target)))
                paths += plot_to_target_sweep(rows, swept.to_target, spec.variable, stage / "to_target.png", given)
        return paths

    try:
        staged = target.write(write)
        target.publish()
        return [out / p.name for p in staged]  # in the order written: estimate.csv first
    except KeyboardInterrupt:
        target.abandon()
        raise
