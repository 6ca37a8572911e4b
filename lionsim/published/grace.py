"""GRACE's compressor costs, a check of lionsim's codec pricing (two of them feed it).

GRACE's release (sands-lab/grace-data GRACE_data_release.pickle, imagenet-classification) ran
each method on ResNet-50, 8 V100 workers, TensorFlow 1.15 + Horovod 0.21 over MPI at 10 Gb/s
twice: mode `throughput` (the method as shipped) and mode `upper-bound` (read here as the same
exchanges without the compressor's work; the release does not say more). The difference of their
steps (64 images a worker, tf_cnn_benchmarks' default batch, over each throughput) is what the
compressor cost the step. lionsim's figure is the same difference as it prices it for the nearest
strategy on GRACE's configuration (the GRACE cases' command, with their kernel rows: v100-tf1.15):
its step less the same step without the compressor's work (lionsim.published.grace_fit), which is
less than the codec work it prices where that work runs beside other tensors' exchanges. The
figures are typed from the release with their run ids; two pairs also feed a price: the
v100-tf1.15 topk row is the rate at which lionsim's difference for topk 0.01 equals the release's,
and its orthogonalize row likewise for powersgd (solved by lionsim.published.grace_fit,
lionsim.perf.kernels types them, and a test solves them again), so those rows' agreement here is
by construction and the other methods are the check.

Why the top_k and QR methods cost what they cost in TF 1.15 (the sources are in
lionsim/published/compressed.py, _MISS_GRACE_TOPK and _MISS_GRACE_POWERSGD).

    python -m lionsim.published.grace             # the table, lionsim's figures run now
    python -m lionsim.published.grace --markdown  # the docs' Markdown (the runs' ids, what it shows)
    python -m lionsim.published.grace --case KEY  # one method's record: its runs, steps and command
"""

from __future__ import annotations

import statistics
import sys
import textwrap
from dataclasses import dataclass

import pandas as pd

from lionsim.compute.kernel_table import default_table
from lionsim.published import grace_fit, terminal

BATCH = 64 * 8
"""Images a step on 8 workers at tf_cnn_benchmarks' default batch for resnet50 (the GRACE cases')."""

COMMAND = ("estimate", "--model", "resnet50-tf", "--tokens-per-worker", "64", "--device", "v100",
           "--kernels", "table:v100-tf1.15", "--mfu", "0.08",
           "--traits", "mpi", "--overlap", "tensors", "--workers", "8", "--network", "10gbe",
           "--format", "csv")
"""The GRACE cases' configuration (lionsim.published.compressed), each strategy below added with -s
and its options (grace_fit.OPTIONS; grace_fit.config is the same estimate as a config)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Method:
    """One GRACE method: its runs in both modes and the lionsim run nearest to it."""

    grace: str
    """GRACE's method name (with its ratio and memory where it has them)."""
    run: str | None
    """The lionsim strategy@transport, or None: lionsim has no such method."""
    throughput: tuple[tuple[str, float], ...]
    """(run id, img/s) of mode throughput, 8 workers, mpi, 10g."""
    upper_bound: tuple[tuple[str, float], ...]
    """(run id, img/s) of mode upper-bound, same configuration."""

    @property
    def key(self) -> str:
        """The name --case takes: GRACE's, without its memory, spaces as hyphens ("topk-0.01")."""
        return self.grace.split(" (")[0].replace(" ", "-")

    def cost_s(self) -> float:
        """The compressor's cost a step: the median throughput run's step minus the median upper-bound
        run's (several runs of a method where the release holds several)."""
        return _step(self.throughput) - _step(self.upper_bound)


def _step(runs: tuple[tuple[str, float], ...]) -> float:
    """The median run's step (s) of BATCH images."""
    return statistics.median(BATCH / ips for _, ips in runs)


METHODS: tuple[Method, ...] = (
    Method(grace="signsgd (no memory)", run="signsgd@allgather-1bit",
           throughput=(("zficj7k10", 1655.2648),), upper_bound=(("arkcbmv00", 1718.1808),)),
    Method(grace="onebit (memory)", run="ef-signsgd@allgather-1bit",
           throughput=(("0vanmipp0", 1435.6720),), upper_bound=(("tqxl62tj0", 1504.0584),)),
    Method(grace="efsignsgd (memory)", run="ef-signsgd@allgather-1bit",
           throughput=(("i0g4ntxk0", 1526.6928),), upper_bound=(("37cwbt9a0", 1524.3016),)),
    Method(grace="qsgd (no memory)", run="qsgd@allgather-levels",
           throughput=(("yztqovj80", 1539.0008), ("cb0u794x0", 1047.6128), ("irt25q1p0", 1041.9632)),
           upper_bound=(("96agne8v0", 1042.8120), ("4ftg8eua0", 1042.9176), ("r1oyjmaa0", 1530.6304))),
    Method(grace="terngrad (no memory)", run="terngrad@int8-allreduce",
           throughput=(("t9gui5an0", 1563.5080),), upper_bound=(("0m9gtimc0", 1546.4704),)),
    Method(grace="randomk 0.01 (memory)", run=None,
           throughput=(("nlakhjvh0", 2968.3864),), upper_bound=(("zhl875al0", 3157.2768),)),
    Method(grace="topk 0.01 (memory)", run="dgc@grace-allgather",
           throughput=(("iyhzknco0", 1457.3552),), upper_bound=(("rkrw9e5x0", 2427.4440),)),
    Method(grace="topk 0.1 (memory)", run=None,
           throughput=(("rzqio0lq0", 1174.4424),), upper_bound=(("iz1ivq9i0", 1716.6712),)),
    Method(grace="topk 0.25 (memory)", run=None,
           throughput=(("rhyqc97u0", 862.5976),), upper_bound=(("zg87hepu0", 1163.2712),)),
    Method(grace="dgc 0.01 (memory)", run="dgc@grace-allgather",
           throughput=(("vb0eovyc0", 1030.9944),), upper_bound=(("4ts6jd4t0", 2476.5840),)),
    Method(grace="powersgd rank 1 (memory)", run="powersgd@lowrank-allreduce",
           throughput=(("xa1kk3ne0", 1794.0928),), upper_bound=(("ju07wpj10", 2446.7928),)),
)
"""GRACE's methods lionsim can be checked on (the release's method none has no upper-bound run; randomk
and top-k past 1% are shown for the release's side only: lionsim has no random-k, and its top-k is
priced at 1% here)."""


def command(run: str) -> tuple[str, ...]:
    """The estimate lionsim prices `run` by on GRACE's configuration (COMMAND), as a user types it."""
    options = grace_fit.OPTIONS.get(run.partition("@")[0], {})
    return (*COMMAND, "-s", run, *(a for key, value in options.items() for a in ("--" + key.replace("_", "-"), str(value))))


def increases() -> dict[str, float]:
    """lionsim's step less its step without the compressor's work, per run, on GRACE's configuration
    (lionsim.published.grace_fit, run now)."""
    runs = dict.fromkeys(m.run for m in METHODS if m.run)
    return {run: grace_fit.modes(grace_fit.config(run)).increase_s for run in runs}


ROWS = {"topk": "topk 0.01 (memory)", "orthogonalize": "powersgd rank 1 (memory)"}
"""The v100-tf1.15 kernel rows the release gives, each by the method whose runs give it."""


def solved(kernel: str) -> float:
    """`kernel`'s v100-tf1.15 row from the release: the rate at which lionsim's cost of its method's
    run equals the release's at 8 workers and 10 Gb/s (grace_fit.solved_rate)."""
    method = next(m for m in METHODS if m.grace == ROWS[kernel])
    return grace_fit.solved_rate(kernel, grace_fit.config(method.run), method.cost_s())


def table(ours: dict[str, float] | None = None) -> pd.DataFrame:
    """One row per method: the release's cost a step and lionsim's (`ours`: increases(); NaN: no lionsim run)."""
    ours = increases() if ours is None else ours
    return pd.DataFrame([{"grace": m.grace, "run": m.run or "", "release_s": m.cost_s(),
                          "lionsim_s": ours[m.run] if m.run else float("nan"),
                          "runs": ", ".join(i for i, _ in (*m.throughput, *m.upper_bound))} for m in METHODS])


def _s(v: float) -> str:
    return "—" if v != v else f"{v:.3f}"


def markdown(frame: pd.DataFrame | None = None) -> str:
    """The docs block: the table, then what it shows (its figures read off the table)."""
    f = table() if frame is None else frame
    lines = ["| GRACE method | lionsim run | release: compressor cost a step (s) | lionsim: the same, priced (s) | "
             "release runs (throughput, then upper-bound) |", "|---|---|---|---|---|"]
    lines += [f"| {r.grace} | {('`' + r.run + '`') if r.run else '—'} | {_s(r.release_s)} | {_s(r.lionsim_s)} | "
              f"{r.runs} |" for r in f.itertuples(index=False)]
    return "\n".join(lines) + "\n\n" + textwrap.fill(_shows(f), 100, break_on_hyphens=False) + "\n"


def compact(frame: pd.DataFrame, columns: int = 100) -> str:
    """The terminal's form (`frame` = table()): method, lionsim run, the two costs, then what it
    shows, within `columns` (lionsim.published.terminal)."""
    rows = [(m.key, r.run or "—", _s(r.release_s), _s(r.lionsim_s)) for m, r in zip(METHODS, frame.itertuples(index=False))]
    lines = terminal.table(("method", "lionsim run", "release cost s", "lionsim cost s"), rows, columns,
                           right=(False, False, True, True))
    return "\n".join([*lines, "", *terminal.prose(_shows(frame), columns), "",
                      *terminal.prose("Each method's runs, steps and command: --case KEY, or --markdown for the docs' "
                                      "table.", columns)])


def record(method: Method, ours: dict[str, float] | None = None, columns: int = 100) -> str:
    """One method's record: GRACE's runs and steps in both modes, the cost, and lionsim's run with
    its priced cost (`ours`: increases(), run now by default) and the command (on one line:
    terminal.field), the rest within `columns`."""
    runs = lambda rs: ", ".join(f"{i} ({ips:,.1f} img/s)" for i, ips in rs)  # noqa: E731
    fields = [("method", f"{method.grace} (--case {method.key})"),
              ("throughput runs", f"{runs(method.throughput)}; the median step of {BATCH} images {_step(method.throughput):.4f} s"),
              ("upper-bound runs", f"{runs(method.upper_bound)}; the median step {_step(method.upper_bound):.4f} s"),
              ("release: compressor cost a step", f"{method.cost_s():.3f} s (the median steps' difference)")]
    if method.run is None:
        fields.append(("lionsim run", "none: shown for the release's side only (lionsim has no random-k, and its "
                                       "top-k is priced at 1% here)"))
    else:
        ours = increases() if ours is None else ours
        fields += [("lionsim run", method.run),
                   ("lionsim: compressor cost a step", f"{ours[method.run]:.3f} s (its step less the same step "
                                                        "without its encode: lionsim.published.grace_fit)"),
                   ("command", f"lionsim {' '.join(command(method.run))}")]
        for kernel in (k for k, name in ROWS.items() if name == method.grace):
            shipped = default_table().row(grace_fit.FRAMEWORK, kernel).GBps
            fields.append((f"{grace_fit.FRAMEWORK} {kernel} row", f"{shipped:.4f} GB/s shipped, {solved(kernel):.4f} "
                                                                  "solved now from these runs (lionsim.published.grace_fit)"))
    return "\n".join(line for name, value in fields for line in terminal.field(name, value, columns))


def _shows(f: pd.DataFrame) -> str:
    """What the table shows, its figures read off it (`f` = table())."""
    by = f.set_index("grace")
    elementwise = by.loc[["signsgd (no memory)", "onebit (memory)", "efsignsgd (memory)", "qsgd (no memory)",
                          "terngrad (no memory)"]]
    topk = by.loc[[g for g in by.index if g.startswith("topk")], "release_s"]
    return (f"What it shows: the elementwise codecs cost the release's step {elementwise.release_s.min():.3f} to "
            f"{elementwise.release_s.max():.3f} s (below zero: run-to-run noise), lionsim's "
            f"{elementwise.lionsim_s.min():.3f} to {elementwise.lionsim_s.max():.3f} s (the part of their priced work that "
            "lengthens the step). top-k costs "
            f"{topk.min():.3f} to {topk.max():.3f} s whatever its ratio (0.01 to 0.25), lionsim "
            f"{by.loc['topk 0.01 (memory)', 'lionsim_s']:.3f} s by construction: TF 1.15 sorts the whole flattened "
            "tensor on one SM (cub's segmented radix sort with one segment), and the v100-tf1.15 topk row is the "
            "rate at which lionsim's cost for the ratio-0.01 runs equals theirs (lionsim's v100 rows price torch's "
            f"radix selection on the whole GPU). dgc costs {by.loc['dgc 0.01 (memory)', 'release_s']:.3f} s (GRACE's "
            "threshold search: up to 20 tf.while_loop passes over the tensor, each condition a GPU value the host's "
            "executor must read, then tf.where, whose output size the host must learn), PowerSGD "
            f"{by.loc['powersgd rank 1 (memory)', 'release_s']:.3f} s against lionsim's "
            f"{by.loc['powersgd rank 1 (memory)', 'lionsim_s']:.3f} s by construction (TF 1.15 runs tf.linalg.qr on "
            "the host: two device-host round trips a tensor; the v100-tf1.15 orthogonalize row is the rate at which "
            "lionsim's cost equals these runs', over lionsim's count of the orthogonalizations' bytes). lionsim's "
            "cost is its step less the same step without the compressor's work, as the release's upper-bound runs "
            "leave it out (lionsim.published.grace_fit). lionsim has no rate for dgc's host round trips "
            "and does not price them. GRACE's method none has no upper-bound run. (The release's "
            f"column: the step of {BATCH} images over each run's throughput, the median where it holds several runs; "
            "lionsim's modelled as of the page's commit, the same on any machine; generated by `python -m "
            "lionsim.docgen`.)")


@terminal.entry
def main(argv: list[str]) -> int:
    given = terminal.parse(argv, __doc__, ("--markdown",), ("--case KEY",), exclusive=[("--markdown", "--case")])
    if "case" in given:
        print(record(terminal.find(str(given["case"]), METHODS, "method"), columns=terminal.width()))
    elif given.get("markdown"):
        print(markdown(), end="")
    else:
        print(compact(table(), terminal.width()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
