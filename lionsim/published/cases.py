"""Published measurements of data-parallel communication, side by side with lionsim's figure.

Each case is data: where the number was published (the thread or paper, and the table or
comment), the configuration as published, the figure, the lionsim command that models it, and
how to read lionsim's figure from that command's CSV. Nothing is fitted per case: each case
runs on its published link and device, as a network preset or a profile under
examples/clusters/ holding the published line rates. The docs table (docs/clusters.md) is
`markdown_table()` of these cases, checked by a test so it cannot go stale.

A case's command is printed as it is typed from the repository's root (`examples/...` paths
relative); when a module runs it, `in_checkout` resolves those paths against the checkout the
package was loaded from, so every `python -m lionsim.published...` runs from any directory.

    python -m lionsim.published                 # the table with lionsim's figures, run now
    python -m lionsim.published --markdown      # the docs' Markdown table (source, configuration, command)
    python -m lionsim.published --case KEY      # one case's full record
"""

from __future__ import annotations

import io
import statistics
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.published import terminal

GOAL_MEDIAN = 0.10
"""Median |error| over all cases the model is held to."""
GOAL_WORST = 0.25
"""Worst |error| allowed for a case without a stated reason."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The repository the package was loaded from (lionsim's parent directory): the root the cases'
`examples/...` paths are relative to."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Case:
    """One published measurement and the lionsim command that models it."""

    key: str
    """Short stable name."""
    source: str
    """Who published it, where (a thread's address, a paper), and the table / comment quoted."""
    config: str
    """The configuration as published: GPUs per node and nodes, the link, the message or model and batch."""
    quantity: str
    """What the figure is, with its unit."""
    published: float
    """The published figure, in `quantity`'s unit."""
    command: tuple[str, ...]
    """lionsim's arguments (after `lionsim`), CSV on stdout."""
    read: str
    """How lionsim's figure is read from the CSV: "time_us" (comm: the row's time_s in us),
    "busbw" (comm: busbw_GBps), "comm_ratio" (estimate: the second row's comm_s / the first's),
    "step_ratio" (estimate: the second row's step_s / the first's, or `versus`'s first row's over
    `command`'s), "step_s" (estimate: the first row's step_s), "bandwidth_needed" (estimate
    --need: the first row's bandwidth_needed_GBps)."""
    miss: str = ""
    """Why the error may exceed its table's threshold for explanations ("" for none): a known gap
    between the model and this measurement, stated, not fitted away."""
    figures: Callable[[pd.DataFrame], dict[str, str]] | None = None
    """lionsim's figures in `miss`, from the case's frame (`frame`: its command's CSV, then
    `versus`'s first row): `miss` is a str.format template of them (None: `miss` is the text as
    is), so no figure of lionsim's is typed into it."""
    versus: tuple[str, ...] = ()
    """A second command (estimate) whose first row is compared with `command`'s first: where the
    source ran its two steps on different libraries (DeepSpeed's dense all-reduce on NCCL, its
    first 1-bit Adam on MPI), which one estimate cannot price; read "step_ratio" then is this
    command's step_s / `command`'s."""

    @property
    def shell(self) -> str:
        first = "lionsim " + " ".join(self.command)
        return first + (" ; lionsim " + " ".join(self.versus) if self.versus else "")


CASES: tuple[Case, ...] = (
    Case(
        key="p4dn-1node",
        source="NVIDIA/nccl issue 527, nccl-tests table for 1 to 4 p4dn.24xlarge (2022-07-25), row 1",
        config="1 node x 8 A100 40GB (NVSwitch, NVLink3); all_reduce_perf, 1 GiB float sum",
        quantity="all-reduce time, us", published=8142.6,
        command=("comm", "--network", "dgx-a100", "--workers", "8", "--collective", "all_reduce",
                 "--sizes", "1073741824", "--format", "csv"),
        read="time_us",
    ),
    Case(
        key="a100-1node-busbw",
        source="NVIDIA/nccl-tests issue 175 (2023-10-29), scenario 2 of the description",
        config="1 node x 8 A100 (NVLink3); all_reduce_perf -b 8 -e 4G -g 8, the busbw reported",
        quantity="all-reduce busbw, GB/s", published=232.54,
        command=("comm", "--network", "dgx-a100", "--workers", "8", "--collective", "all_reduce",
                 "--sizes", "4294967296", "--format", "csv"),
        read="busbw",
    ),
    Case(
        key="dgx-a100-multinode-busbw",
        source="NVIDIA/nccl issue 812, comment by an NVIDIA engineer (2023-03-31): \"8x200Gbit/s IB cards and "
               "we measure 192GB/s AllReduce BusBW\"",
        config="DGX A100 nodes (8 A100, NVLink3, 8 HDR 200 Gb/s NICs each), scale-out ring; node count not "
               "stated, modelled at 4 nodes (any count beyond 2 runs NCCL's ring), 8 GiB",
        quantity="all-reduce busbw, GB/s", published=192.0,
        command=("comm", "--network", "dgx-a100", "--workers", "32", "--collective", "all_reduce",
                 "--sizes", "8589934592", "--format", "csv"),
        read="busbw",
    ),
    Case(
        key="dgx1-multinode-busbw",
        source="NVIDIA/nccl-tests issue 29, comment by an NVIDIA engineer (2019-12-06): \"DGX-1 can get 48 GB/s "
               "because we have 4 IB adapters\"",
        config="DGX-1 nodes (8 V100, NVLink2, 4 EDR 100 Gb/s adapters each), across nodes; node count not "
               "stated, modelled at 4 nodes, 1 GiB; profile examples/clusters/dgx1.toml",
        quantity="all-reduce busbw, GB/s", published=48.0,
        command=("comm", "--network", "examples/clusters/dgx1.toml", "--workers", "32", "--collective",
                 "all_reduce", "--sizes", "1073741824", "--format", "csv"),
        read="busbw",
    ),
    Case(
        key="ndr-per-nic-busbw",
        source="NVIDIA/nccl-tests issue 290, comment by an NVIDIA engineer (2025-03-03): \"For NDR @ 400Gbps "
               "you should see 46-48GB/s per NIC\" (the midpoint, 47, is the figure)",
        config="one NDR 400 Gb/s NIC per GPU, ring across nodes: modelled as 4 nodes of 1 GPU on ib-ndr, 8 GiB",
        quantity="all-reduce busbw per NIC, GB/s", published=47.0,
        command=("comm", "--network", "ib-ndr", "--traits", "nccl", "--workers", "4", "--collective", "all_reduce",
                 "--sizes", "8589934592", "--format", "csv"),
        read="busbw",
    ),
    Case(
        key="spark-pair-allgather-busbw",
        source="NVIDIA/dgx-spark-playbooks pull request 103 (2026-08-17), \"Root causes\" item 3: 23.74 GB/s "
               "with NCCL v2.28.9-1",
        config="2 DGX Spark (one GB10 GPU each) joined by one 200 Gb/s QSFP cable (RoCE, both halves of the "
               "port), all_gather_perf busbw; size not stated, modelled at 1 GiB on a 200 Gb/s link (ib-hdr's "
               "24 GB/s)",
        quantity="all-gather busbw, GB/s", published=23.74,
        command=("comm", "--network", "ib-hdr", "--traits", "nccl", "--workers", "2", "--collective", "all_gather",
                 "--sizes", "1073741824", "--format", "csv"),
        read="busbw",
    ),
    Case(
        key="dlion-3b-64xa100",
        source="Distributed Lion (Liu et al., NeurIPS 2024), the authors' timing table in their OpenReview "
               "response: comm 132 ms (AdamW) vs 61 ms (D-Lion MaVo, int8 all-reduce)",
        config="3B transformer, 64 A100 40GB, batch 1 x 1K tokens per GPU; the cluster's links are not "
               "stated: 8 nodes of 8 A100 on NVLink3 with 4 HDR-200 NICs a node assumed (a100x8-4hdr, as "
               "docs/time-model.md's worked example: its AdamW all-reduce takes 125 ms against the paper's 132; "
               "both rows alike, so the ratio barely depends on it)",
        quantity="comm ratio, D-Lion / AdamW", published=61.0 / 132.0,
        command=("estimate", "--params", "3e9", "--tokens-per-worker", "1024", "--workers", "64", "--network",
                 "a100x8-4hdr", "--device", "a100", "--overlap", "none", "-s", "adamw@bf16-allreduce", "-s",
                 "dlion-mavo@int8-allreduce", "--format", "csv"),
        read="comm_ratio",
    ),
    *(Case(
        key=f"p4dn-{nodes}nodes",
        source=f"NVIDIA/nccl issue 527, nccl-tests table for 1 to 4 p4dn.24xlarge (2022-07-25), row {nodes}",
        config=f"{nodes} nodes x 8 A100 40GB, 4 x 100 Gb/s EFA per node; all_reduce_perf, 1 GiB float sum, the "
               "out-of-place column (the sweeps' table, lionsim.published.sweeps, takes the lower of the two "
               "columns: 35,198 and 70,207 us for 2 and 4 nodes); priced "
               "on the efa fabric (lionsim.network.fabrics), whose share of the link was fitted to the 2-node row "
               "(lionsim.published.sweeps), so that row is not an independent check",
        quantity="all-reduce time, us", published=published,
        command=("comm", "--network", "examples/clusters/p4dn.toml", "--workers", str(8 * nodes), "--collective",
                 "all_reduce", "--sizes", "1073741824", "--format", "csv"),
        read="time_us",
    ) for nodes, published in ((2, 35215.0), (3, 64782.0), (4, 70253.0))),
    Case(
        key="bagua-net-vgg16-4x8",
        source="Bagua-Net's page (BaguaSys/bagua rust/bagua-net/README.md, and the Bagua tutorials' "
               "more-optimizations/bagua-net page): VGG16 on 4x8xV100 with \"NCCL default implementation\", "
               "total 2,744.9 img/s on 32 GPUs",
        config="VGG-16 (torchvision's), 4 servers of 8 V100 on NVLink, 100 Gb/s Ethernet, fp32 SGD at batch 32 a GPU "
               "(examples/benchmark/synthetic_benchmark.py's defaults), Bagua's gradient_allreduce (the "
               "script's default algorithm at the repository's head; the page does not name it): a flat NCCL "
               "all-reduce per 10 MiB bucket (10.49 MB) during backward (bagua/torch_api/env.py, "
               "get_default_bucket_size) over NCCL's own socket transport. The page states no NCCL settings: "
               "priced with the ones the same team states for its 100 Gbps cluster of 8-V100 servers, "
               "NCCL_MIN_NCHANNELS=4 (NVIDIA/nccl issue 450; profile examples/clusters/v100x8-100gbe.toml), a "
               "setting the compressed cases take partly because this step meets it, so this row is not an "
               "independent check of it; and the same profile prices that thread's own mid-size calls slow "
               "(lionsim.published.sweeps, sockets-v100x8-100gbe-4x8), so the step's agreement rests on more than "
               "its exchange. --mfu 0.17: the compute of Bagua's benchmark page's asynchronous VGG-16 run on 128 "
               "GPUs (lionsim.published.compressed)",
        quantity="training step, s", published=32 * 32 / 2744.9,
        command=("estimate", "--model", "examples/models/vgg16.py:vgg16", "--workers", "32", "--gpus-per-node", "8",
                 "--tokens-per-worker", "32", "--traits", "nccl", "--device", "v100", "--mfu", "0.17",
                 "--bucket-mb", "10.49", "--network", "examples/clusters/v100x8-100gbe.toml",
                 "-s", "sgdm@fp32-allreduce", "--format", "csv"),
        read="step_s",
    ),
)


def in_checkout(args: Sequence[str]) -> tuple[str, ...]:
    """`args` with each `examples/...` path made absolute under CHECKOUT, so a command printed to be
    typed from the repository's root runs from any directory; one LionsimError line where the
    package has no checkout beside it (an installed wheel: the profiles and models are not in it)."""
    if not any(a.startswith("examples/") for a in args):
        return tuple(args)
    examples = CHECKOUT / "examples"
    if not examples.is_dir():
        raise LionsimError(f"the published cases run profiles and models under examples/, which is not at "
                           f"{examples}: run them from a checkout of the lionsim repository")
    return tuple(str(CHECKOUT / a) if a.startswith("examples/") else a for a in args)


def _run(command: tuple[str, ...]) -> pd.DataFrame:
    """The command's CSV, run in this process (lionsim's CLI, as a user would type it from the
    repository's root: in_checkout). A command that fails raises its own error line as a
    LionsimError; an unexpected exception (a bug) goes on with its traceback, as lionsim's CLI does."""
    from typer.testing import CliRunner

    from lionsim.cli import app

    result = CliRunner().invoke(app, list(in_checkout(command)))
    if result.exit_code != 0:
        if result.exception is not None and not isinstance(result.exception, (LionsimError, SystemExit)):
            raise result.exception
        said = str(result.exception) if isinstance(result.exception, LionsimError) else next(  # click's "Error: ..."
            (line.strip() for line in reversed(result.output.splitlines()) if line.strip()), f"exit {result.exit_code}")
        raise LionsimError(f"lionsim {' '.join(command)} failed: {said}")
    return pd.read_csv(io.StringIO(result.stdout))


def frame(case: Case) -> pd.DataFrame:
    """The case's rows, run now: its command's CSV, then `versus`'s first row where it has one."""
    rows = _run(case.command)
    return pd.concat([rows, _run(case.versus).iloc[:1]], ignore_index=True) if case.versus else rows


def lionsim_figure(case: Case) -> float:
    """lionsim's figure for `case`, from its command run now."""
    return _read(case, frame(case))


def explanation(case: Case, frame: pd.DataFrame) -> str:
    """`case.miss` with lionsim's figures filled in from its `frame`."""
    return case.miss.format(**case.figures(frame)) if case.figures and case.miss else case.miss


def _read(case: Case, frame: pd.DataFrame) -> float:
    """lionsim's figure for `case` from its `frame` (see `frame`)."""
    if case.read == "time_us":
        return float(frame["time_s"].iloc[-1]) * 1e6
    if case.read == "busbw":
        return float(frame["busbw_GBps"].iloc[-1])
    if case.read == "comm_ratio":
        return float(frame["comm_s"].iloc[1] / frame["comm_s"].iloc[0])
    if case.read == "step_ratio" and case.versus:
        return float(frame["step_s"].iloc[-1] / frame["step_s"].iloc[0])
    if case.read == "step_ratio":
        return float(frame["step_s"].iloc[1] / frame["step_s"].iloc[0])
    if case.read == "step_s":
        return float(frame["step_s"].iloc[0])
    if case.read == "bandwidth_needed":
        return float(frame["bandwidth_needed_GBps"].iloc[0])
    raise ValueError(f"unknown reading {case.read!r}")


def results(cases: tuple[Case, ...] = CASES) -> pd.DataFrame:
    """One row per case: published, lionsim's figure, the error (lionsim / published - 1), and
    the explanation of a miss with its figures filled in."""
    rows = []
    for case in cases:
        rows_now = frame(case)
        ours = _read(case, rows_now)
        rows.append({"key": case.key, "published": case.published, "lionsim": ours,
                     "error": ours / case.published - 1.0, "miss": explanation(case, rows_now)})
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame, worst: float = GOAL_WORST) -> dict:
    """Median and worst |error|, and the cases beyond `worst`."""
    errors = frame["error"].abs()
    return {"median": statistics.median(errors), "worst": float(errors.max()),
            "beyond": [k for k, e in zip(frame["key"], errors) if e > worst]}


def _figure(value: float, quantity: str) -> str:
    return f"{value:.3f}" if "ratio" in quantity or quantity.endswith(", s") else f"{value:,.1f}"


def explained(frame: pd.DataFrame, cases: tuple[Case, ...], beyond: float) -> list[tuple[list[str], str]]:
    """(the cases' keys, the explanation) for each explanation of a case beyond `beyond`, the cases
    sharing one text named together, in the table's order."""
    keys: dict[str, list[str]] = {}
    for case, row in zip(cases, frame.itertuples(index=False)):
        if row.miss and abs(row.error) > beyond:
            keys.setdefault(row.miss, []).append(case.key)
    return [(k, reason) for reason, k in keys.items()]


def _goal_line(frame: pd.DataFrame, goal_median: float, goal_worst: float) -> str:
    s = summary(frame, goal_worst)
    return (f"Median |error| {s['median']:.1%} (goal {goal_median:.0%}); worst {s['worst']:.1%} (goal {goal_worst:.0%}); "
            f"beyond {goal_worst:.0%}: {', '.join(s['beyond']) or 'none'}.")


def alike_line(frame: pd.DataFrame, cases: Sequence[Case]) -> str:
    """Cases lionsim prices to one figure where their sources' figures differ: one prediction
    checked against several figures, which a reader of the median should know ("" where none)."""
    groups: dict[tuple[str, float], list[tuple[Case, float]]] = {}
    for case, row in zip(cases, frame.itertuples(index=False)):
        if row.lionsim == row.lionsim:  # NaN: nothing priced
            groups.setdefault((case.quantity, round(float(row.lionsim), 9)), []).append((case, float(row.lionsim)))
    alike = [g for g in groups.values() if len(g) > 1 and len({c.published for c, _ in g}) > 1]
    if not alike:
        return ""
    said = "; ".join(f"{', '.join(c.key for c, _ in g)} ({_figure(g[0][1], g[0][0].quantity)}; published "
                     f"{', '.join(_figure(c.published, c.quantity) for c, _ in g)})" for g in alike)
    return (f"Priced alike where the sources' figures differ: {said}. lionsim's model reads nothing here that "
            "tells these configurations apart (--case KEY says what prices each), so each group is one "
            "prediction checked against several figures.")


def _why(keys: list[str], reason: str, beyond: float, goal_median: float) -> str:
    which = "the median goal" if beyond == goal_median else "the worst goal"
    return f"Beyond {beyond:.0%} ({which}), why {', '.join(keys)} {'misses' if len(keys) == 1 else 'miss'}: {reason}"


def _error(case: Case, row, beyond: float) -> str:
    return f"{row.error:+.1%}" + (" (see below)" if row.miss and abs(row.error) > beyond else "")


def markdown_table(frame: pd.DataFrame, cases: tuple[Case, ...] = CASES, goal_median: float = GOAL_MEDIAN,
                   goal_worst: float = GOAL_WORST, explain_beyond: float | None = None) -> str:
    """The docs table: source, configuration, published, lionsim, error, command; then the goal
    line and the explanations of the cases beyond `explain_beyond` (default `goal_worst`)."""
    beyond = goal_worst if explain_beyond is None else explain_beyond
    lines = ["| case | source | configuration | quantity | published | lionsim | error | command |",
             "|---|---|---|---|---|---|---|---|"]
    for case, row in zip(cases, frame.itertuples(index=False)):
        lines.append(f"| {case.key} | {case.source} | {case.config} | {case.quantity} | "
                     f"{_figure(case.published, case.quantity)} | {_figure(row.lionsim, case.quantity)} | "
                     f"{_error(case, row, beyond)} | `{case.shell}` |")
    lines += ["", *textwrap.wrap(_goal_line(frame, goal_median, goal_worst), 100)]
    if alike := alike_line(frame, cases):
        lines += ["", *textwrap.wrap(alike, 100)]
    for keys, reason in explained(frame, cases, beyond):
        lines += ["", *textwrap.wrap(_why(keys, reason, beyond, goal_median), 100)]
    return "\n".join(lines)


def compact(frame: pd.DataFrame, cases: tuple[Case, ...] = CASES, goal_median: float = GOAL_MEDIAN,
            goal_worst: float = GOAL_WORST, explain_beyond: float | None = None, columns: int = 100) -> str:
    """The terminal's table: case, quantity, published, lionsim, error; then the goal line and the
    explanations, all within `columns` (lionsim.published.terminal)."""
    beyond = goal_worst if explain_beyond is None else explain_beyond
    rows = [(case.key, case.quantity, _figure(case.published, case.quantity), _figure(row.lionsim, case.quantity),
             _error(case, row, beyond)) for case, row in zip(cases, frame.itertuples(index=False))]
    lines = terminal.table(("case", "quantity", "published", "lionsim", "error"), rows, columns,
                           right=(False, False, True, True, False))
    lines += ["", *terminal.prose(_goal_line(frame, goal_median, goal_worst), columns)]
    if alike := alike_line(frame, cases):
        lines += ["", *terminal.prose(alike, columns)]
    for keys, reason in explained(frame, cases, beyond):
        lines += ["", *terminal.prose(_why(keys, reason, beyond, goal_median), columns)]
    lines += ["", *terminal.prose("Each case's source, configuration and command: --case KEY, or --markdown for "
                                  "the docs' table.", columns)]
    return "\n".join(lines)


def record(case: Case, frame: pd.DataFrame, columns: int = 100) -> str:
    """One case's full record (`frame` = results((case,))): every field, wrapped to `columns` (the
    command on one line: terminal.field)."""
    row = next(frame.itertuples(index=False))
    fields = [("case", case.key), ("source", case.source), ("configuration", case.config),
              ("quantity", case.quantity), ("published", _figure(case.published, case.quantity)),
              ("lionsim", _figure(row.lionsim, case.quantity)), ("error", f"{row.error:+.1%}"),
              ("command", case.shell), ("why it may miss", row.miss)]
    lines = []
    for name, value in fields:
        if value:
            lines += terminal.field(name, value, columns)
    return "\n".join(lines)


@terminal.entry
def main(argv: list[str]) -> int:
    given = terminal.parse(argv, __doc__, ("--markdown",), ("--case KEY",), exclusive=[("--markdown", "--case")])
    if "case" in given:
        case = terminal.find(str(given["case"]), CASES)
        print(record(case, results((case,)), terminal.width()))
    elif given.get("markdown"):
        print(markdown_table(results()))
    else:
        print(compact(results(), columns=terminal.width()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """A published point no case checks: what was published, and why lionsim does not check it."""

    key: str
    source: str
    config: str
    published: str
    """The figure as published."""
    why: str
    """What stops lionsim: the mechanism it lacks, or why it cannot reproduce the figure."""


def findings_markdown(findings: Sequence[Finding], why: str) -> str:
    """`findings` as a Markdown list wrapped to 100 columns, each one's `why` under that heading ("Needs")."""
    return "\n".join(textwrap.fill(f"- **{f.key}**: {f.source}. {f.config}. Published: {f.published}. {why}: "
                                   f"{f.why}.", 100, subsequent_indent="  ", break_on_hyphens=False)
                     for f in findings)
