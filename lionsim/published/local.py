"""Published bandwidth needs of local-step methods, side by side with `lionsim estimate --need`.

The same case form as lionsim.published (the source, the configuration as published, the figure,
the lionsim command that models it, how its figure is read), for the figures in which the
local-step papers state their results: the inter-datacenter bandwidth at which compute is a given
share of the time, for data-parallel training, DiLoCo and Streaming DiLoCo.

- LOCAL_STEP_CASES (the docs table, docs/clusters.md): the Streaming DiLoCo paper's simulation
  (Douillard et al. 2025, arXiv 2501.18512), its Table 4 (1B, 10B and 100B models; data-parallel,
  DiLoCo, Streaming DiLoCo without and with overlapped communication, in bf16 and in fp4; compute
  utilisation 50% to 99%) and its Table 1 (hours at 1 Gbit/s against hours at infinite bandwidth).
  The model changes of this branch were made while reading these cases.
- LOCAL_STEP_HOLDOUT: the DiLoCo scaling-laws paper's Table 6 (Charles et al. 2025, arXiv
  2503.09799: a 10B Chinchilla-style model, Llama 3 405B and DeepSeek-V3 671B; data-parallel and
  DiLoCo at H = 1 to 300), run by the same authors' simulator, kept out of the table and never
  tuned on: the check on cases the model has not seen.
- FINDINGS: published points lionsim cannot reproduce or express, and why.

Both simulations, as the papers state them, and how each case passes them to lionsim (inputs
read from the papers, nothing fitted per case):

- Compute: the step time "based on the required flops using Kaplan et al. (2020) rule and using a
  MFU of 60%" (6 N FLOPs a token), the same for every method. lionsim's worker is one replica (a
  datacenter): `--replica-gpus 52 --device h100 --mfu 0.6` and the replica's tokens a step from
  the published step time (T = step x 52 x 989 TFLOP/s x 0.6 / 6N). 52 H100s is the replica the
  Streaming paper's Table 1 implies (25B tokens in 0.67 hours on 2 replicas at 0.1 s a step:
  518K tokens a replica-step, 3.1e16 FLOP/s, 52 H100s at 60%); it only sets the share of the
  step the replica's optimizer and codec passes take (the papers' model has none), under 1% at
  52 devices, and the same replica is taken for every model.
- Network: two replicas (M = 2: both tables' methods are run between two datacenters) on one
  link with no latency, a transfer taking its bits over the link's rate (profile
  examples/clusters/dc-pair.toml): a ring all-reduce of 2 workers sends each byte once.
- Exchanges: "the reduction of gradients or outer gradients is overlapped over the backward pass
  computation", layer by layer (the papers' Figures 3 and 14): `--bucket-mb` one layer's fp32
  gradients (4 N / L MB), and for DiLoCo `--overlap buckets` (its inner step run in backward, each
  layer's outer gradient reduced as it is made). Streaming DiLoCo's fragments are exchanged after
  the step, over the next inner steps: its commands give no bucket, which would size nothing
  (estimate refuses it there). Gradients and outer gradients in bf16 (Table 1's
  1 Gbit/s row: 109 hours for 25B tokens is 16.2 Gbit a data-parallel step, 1e9 bf16 values), fp4
  where the method says so (fp4-allreduce: 4 bits and a float32 scale per 256 values).
- Streaming DiLoCo: fragments of 3 layers (`--tensors L` with one tensor a layer,
  `--streaming-fragments L / 3`), strided (`--streaming-pattern strided`, the paper's Figure 2 and
  its choice), H = 100, the overlapped variants with tau = 1 (`--streaming-delay 1`).
- Compute utilisation: compute time over total time, "80% of the time is spent in computation,
  and 20% in communication": `--need`'s share (lionsim.estimate.need).
- The figures' grid: every bandwidth both tables print is a point of 50 bandwidths spaced
  geometrically from 0.1 to 1,000 Gbit/s (numpy.logspace(-1, 3, 50), to the printed 0.1; Table 6
  prints "1000.0+" past its end), and each is the grid's last point below the utilisation's
  threshold: with Table 1's 16.2 Gbit a step, the 1B data-parallel step reaches 99% at 660 Gbit/s
  (its last layer's 0.67 Gbit within 1% of the step after backward ends), printed 569.0, the
  point before 686.6. So lionsim's solved bandwidth is read the same way (`grid_below`), and
  `solved` is given beside it: a published figure is 0 to 17% below the bandwidth it stands for.

Where the time goes: each case is one `estimate --need`, whose solve prices the step at about 166
bandwidths. The table (77 cases) and the hold-out (88) run apart, except for --markdown, whose docs
block holds both: there a command both hold (Table 6's Chinchilla 10B data-parallel and H = 100
rows are Table 4's 10B data-parallel and DiLoCo rows, 10 commands) runs once.

    python -m lionsim.published.local             # the table, lionsim's figures run now
    python -m lionsim.published.local --holdout   # the hold-out
    python -m lionsim.published.local --markdown  # (with either of the above) the docs' Markdown
    python -m lionsim.published.local --case KEY  # one case's full record: source, configuration, command
"""

from __future__ import annotations

import math
import statistics
import sys
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.published import terminal
from lionsim.published.cases import Case, Finding, _run, findings_markdown

GOAL_MEDIAN = 0.15
"""Median |error| the local-step cases are held to (as the compressed cases)."""
GOAL_WORST = 0.35
"""Worst |error| allowed without a stated reason."""

GRID_GBPS = tuple(float(x) for x in np.logspace(-1, 3, 50))
"""The bandwidths (Gbit/s) both simulations were run at (module doc)."""

NETWORK = "examples/clusters/dc-pair.toml"
REPLICA_GPUS = 52
"""H100s in a replica: the Streaming paper's Table 1 throughput at its 60% MFU (module doc)."""
H100_FLOPS = 989e12
MFU = 0.6

STREAMING = "Streaming DiLoCo (Douillard et al. 2025, arXiv 2501.18512)"
SCALING = "Scaling laws for DiLoCo (Charles et al. 2025, arXiv 2503.09799)"
UTILISATIONS = (0.5, 0.8, 0.9, 0.95, 0.99)


@dataclass(frozen=True, slots=True)
class Model:
    """A model of a simulation, as its table gives it."""

    name: str
    params: float
    layers: int
    step_s: float
    """Compute of one step, as the table prints it."""

    @property
    def tokens(self) -> int:
        """A replica's tokens a step that take step_s at 6 N FLOPs a token (module doc)."""
        return round(self.step_s * REPLICA_GPUS * H100_FLOPS * MFU / (6 * self.params))

    def args(self) -> tuple[str, ...]:
        return ("estimate", "--params", f"{self.params:g}", "--tensors", str(self.layers), "--tokens-per-worker",
                str(self.tokens), "--device", "h100", "--mfu", f"{MFU:g}", "--replica-gpus", str(REPLICA_GPUS),
                "--workers", "2", "--network", NETWORK)

    @property
    def bucket_mb(self) -> str:
        """One layer's fp32 gradients, MB: the bucket of a method exchanged per bucket (module doc)."""
        return f"{4 * self.params / self.layers / 1e6:.6g}"

    def describe(self) -> str:
        return (f"{self.name} ({self.params:,.0f} parameters, {self.layers} layers, {self.step_s:g} s of compute a "
                f"step; 2 replicas of {REPLICA_GPUS} H100 at MFU {MFU:g}, {self.tokens:,} tokens a replica-step)")


@dataclass(frozen=True, slots=True)
class Method:
    """A row of a table: a method and how lionsim runs it."""

    key: str
    label: str
    """As the table names it."""
    args: tuple[str, ...]
    """Its arguments: {P} stands for the model's fragment count, {B} for its bucket (Model.bucket_mb),
    given only to a method exchanged per bucket (estimate refuses --bucket-mb elsewhere)."""

    def for_model(self, model: Model) -> tuple[str, ...]:
        fragments = str(model.layers // 3)  # fragments of 3 layers
        given = {"{P}": fragments, "{B}": model.bucket_mb}
        return tuple(given.get(a, a) for a in self.args)


def _streaming(transport: str, delay: int) -> tuple[str, ...]:
    return ("-s", f"streaming-diloco@{transport}", "--local-steps", "100", "--streaming-fragments", "{P}",
            "--streaming-pattern", "strided", "--streaming-delay", str(delay))


def _diloco(h: int) -> tuple[str, ...]:
    return ("-s", "diloco@bf16-allreduce", "--local-steps", str(h), "--overlap", "buckets", "--bucket-mb", "{B}")


DATA_PARALLEL = Method("dp", "Data-Parallel", ("-s", "adamw@bf16-allreduce", "--bucket-mb", "{B}"))
STREAMING_METHODS = (
    DATA_PARALLEL,
    Method("diloco", "Vanilla DiLoCo (H = 100)", _diloco(100)),
    Method("streaming", "Streaming DiLoCo", _streaming("bf16-allreduce", 0)),
    Method("overlapped", "Streaming DiLoCo w/ overlapped com.", _streaming("bf16-allreduce", 1)),
    Method("overlapped-fp4", "Streaming DiLoCo w/ overlapped FP4 com.", _streaming("fp4-allreduce", 1)),
)
SCALING_METHODS = (DATA_PARALLEL, *(Method(f"diloco-h{h}", f"DiLoCo, H = {h}", _diloco(h)) for h in (1, 10, 50, 100, 300)))

STREAMING_MODELS = (Model("1B", 1e9, 24, 0.1), Model("10B", 1e10, 48, 0.8), Model("100B", 1e11, 108, 4.9))
SCALING_MODELS = (Model("Chinchilla 10B", 1e10, 48, 0.8), Model("Llama3 405B", 4.05e11, 126, 26.0),
                  Model("DeepSeek-V3 671B", 6.71e11, 61, 20.0))
"""Layers: the Streaming paper's 48 for its 10B at the same 0.8 s step; Llama 3 405B's 126 and
DeepSeek-V3's 61 as their reports give them (all 671B parameters exchanged, as the table's
data-parallel figures imply)."""

# Gbit/s to reach CU = 50%, 80%, 90%, 95%, 99%, as printed
STREAMING_TABLE_4 = {
    "1B": {"dp": (86.8, 152.6, 184.2, 222.3, 569.0), "diloco": (1.4, 6.2, 13.3, 23.3, 86.8),
           "streaming": (1.4, 5.2, 9.1, 16.0, 28.1), "overlapped": (1.4, 4.3, 6.2, 9.1, 11.0),
           "overlapped-fp4": (0.4, 0.9, 1.7, 2.0, 3.0)},
    "10B": {"dp": (104.8, 222.3, 222.3, 268.3, 471.5), "diloco": (1.7, 7.5, 16.0, 33.9, 104.8),
            "streaming": (1.7, 5.2, 9.1, 13.3, 19.3), "overlapped": (1.7, 3.6, 5.2, 6.2, 7.5),
            "overlapped-fp4": (0.4, 0.9, 1.4, 1.4, 1.7)},
    "100B": {"dp": (184.2, 323.8, 390.7, 390.7, 471.5), "diloco": (3.0, 11.0, 23.3, 49.4, 184.2),
             "streaming": (2.4, 6.2, 9.1, 11.0, 19.3), "overlapped": (1.7, 3.6, 4.3, 5.2, 5.2),
             "overlapped-fp4": (0.5, 0.9, 1.1, 1.1, 1.4)},
}
SCALING_TABLE_6 = {
    "Chinchilla 10B": {"dp": (104.8, 184.2, 222.3, 222.3, 390.7), "diloco-h1": (104.8, 184.2, 222.3, 222.3, 390.7),
                       "diloco-h10": (16.0, 49.4, 86.8, 152.6, 222.3), "diloco-h50": (3.0, 11.0, 23.3, 41.0, 126.5),
                       "diloco-h100": (1.4, 6.2, 13.3, 23.3, 86.8), "diloco-h300": (0.5, 2.0, 4.3, 9.1, 41.0)},
    "Llama3 405B": {"dp": (126.5, 222.3, 268.3, 323.8, 323.8), "diloco-h1": (126.5, 222.3, 268.3, 323.8, 323.8),
                    "diloco-h10": (19.3, 72.0, 126.5, 184.2, 268.3), "diloco-h50": (3.6, 13.3, 28.1, 59.6, 184.2),
                    "diloco-h100": (2.0, 7.5, 16.0, 33.9, 126.5), "diloco-h300": (0.7, 3.0, 6.2, 13.3, 59.6)},
    "DeepSeek-V3 671B": {"dp": (323.8, 569.0, 686.6, 686.6, None), "diloco-h1": (323.8, 569.0, 686.6, 686.6, None),
                         "diloco-h10": (49.4, 152.6, 268.3, 390.7, 686.6), "diloco-h50": (7.5, 33.9, 72.0, 126.5, 390.7),
                         "diloco-h100": (4.3, 16.0, 41.0, 72.0, 268.3), "diloco-h300": (1.7, 6.2, 13.3, 28.1, 126.5)},
}
"""None: printed "1000.0+", past the grid."""

READ_AS = {
    "gbit_needed_grid": "the first row's bandwidth_needed_GBps in Gbit/s, read as the last point below it of the "
                        "papers' grid of 50 bandwidths from 0.1 to 1,000 Gbit/s (solved: before the grid)",
    "utilisation": "the first row's compute share (lionsim.estimate.need.busy_share)",
}
"""How a case's figure is read from its command's CSV (`figure`; grid_below), as --case prints it."""
READS = tuple(READ_AS)


def grid_below(gbps: float) -> float:
    """The last grid point below `gbps` Gbit/s, as the tables print a threshold (module doc); NaN
    below the grid's first point (or for NaN), its last point past its end (printed "1000.0+")."""
    below = [g for g in GRID_GBPS if g < gbps]
    return below[-1] if below else math.nan


def _need_cases(source: str, table: str, models, methods, figures, prefix: str) -> list[Case]:
    cases = []
    for model in models:
        for method in methods:
            for u, published in zip(UTILISATIONS, figures[model.name][method.key]):
                if published is None:
                    continue
                cases.append(Case(
                    key=f"{prefix}-{model.name.split()[-1].lower()}-{method.key}-cu{round(u * 100)}",
                    source=f"{source}, {table}: {model.name}, {method.label}, CU = {u:.0%}",
                    config=model.describe(),
                    quantity=f"Gbit/s for compute at {u:.0%}", published=published,
                    command=(*model.args(), *method.for_model(model), "--need", f"utilisation={u:g}", "--format", "csv"),
                    read="gbit_needed_grid",
                ))
    return cases


def _hours_case(method: Method, hours_1gbit: float) -> Case:
    model = STREAMING_MODELS[0]
    return Case(
        key=f"sdiloco-1b-{method.key}-1gbits",
        source=f"{STREAMING}, Table 1: {method.label}, 25B tokens, 0.67 hours at infinite bandwidth, "
               f"{hours_1gbit:g} at 1 Gbit/s",
        config=model.describe(),
        quantity="compute share at 1 Gbit/s (hours at infinite bandwidth / at 1 Gbit/s)",
        published=0.67 / hours_1gbit,
        command=(*model.args(), *method.for_model(model), "--sweep", "bandwidth=0.125", "--format", "csv"),
        read="utilisation",
    )


LOCAL_STEP_CASES: tuple[Case, ...] = (
    *_need_cases(STREAMING, "Table 4", STREAMING_MODELS, STREAMING_METHODS, STREAMING_TABLE_4, "sdiloco"),
    _hours_case(DATA_PARALLEL, 109.0),
    _hours_case(STREAMING_METHODS[-1], 0.88),
)
"""The docs table's cases (docs/clusters.md)."""

LOCAL_STEP_HOLDOUT: tuple[Case, ...] = tuple(
    _need_cases(SCALING, "Table 6", SCALING_MODELS, SCALING_METHODS, SCALING_TABLE_6, "scaling"))
"""Another paper's table by the same simulator, never tuned on."""


FINDINGS: tuple[Finding, ...] = (
    Finding(
        key="eager-h30",
        source="Eager updates (Kale, Douillard, Donchev 2025, arXiv 2502.12996), Table 5",
        config="the Streaming paper's simulator and models; Streaming DiLoCo with 1-inner-step overlapped fp4 "
               "communication at H = 30 (its H = 100 rows are the Streaming paper's Table 4 rows, above); "
               "1-outer-step (eager) overlap at H = 30 and 100",
        published="1B at H = 30: 2.4, 3.6, 4.3, 4.3, 4.3 Gbit/s for 50% to 99%",
        why="lionsim needs 0.95 Gbit/s for 50% at H = 30 (1B: 8 fragments of 0.52 Gbit, one every 3.75 steps), "
            "where the table needs 2.4, and its 10B and 100B rows have more fragments than H = 30 steps: the "
            "simulation's fragment schedule at H = 30 is not described (lionsim syncs at most one fragment a "
            "step). The eager rows overlap a whole outer step, several fragments in flight at once: no lionsim "
            "schedule runs that",
    ),
    Finding(
        key="intellect-1-allreduce",
        source="INTELLECT-1 technical report (Jaghouar et al. 2024, arXiv 2412.01152), Table 2",
        config="10B model, DiLoCo with H = 100 and int8 pseudo-gradients over a ring of up to 14 nodes of 8 H100 "
               "(USA only, USA and Europe, three continents)",
        published="median all-reduce 103, 382 and 469 s; compute utilisation 96%, 85.6% and 83%",
        why="the links' rates are not given, and the all-reduce ran on CPUs over a VPN (gloo): with the rates, "
            "a comm-time case over a profile holding them would check it",
    ),
    Finding(
        key="sparseloco-deployment",
        source="Templar's SparseLoCo announcement (the SparseLoCo paper, Sarfi et al. 2025, arXiv 2508.15706, "
               "and its authors' post)",
        config="a 70B model, 20 participants in each gather, chunked top-k with 2-bit values through object "
               "storage; an 8B model, 20 participants",
        published="about 70 s of communication a round \"with <500Mbps bandwidth\" (70B); 12 s a round against "
                  "4.5 minutes of compute (8B)",
        why="the density, chunk and index width of the deployment are not given, the bandwidth is a bound, "
            "and the exchange is an upload and 20 downloads through a bucket store, not a collective",
    ),
)
"""Published points no lionsim case checks, with the reason."""


def figure(case: Case) -> tuple[float, float]:
    """(lionsim's figure read as the case says, the figure before the grid) from its command run now."""
    from lionsim.estimate.need import busy_share

    frame = _run(case.command)
    if case.read == "gbit_needed_grid":
        solved = float(frame["bandwidth_needed_GBps"].iloc[0]) * 8
        return grid_below(solved), solved
    if case.read == "utilisation":
        share = busy_share(frame.iloc[0])
        return share, share
    raise ValueError(f"unknown reading {case.read!r}; accepted: {', '.join(READS)}")


def results(cases: tuple[Case, ...] = LOCAL_STEP_CASES) -> pd.DataFrame:
    """One row per case: published, lionsim's figure (read as published), the solved figure, and
    the errors of both (lionsim / published - 1)."""
    rows, ran = [], {}
    for case in cases:
        if case.command not in ran:  # a command two tables share runs once (module doc)
            ran[case.command] = figure(case)
        ours, solved = ran[case.command]
        rows.append({"key": case.key, "published": case.published, "lionsim": ours, "solved": solved,
                     "error": ours / case.published - 1.0, "solved_error": solved / case.published - 1.0,
                     "miss": case.miss})
    return pd.DataFrame(rows)


def table_and_holdout() -> tuple[pd.DataFrame, pd.DataFrame]:
    """results() of the table's cases and of the hold-out's, from one run of both: the commands
    they share run once (module doc)."""
    both = results((*LOCAL_STEP_CASES, *LOCAL_STEP_HOLDOUT))
    return both[:len(LOCAL_STEP_CASES)], both[len(LOCAL_STEP_CASES):].reset_index(drop=True)


def summary(frame: pd.DataFrame, column: str = "error", worst: float = GOAL_WORST) -> dict:
    """Median and worst |error| of `column`, and the cases beyond `worst`."""
    errors = frame[column].abs()
    return {"median": statistics.median(errors), "worst": float(errors.max()),
            "beyond": [k for k, e in zip(frame["key"], errors) if e > worst]}


def _shown(value: float) -> str:
    return "-" if value != value else f"{value:.3g}" if abs(value) < 10 else f"{value:,.1f}"


def _method_args(case: Case, model: Model) -> str:
    """The case's command after its model's arguments, without its target and format."""
    rest = list(case.command[len(model.args()):])
    for flag in ("--need", "--sweep", "--format"):
        if flag in rest:
            del rest[rest.index(flag):rest.index(flag) + 2]
    return " ".join(rest)


def markdown(frame: pd.DataFrame, cases: tuple[Case, ...] = LOCAL_STEP_CASES) -> str:
    """The docs block: per source and model its configuration and command, a row per method and
    target (published, lionsim read as published, solved, error, the method's arguments), then
    the goal lines."""
    lines: list[str] = []
    by_case = dict(zip(frame["key"], frame.itertuples(index=False)))
    models = {m.describe(): m for m in (*STREAMING_MODELS, *SCALING_MODELS)}
    groups: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        groups.setdefault((case.source.split(":", 1)[0], case.config), []).append(case)
    for (head, config), members in groups.items():
        model = models[config]
        target = "--need utilisation=U" if "--need" in members[0].command else "--sweep bandwidth=0.125"
        lines += ["", *textwrap.wrap(f"**{head}**, {config}: `lionsim {' '.join(model.args())} METHOD {target} "
                                     "--format csv`", 100, break_on_hyphens=False, break_long_words=False), "",
                  "| case | row | quantity | published | lionsim | solved | error | METHOD |",
                  "|---|---|---|---|---|---|---|---|"]
        for case in members:
            row = by_case[case.key]
            label = case.source.split(": ", 1)[1]
            lines.append(f"| {case.key} | {label} | {case.quantity} | {_shown(case.published)} | {_shown(row.lionsim)} | "
                         f"{_shown(row.solved)} | {row.error:+.1%} | `{_method_args(case, model)}` |")
    lines += ["", *textwrap.wrap(_goal_line(frame), 100)]
    return "\n".join(lines).lstrip("\n")


def _goal_line(frame: pd.DataFrame) -> str:
    s, raw = summary(frame), summary(frame, "solved_error")
    return (f"Median |error| {s['median']:.1%} (goal {GOAL_MEDIAN:.0%}); worst {s['worst']:.1%} (goal {GOAL_WORST:.0%}); "
            f"beyond {GOAL_WORST:.0%}: {', '.join(s['beyond']) or 'none'}. The solved bandwidths against the printed "
            f"figures (which stand 0 to 17% below theirs): median {raw['median']:.1%}, worst {raw['worst']:.1%}.")


def compact(frame: pd.DataFrame, cases: tuple[Case, ...] = LOCAL_STEP_CASES, columns: int = 100) -> str:
    """The terminal's table (`frame` = results(cases)): case, quantity, published, lionsim (read as
    published), solved, error; then the goal line, within `columns` (lionsim.published.terminal)."""
    by_case = dict(zip(frame["key"], frame.itertuples(index=False)))
    rows = [(case.key, case.quantity, _shown(case.published), _shown(by_case[case.key].lionsim),
             _shown(by_case[case.key].solved), f"{by_case[case.key].error:+.1%}") for case in cases]
    lines = terminal.table(("case", "quantity", "published", "lionsim", "solved", "error"), rows, columns,
                           right=(False, False, True, True, True, True))
    return "\n".join([*lines, "", *terminal.prose(_goal_line(frame), columns)])


def record(case: Case, frame: pd.DataFrame, columns: int = 100) -> str:
    """One case's full record (`frame` = results((case,))): every field, wrapped to `columns` (the
    command on one line: terminal.field)."""
    row = next(frame.itertuples(index=False))
    fields = [("case", case.key), ("source", case.source), ("configuration", case.config),
              ("quantity", case.quantity), ("published", _shown(case.published)),
              ("lionsim (read as published)", _shown(row.lionsim)), ("solved", _shown(row.solved)),
              ("error", f"{row.error:+.1%} (solved: {row.solved_error:+.1%})"), ("command", case.shell),
              ("read", READ_AS[case.read]), ("why it may miss", case.miss)]
    return "\n".join(line for name, value in fields if value for line in terminal.field(name, value, columns))


def docs_block(table: pd.DataFrame, holdout: pd.DataFrame) -> str:
    """docs/clusters.md's generated block: the table (`table` = results(LOCAL_STEP_CASES)), the
    hold-out's goal line (`holdout` = results(LOCAL_STEP_HOLDOUT)) and the findings."""
    s, raw = summary(holdout), summary(holdout, "solved_error")
    line = (f"The hold-out ({len(holdout)} points of {SCALING}, Table 6, never tuned on; `python -m "
            f"lionsim.published.local --holdout` prints it): median |error| {s['median']:.1%}, worst "
            f"{s['worst']:.1%}; beyond {GOAL_WORST:.0%}: {', '.join(s['beyond']) or 'none'}. Solved against printed: "
            f"median {raw['median']:.1%}, worst {raw['worst']:.1%}.")
    return "\n".join([markdown(table), "", *textwrap.wrap(line, 100, break_on_hyphens=False), "",
                      "Published points no case checks, and why:", "",
                      findings_markdown(FINDINGS, "Why not checked")])


@terminal.entry
def main(argv: list[str]) -> int:
    given = terminal.parse(argv, __doc__, ("--holdout", "--markdown"), ("--case KEY",),
                           exclusive=[("--holdout", "--case"), ("--markdown", "--case")])
    columns = terminal.width()
    if "case" in given:
        case = terminal.find(str(given["case"]), (*LOCAL_STEP_CASES, *LOCAL_STEP_HOLDOUT))
        print(record(case, results((case,)), columns))
    elif given.get("holdout") and given.get("markdown"):
        print(markdown(results(LOCAL_STEP_HOLDOUT), LOCAL_STEP_HOLDOUT))
    elif given.get("holdout"):
        print(compact(results(LOCAL_STEP_HOLDOUT), LOCAL_STEP_HOLDOUT, columns))
    elif given.get("markdown"):
        print(docs_block(*table_and_holdout()))
    else:
        print(compact(results(), columns=columns))
        print("\n" + "\n".join(terminal.prose(
            f"The hold-out ({len(LOCAL_STEP_HOLDOUT)} points of another paper's table, never tuned on): --holdout. "
            f"Published points no case checks: {len(FINDINGS)} (--markdown lists them, with the docs' block). Each "
            "case's source, configuration and command: --case KEY.", columns)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
