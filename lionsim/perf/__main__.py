"""`python -m lionsim.perf [WHAT ...]`: run benchmarks, print their figures, write them to --csv."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from lionsim import perf
from lionsim.errors import LionsimError
from lionsim.perf.rows import write_figures

DEFAULT = ["imports", "codecs", "votes", "gradients", "sim", "spread"]
"""What runs with no WHAT: every figure but the slow `bench`, `sweep`, `fidelity` and the gloo `transports`."""
CHOICES = DEFAULT + ["bench", "transports", "sweep", "fidelity", "kernels", "newton-schulz", "compute"]
REPEATS = {"imports": 3, "codecs": 5, "votes": 3, "gradients": 5, "spread": 5, "kernels": 5, "newton-schulz": 5, "compute": 10}
"""Each benchmark's timed repetitions when --repeats is not given."""
READ_BY = {
    "numel": ("codecs", "kernels", "votes", "transports"), "repeats": tuple(REPEATS),
    "vote_workers": ("votes",), "workloads": ("gradients", "sim"), "size": ("gradients", "sim"),
    "workers": ("gradients", "sim"), "mlp_workers": ("sim",), "steps": ("sim",), "strategy": ("sim",),
    "method": ("sim",), "spread_workers": ("spread",), "profile": ("transports",), "iters": ("transports",),
    "link": ("fidelity",), "fidelity_workloads": ("fidelity",), "fidelity_steps": ("fidelity",),
    "keep": ("fidelity",), "kernel_table": ("kernels",), "kernel_device": ("kernels", "newton-schulz", "compute"),
    "ns_models": ("newton-schulz",), "sweep_steps": ("sweep",), "runs": ("sweep",),
    "executors": ("sweep",),
}
"""Which benchmarks read each option (by its argparse dest): one given where none of them runs is
refused, since it would change nothing."""
_UNSET = object()


class _Append(argparse._AppendAction):
    """argparse's append, from _UNSET too: main parses into a namespace that holds _UNSET for every
    option of READ_BY (so _check_read tells a given option from a default), which append cannot
    extend ("'object' object has no attribute 'append'" ended `fidelity --link loopback`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is _UNSET:
            setattr(namespace, self.dest, None)
        super().__call__(parser, namespace, values, option_string)


def _ints(text: str) -> list[int]:
    """A comma list of positive integers (argparse turns the ValueError into one line, exit 2)."""
    values = [int(n) for n in text.split(",")]
    if not values or min(values) < 1:
        raise ValueError(text)
    return values


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_ints.__name__ = "comma list of positive integers"
_positive.__name__ = "positive integer"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """One line, exit 2 (argparse would print the whole usage first)."""
        self.exit(2, f"error: {message}; see python -m lionsim.perf --help\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m lionsim.perf", description=perf.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="*", default=DEFAULT, choices=CHOICES, metavar="WHAT", type=str.lower,
                   help=f"any of {', '.join(CHOICES)} (default: {' '.join(DEFAULT)})")
    p.add_argument("--csv", type=Path, default=Path("perf.csv"), help="write every figure here (default perf.csv)")
    p.add_argument("--numel", type=_positive, default=None,
                   help="codecs: 1e8 elements; kernels: 1e7 (1e8 on cuda); votes: 1e6 coordinates; transports: 25e6 parameters")
    p.add_argument("--repeats", type=_positive, default=None,
                   help="imports, codecs, votes, gradients, spread, kernels: timed repetitions of each figure "
                        f"(default {', '.join(f'{w} {n}' for w, n in REPEATS.items())})")
    p.add_argument("--vote-workers", type=_ints, default=[8, 32, 128, 1024], help="votes: worker counts N")
    p.add_argument("--workloads", default="vit,mlp", help="gradients, sim: the workloads")
    p.add_argument("--size", default="small", help="gradients, sim: the model size")
    p.add_argument("--workers", type=_ints, default=[1, 8, 32, 128], help="gradients, sim: worker counts N")
    p.add_argument("--mlp-workers", type=_ints, default=[1000], help="sim: extra worker counts for mlp alone")
    p.add_argument("--steps", type=int, default=8, help="sim: steps per point, at least 4 (2 dropped, the last evaluates)")
    p.add_argument("--strategy", default="dlion-mavo", help="sim: the strategy trained")
    p.add_argument("--method", default="default", choices=["default", "loop", "vmap"],
                   help="sim: per-worker gradients by the workload's default method, or force one")
    p.add_argument("--spread-workers", type=_ints, default=[8, 128, 1000],
                   help="spread: worker counts N of the --compute-spread booking benchmark")
    p.add_argument("--profile", default="10gbe", help="transports: the network the model prices (a --fit profile)")
    p.add_argument("--iters", type=_positive, default=5, help="transports: timed steps per transport")
    p.add_argument("--link", action=_Append, default=None, type=str.lower,
                   help="fidelity: loopback, 1gbit, 100mbit (repeatable; the emulated ones need root; default loopback)")
    p.add_argument("--fidelity-workloads", default="vit:paper,mlp:small",
                   help="fidelity: WORKLOAD:SIZE list trained across the link")
    p.add_argument("--fidelity-steps", type=_positive, default=30, help="fidelity: steps per strategy")
    p.add_argument("--keep", type=Path, default=None, help="fidelity: keep the runs in this directory")
    p.add_argument("--kernel-table", type=Path, default=None,
                   help="kernels: write the codec kernel table here (the shipped one: lionsim/data/kernels.csv)")
    p.add_argument("--kernel-device", choices=("cpu", "cuda"), default=None,
                   help="kernels, newton-schulz, compute: time the cases on this CPU (default) or on the visible GPU (kernels: "
                        "its preset's rows become measured ones; default --numel there 1e8: shorter kernels time "
                        "their launches)")
    p.add_argument("--ns-models", default=None,
                   help="newton-schulz: model presets whose matrices are timed (default gpt2-124m on cpu; "
                        "gpt2-124m,gpt2-1.3b,llama-7b on cuda)")
    p.add_argument("--sweep-steps", type=_positive, default=300, help="sweep: steps per training (default 300)")
    p.add_argument("--runs", type=_positive, default=3, help="sweep: whole sweeps per executor (median)")
    p.add_argument("--executors", default="jobs1,jobs2,ray", help="sweep: any of jobs1, jobs2, ray (the first is "
                   "the one the others are compared with)")
    return p


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_sim_point":  # one simulator point, in its own process
        from lionsim.perf.sim import sim_point

        workload, size, n, steps, strategy, method = argv[1:]
        print(json.dumps(sim_point(workload, size, int(n), int(steps), strategy, method)))
        return
    p = parser()
    args = p.parse_args(argv, argparse.Namespace(**dict.fromkeys(READ_BY, _UNSET)))
    try:
        _check_read(args, p)
        workloads = _check(args)
        executors = _executors(args)
    except LionsimError as e:
        p.exit(2, f"error: {e}\n")
    try:
        _run(args, workloads, executors)
    except LionsimError as e:  # a bad name found while running, or a file that cannot be written
        p.exit(2, f"error: {e}\n")
    except BrokenPipeError:  # a reader that stops early (| head) is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _check_read(args, p: argparse.ArgumentParser) -> None:
    """Refuse an option none of the chosen benchmarks reads, then put the defaults of the options
    not given in place (`args` holds _UNSET for those)."""
    for dest, readers in READ_BY.items():
        if getattr(args, dest) is _UNSET:
            setattr(args, dest, p.get_default(dest))
        elif not set(readers) & set(args.what):
            flag = "--" + dest.replace("_", "-")
            raise LionsimError(f"{flag} applies to {', '.join(readers)}, and none of them runs here "
                               f"({' '.join(dict.fromkeys(args.what))})")


def _check(args) -> list[str]:
    """Every value checked before anything is measured (a bad --csv must not cost a run)."""
    from lionsim.reports.outdir import check_out_dir

    if not str(args.csv).strip() or args.csv.is_dir():
        raise LionsimError(f"bad --csv {str(args.csv)!r}; accepted: a file path in an existing directory")
    check_out_dir(args.csv.parent if str(args.csv.parent) else Path("."), "--csv")
    if not args.csv.parent.is_dir():
        raise LionsimError(f"bad --csv {str(args.csv)!r}: no directory {str(args.csv.parent)!r}")
    table = args.kernel_table
    if table is not None and (table.is_dir() or not (table.parent if str(table.parent) else Path(".")).is_dir()):
        raise LionsimError(f"bad --kernel-table {str(table)!r}; accepted: a file path in an existing directory")
    if args.kernel_device == "cuda":
        from lionsim.perf.kernels import gpu_device

        gpu_device()  # no GPU, or one lionsim has no preset for, is one line before anything runs
    if "newton-schulz" in args.what:
        _ns_models(args)
    if "sim" in args.what and args.steps < 4:
        raise LionsimError(f"bad --steps {args.steps}; accepted: 4 or more (2 are dropped, the last evaluates)")
    workloads = []
    if {"gradients", "sim"} & set(args.what):
        from lionsim.runs import parse_runs
        from lionsim.workloads import WORKLOADS

        from lionsim.workloads import WorkloadConfig

        from lionsim.training.memory import check_memory

        workloads = [WORKLOADS.canonical(w.strip()) for w in args.workloads.split(",")]
        for name in workloads:
            WorkloadConfig(name=name, size=args.size)  # an unknown size is one line
        parse_runs([args.strategy])
        for name in workloads:  # the memory guard bench uses: one point at a time (sim: each in its own process)
            extra = args.mlp_workers if name == "mlp" and "sim" in args.what else []
            for n in dict.fromkeys([*args.workers, *extra]):
                check_memory(WorkloadConfig(name=name, size=args.size, workers=n),
                             what=f"{name}/{args.size} at N = {n}")
    return workloads


def _ns_models(args) -> list[str]:
    """newton-schulz: the model presets, each known (their canonical names)."""
    from lionsim.compute import MODELS
    from lionsim.perf.newton_schulz import CPU_MODELS, GPU_MODELS

    if args.ns_models is None:
        return list(GPU_MODELS if args.kernel_device == "cuda" else CPU_MODELS)
    names = [m.strip() for m in args.ns_models.split(",") if m.strip()]
    if not names:
        raise LionsimError(f"bad --ns-models {args.ns_models!r}; accepted: presets of {', '.join(MODELS.names())}")
    for name in names:
        if name not in MODELS or not any(len(s) >= 2 for s in MODELS.get(name).tensor_shapes):
            raise LionsimError(f"bad --ns-models {args.ns_models!r}: {name!r}; accepted: {', '.join(MODELS.names())}")
    return [MODELS.get(name).name for name in names]


def _executors(args) -> list[str]:
    """sweep: the executors, each known, and Ray installed where it is asked for."""
    from lionsim.perf.sweep import EXECUTORS

    names = [e.strip().lower() for e in args.executors.split(",")]
    for name in names:
        if name not in EXECUTORS:
            raise LionsimError(f"bad --executors {args.executors!r}: {name!r}; accepted: {', '.join(EXECUTORS)}")
    if "sweep" in args.what and "ray" in names:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise LionsimError('--executors ray needs Ray: pip install -e ".[ray]" (or leave ray out)')
    return list(dict.fromkeys(names))


def _run(args, workloads: list[str], executors: list[str]) -> None:
    figures = []
    for what in dict.fromkeys(args.what):
        if what == "imports":
            from lionsim.perf.imports import bench_imports, print_imports

            done = bench_imports(args.repeats or REPEATS[what])
            print_imports(done)
        elif what == "codecs":
            from lionsim.perf.codecs import bench_codecs, print_codecs

            done = bench_codecs(args.numel or 10**8, args.repeats or REPEATS[what])
            print_codecs(done)
        elif what == "votes":
            from lionsim.perf.votes import bench_votes, print_votes

            done = bench_votes(args.vote_workers, args.numel or 10**6, args.repeats or REPEATS[what])
            print_votes(done)
        elif what == "gradients":
            from lionsim.perf.gradients import bench_gradients, print_gradients

            done = bench_gradients(workloads, args.size, [n for n in args.workers if n > 1] or args.workers,
                                   args.repeats or REPEATS[what])
            print_gradients(done)
        elif what == "sim":
            from lionsim.perf.sim import bench_sim, print_sim

            done = []
            for workload in workloads:
                counts = args.workers + (args.mlp_workers if workload == "mlp" else [])
                done += bench_sim(workload, args.size, counts, args.steps, args.strategy, args.method)
            print_sim(done)
        elif what == "spread":
            from lionsim.perf.spread import bench_spread, print_spread

            done = bench_spread(args.spread_workers, args.repeats or REPEATS[what])
            print_spread(done)
        elif what == "bench":
            from lionsim.perf.bench import bench_default, print_bench

            done = bench_default()
            print_bench(done)
        elif what == "fidelity":
            from lionsim.perf.fidelity import FidelityConfig, print_fidelity, run_fidelity

            done = run_fidelity(FidelityConfig(links=tuple(args.link or ["loopback"]), out=args.keep,
                                               workloads=tuple(args.fidelity_workloads.split(",")),
                                               steps=args.fidelity_steps))
            print_fidelity(done)
        elif what == "kernels":
            from lionsim.perf.kernels import bench_kernels, print_kernels, write_table

            device = args.kernel_device or "cpu"
            numel = args.numel or (10**8 if device == "cuda" else 10**7)
            rows, done = bench_kernels(numel, args.repeats or REPEATS[what], device)
            print_kernels(rows)
            if args.kernel_table is not None:
                write_table(args.kernel_table, rows)
                print(f"wrote the kernel table to {args.kernel_table}")
        elif what == "compute":
            from lionsim.perf.compute import bench_compute, print_compute

            done = bench_compute(args.repeats or REPEATS[what], args.kernel_device or "cpu")
            print_compute(done)
        elif what == "newton-schulz":
            from lionsim.perf.newton_schulz import bench_newton_schulz, print_newton_schulz

            done = bench_newton_schulz(_ns_models(args), args.repeats or REPEATS[what], args.kernel_device or "cpu")
            print_newton_schulz(done)
        elif what == "sweep":
            from lionsim.perf.sweep import bench_sweep, print_sweep

            done = bench_sweep(args.sweep_steps, args.runs, executors)
            print_sweep(done)
        else:
            from lionsim.perf.transports import bench_transports, print_transports

            done = bench_transports(args.profile, args.numel or 25_000_000, args.iters)
            print_transports(done)
        figures += done
        write_figures(args.csv, figures)  # after each benchmark: an interrupted run keeps what it measured
    print(f"wrote {len(figures)} figures to {args.csv}")


if __name__ == "__main__":
    main()
