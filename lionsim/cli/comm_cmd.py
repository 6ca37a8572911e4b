"""`lionsim comm`: collective cost table, nccl-tests style; modelled, or measured on gloo/nccl
beside the model, and `--fit PROFILE.toml` to fit a profile (the link and the backend's
traits) to what was measured.

Measured: lionsim starts `--ranks` processes on this host's loopback, or, under a launcher
(torchrun, any --nnodes), measures on the launcher's group, across hosts; rank 0 prints and
writes, the other ranks stay silent.
"""

from __future__ import annotations

from pathlib import Path

import typer

from lionsim.cli import options as o
from lionsim.cli.app import ConfigOption, app, console, err_console, fail, option_given
from lionsim.cli.comm_view import model_table, print_fit, print_measured, slow_words
from lionsim.cli.output import Format, emit, parse_out
from lionsim.errors import LionsimError
from lionsim.compute.device_file import get_device
from lionsim.estimate.gpu_library import gpu_nodes, gpu_nodes_library
from lionsim.estimate.library_checks import check_library_algorithm
from lionsim.estimate.plain import (DEVICE_LIBRARY, check_gpus_per_node, chosen_device, gpus_in_range,
                                   positive_int, with_gpus_per_node)
from lionsim.numbers import bytes_text, plural
from lionsim.ranges import refusal, span
from lionsim.registry import did_you_mean
from lionsim.whole import MAX_WORKERS, Text, read_whole
from lionsim.network import (AUTO, COLLECTIVE_ALGORITHMS, TABLE_OPS, comm_rows, load_network, network_for, normalize_op,
                             parse_sizes, rows_frame)
from lionsim.network.profile import library_chosen

BACKENDS = ("sim", "gloo", "nccl")
FIT_COLLECTIVES = ("all_reduce", "all_gather", "all_to_all", "broadcast")
"""What `--fit` measures unless --collective says: every op lionsim's transports issue (the
parameter server's gather and broadcast are priced as broadcast)."""
FIT_DTYPES = ("float32", "int8", "int32", "uint8", "bfloat16")
"""The dtypes lionsim's reductions carry (gradients, int8 votes, p-bit words, the abstention
flag, bf16 gradients), unless --dtype says."""
MEASURED_SIZES, FIT_SIZES = "64KiB:64MiB", "1B:16MiB"
MEASURE_ONLY = {"--fit": "fits measured collectives", "--dtype": "chooses what is measured",
                "--ranks": "is how many processes measure (the model's N is --workers)",
                "--warmup": "drops measured iterations", "--iters": "times measured iterations",
                "--timeout": "bounds a rank's wait in a measured collective",
                "--iface": "picks the interface measuring ranks talk over between hosts (under a launcher)"}
"""The options only a measurement reads, and why: the model refuses them (with any value)."""


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


COLLECTIVE_WORKERS = span(2, MAX_WORKERS, whole=True, why="a collective needs 2; the most workers lionsim takes")
"""What comm's --workers accepts: a model's N, as bench's --workers, but a collective of one moves nothing."""


def _workers(values: list[str]) -> list[int]:
    """Repeatable and/or comma-separated worker counts, each as every whole-number option reads it."""
    out = []
    for item in _split(values):
        try:
            count = read_whole(item)
        except ValueError:
            raise LionsimError(f"bad --workers {item!r}; accepted: {COLLECTIVE_WORKERS}, e.g. --workers 2,4,8") from None
        if not 2 <= count <= MAX_WORKERS:
            raise LionsimError(refusal("--workers", count, COLLECTIVE_WORKERS))
        out.append(count)
    return out


def _collectives(given: list[str] | None, algorithm: str, fit: bool) -> list[str]:
    """The ops to table, measure and fit: --collective's, each of which --algorithm must implement;
    unset, the defaults (all_reduce; with --fit, FIT_COLLECTIVES) that --algorithm implements
    (`--fit --algorithm ring`: all_reduce, all_gather, broadcast). Checked before anything is measured."""
    from lionsim.network.cost import algorithms_for

    ops = list(dict.fromkeys(normalize_op(c) for c in _split(given)))  # repeated and/or comma lists, once each
    defaults = FIT_COLLECTIVES if fit else ("all_reduce",)
    if algorithm == AUTO:
        return ops or list(defaults)
    implements = COLLECTIVE_ALGORITHMS.get(algorithm).ops  # an unknown name: one line with the list
    for op in ops:
        if op not in implements:
            raise LionsimError(f"algorithm {algorithm!r} does not implement {op}; choose from: "
                               f"{', '.join([AUTO, *algorithms_for(op)])}")
    ops = ops or [op for op in defaults if op in implements]
    if ops:
        return ops
    tabled = [op for op in TABLE_OPS if op in implements]
    usable = [name for name, algo in COLLECTIVE_ALGORITHMS.items() if set(algo.ops) & set(TABLE_OPS)]
    fix = (f"add --collective {' --collective '.join(tabled)}" if tabled else
           f"comm tables none of its ops ({', '.join(sorted(implements))}); choose from: {', '.join([AUTO, *usable])}")
    raise LionsimError(f"algorithm {algorithm!r} does not implement {', '.join(defaults)} "
                       f"({'--fit' if fit else 'comm'}'s default collective{'s' if fit else ''}): {fix}")


def _measured_ranks(backend: str, ranks: int | None, launched) -> int:
    """--ranks resolved as bench resolves it (the launcher's WORLD_SIZE under one), after
    checking this machine has the backend."""
    from lionsim.group.join import check_backend, default_ranks

    if launched is not None:
        if ranks not in (None, launched.world_size):
            raise LionsimError(f"--ranks {ranks} but the launcher started {launched.world_size} processes (WORLD_SIZE)")
        check_backend(backend, 1)
        return launched.world_size
    check_backend(backend, 1)  # nccl without CUDA: one line before any other
    n = default_ranks(backend) if ranks is None else ranks
    if backend == "nccl" and ranks is None and n < 2:
        raise LionsimError(f"comm --backend nccl measures between GPUs, one rank each: it needs >= 2 GPUs, {n} visible")
    check_backend(backend, n)
    return n


def _check_fit_path(path: Path, overwrite: bool) -> None:
    """--fit's file: a .toml in a directory that may be written, and a profile already there replaced
    only with --overwrite (a second fit on fewer sizes silently replaced a measured link by its prior)."""
    from lionsim.reports.outdir import check_out_dir

    if path.suffix.lower() != ".toml":
        raise LionsimError(f"bad --fit {path}: the profile is written as TOML; accepted: a path ending in .toml")
    check_out_dir(path.parent, "--fit")
    if path.is_dir():
        raise LionsimError(f"bad --fit {path}: a directory; accepted: a .toml file path")
    if path.exists() and not overwrite:
        raise LionsimError(f"--fit {path} exists: pass --overwrite to replace it (when the new fit completes), or "
                           "fit to another path")


@app.command()
def comm(
    ctx: typer.Context,
    sizes: str | None = typer.Option(
        None, "--sizes", help="START:END[:xF] as nccl-tests' -b/-e/-f (START x F^k up to END; x2 by default) and/or a "
        "comma list; B, KB/MB/GB = 1e3/1e6/1e9, KiB/MiB/GiB or K/M/G = 2^10/2^20/2^30 (B in capitals: 1Kb, "
        "kilobits, is refused); 1 B to 1 TiB; rows ascending, a size named twice one row. Default "
        f"1KiB:1GiB modelled, {MEASURED_SIZES} measured, {FIT_SIZES} with --fit."
    ),
    collective: list[str] = typer.Option(None, "--collective", help=f"Repeat or comma list: {', '.join(TABLE_OPS)}. Default "
                                         f"all_reduce; with --fit: {', '.join(FIT_COLLECTIVES)}; of those, the ones "
                                         "--algorithm implements."),
    dtype: list[str] = typer.Option(None, "--dtype", help="Measured: wire dtypes of the reductions, repeat or comma "
                                    "list (float32, bfloat16, float16, int8, uint8, int32; gathers and all-to-alls "
                                    f"move bytes: the first only). Default float32; with --fit: {', '.join(FIT_DTYPES)}."),
    workers: list[str] | None = typer.Option(
        None, "--workers", help="Worker counts (>= 2) to model: repeat or comma list. Default 8 (sim) or only --ranks."
    ),
    network: str = typer.Option("10gbe", "--network", help="A preset (see `lionsim networks`) or a .toml/.json "
                                "profile; with --fit, the link whose alpha the fit keeps."),
    gpus_per_node: int | None = typer.Option(
        None, "--gpus-per-node", parser=o.whole_number, help="Model: workers per node, overriding the network's, as "
        "estimate's (intra link: the network's, else the NVLink of its device, or of estimate's default device); "
        "given at all (even the network's own count) the nodes are GPUs, priced by NCCL as estimate prices them "
        "unless --traits names a library (a flat preset at 1 a node keeps its own), and a note says so."),
    traits: o.Traits = None,
    algorithm: str = typer.Option(
        AUTO, "--algorithm", help=f"How the model prices every op: auto (the cheapest for each size) or one of: "
        f"{', '.join(COLLECTIVE_ALGORITHMS.names())}. Without --collective it picks the ops too: of the default ones, "
        "those it implements (--fit --algorithm ring measures and fits all_reduce, all_gather and broadcast). A fit "
        "itself prices each op by the algorithm gloo runs (ring; pairwise all_to_all); --algorithm prices the model's "
        "rows beside the measured ones, --network's and the fitted profile's. Only what the library runs, as estimate's "
        "--algorithm (NCCL: ring, tree; gloo: ring; pairwise and param_server with both; --traits ideal or mpi: any)."
    ),
    backend: str = typer.Option("sim", "--backend", help="sim (model only), or measure on gloo (CPU) or nccl (CUDA)."),
    ranks: int | None = typer.Option(
        None, "--ranks", parser=o.whole_number, help="Processes to measure with: default 2 on gloo, one per visible GPU on nccl (which "
        "needs >= 2 GPUs), as bench; under torchrun, its WORLD_SIZE."),
    iface: o.Iface = None,
    warmup: int | None = typer.Option(None, "--warmup", parser=o.whole_number, help="Measured: iterations dropped before timing "
                                      "(nccl-tests -w). Default 5."),
    iters: int | None = typer.Option(None, "--iters", parser=o.whole_number, help="Measured: timed iterations per size, each after a "
                                     "barrier (nccl-tests -n). Default 20."),
    timeout: float | None = typer.Option(None, "--timeout", help="Measured: seconds a rank may wait in one "
                                         "collective. Default 60."),
    fit: Path | None = typer.Option(None, "--fit", help="Fit a profile (link + the backend's traits) to the measured "
                                    "rows; write it to this .toml."),
    out: Path | None = typer.Option(None, "--out", parser=parse_out, metavar="DIR",
                                    help="Write DIR/comm.csv and its plots (comm_<collective>.png, .svg)."),
    overwrite: o.Overwrite = False,
    overwrite_sweep: o.OverwriteSweep = False,
    format: Format = "table",
    config: Path | None = ConfigOption,
) -> None:
    """Collective cost table, nccl-tests style: time, algbw = S/t and busbw per size (modelled or measured)."""
    from lionsim.cli.interruption import published, watch
    from lionsim.group.env import check_iface, launcher_env

    if backend not in BACKENDS:
        raise LionsimError(f"unknown --backend {backend!r}; accepted: {', '.join(BACKENDS)}{did_you_mean(backend, BACKENDS)}")
    if out is None and (overwrite_sweep or (overwrite and fit is None)):
        flag = "--overwrite-sweep" if overwrite_sweep else "--overwrite"
        raise LionsimError(f"{flag} lets --out replace a previous run (and --overwrite, --fit a profile): give "
                           "--out DIR with it")
    watch(out)  # an interruption before the table is written says what --out holds
    if backend == "sim":
        given = {"--fit": fit, "--dtype": dtype or None, "--ranks": ranks, "--warmup": warmup, "--iters": iters,
                 "--timeout": timeout, "--iface": iface}
        for name, value in given.items():
            if value is not None:
                raise LionsimError(f"{name} {MEASURE_ONLY[name]}: use --backend gloo or nccl")
    if gpus_per_node is not None and backend != "sim":
        positive_int("gpus-per-node", gpus_per_node)  # a bad count is refused by its range first, as everywhere
        raise LionsimError(f"--gpus-per-node {gpus_per_node} lays out the model's nodes; measured ranks are where "
                           "the launcher put them: use --backend sim")
    loaded = load_network(network)  # as the file says: its own library, its own nodes
    if backend == "sim":
        chosen_device(None, network, loaded)  # a device lionsim does not know: one line naming the profile
    gpus = backend == "sim" and gpu_nodes(loaded, gpus_per_node)  # GPUs run NCCL: priced as estimate prices them
    net = network_for(network, traits=traits, backend=backend, library=DEVICE_LIBRARY if gpus else None,
                      loaded=loaded)
    ops = _collectives(collective, algorithm, fit is not None)
    dtypes = _split(dtype) or list(FIT_DTYPES if fit is not None else ["float32"])
    launched = launcher_env() if backend != "sim" else None
    if backend != "sim":  # before anything is measured or printed: can this machine run it?
        default = ranks is None and launched is None  # not typed: say so, as _nodes_of does for --workers
        ranks = _measured_ranks(backend, ranks, launched)
        net.nodes(ranks, "WORLD_SIZE" if launched is not None else "--ranks",  # the model's N: before measuring
                  Text(f"{ranks} (the default)") if default else None)
    check_iface(iface, launched)
    counts = _workers(workers) if workers else ([8] if backend == "sim" else [])
    if gpus_per_node is not None:
        net = _nodes_of(net, network, gpus_per_node, counts, bool(workers), traits)
    check_library_algorithm(net, algorithm, algorithm)  # as estimate: no row labelled with a library that never runs it
    if backend != "sim":  # the measured N gets its model rows beside the measured ones already
        counts = [n for n in counts if n != ranks]
    unmodelled = []  # --workers counts whose model is left out with the measured N's (_measure's left_out)
    if backend != "sim" and not option_given(ctx, "network"):
        unmodelled, counts = counts, []
    default = "1KiB:1GiB" if backend == "sim" else (FIT_SIZES if fit is not None else MEASURED_SIZES)
    size_list = parse_sizes(sizes if sizes is not None else default)
    for part, last in size_list.short:  # 1KB:4MB:x16 stops at 256 kB: a fit reads its bandwidth from the largest
        err_console.print(f"note: --sizes {part} stops at {bytes_text(last)}, its last step at or below END (as "
                          "nccl-tests' -e); add END itself to measure it", markup=False, highlight=False)
    if size_list.dropped:  # 1KB,1000 or overlapping ranges: one row each size
        err_console.print(f"note: --sizes {sizes} names {plural(size_list.dropped, 'size')} "
                          "more than once: each is one row", markup=False, highlight=False)
    rows = comm_rows(ops, size_list, counts, net, algorithm) if counts else None
    cfg = None
    if backend != "sim":
        from lionsim.measure import MeasureConfig

        given = {"warmup": warmup, "iters": iters, "timeout_s": timeout}  # unset: MeasureConfig's defaults
        cfg = MeasureConfig(backend=backend, ranks=ranks, collectives=tuple(ops), dtypes=tuple(dtypes),
                            sizes=tuple(size_list), **{k: v for k, v in given.items() if v is not None}).validate()
    if fit is not None:
        _check_fit_path(fit, overwrite)
    writes = out is not None and (launched is None or launched.rank == 0)  # rank 0 writes, the others stay silent
    if out is not None:
        from lionsim.reports.outdir import check_out_dir

        check_out_dir(out)
    from lionsim.reports.out_lock import holding

    # one writer per --out (rank 0's under a launcher): another command's staging is not cleared under it
    with holding(out, take=writes):
        target = (_prepare(out, overwrite, overwrite_sweep, writes, cfg.timeout_s if cfg is not None else 0)
                  if out is not None else None)
        try:
            link = None  # where the ranks measured (titles.measured_on): the plot's title says it
            if cfg is None:  # a table of the model alone imports no pandas
                frame = rows_frame(rows) if out is not None else None
            else:
                shown = console if format == "table" else err_console  # --format csv/json: stdout is the frame alone
                result = _measure(cfg, net, algorithm, launched, iface, rows, fit, shown,
                                  option_given(ctx, "network"), unmodelled)
                if result is None:  # a launcher's rank other than 0: rank 0 reports
                    return
                frame, link = result
            if target is not None:
                _stage(target, frame, None if fit is None else fit.stem, {net.name: net.library_text()}, link)
        except BaseException:  # Ctrl-C, a failed measurement or fit: nothing half-written is left beside --out
            if target is not None:
                target.abandon()
            raise
        # published before the table: | head loses no file
        written = sorted(target.publish(), key=lambda p: p.name != "comm.csv") if target is not None else []
        published(out if written else None)  # an interruption from here on says the files are there
    if backend == "sim":
        slow = slow_words(net.traits, [row["bytes"] for row in rows])
        emit(lambda: rows_frame(rows), format, lambda: model_table(rows, net.name, net.library_text(), slow=slow))
        note = library_note(net, loaded, network, traits, gpus_per_node)
        if note:
            err_console.print(f"note: {note}", markup=False, highlight=False)  # the title names the library
    elif format != "table":
        emit(frame, format)
    if backend == "sim" or option_given(ctx, "network"):  # model rows of ops the profile never measured
        _unmeasured_note(net, network, ops)
    if written:
        path, *plots = written
        (console if format == "table" else err_console).print(f"wrote {path} and {', '.join(p.name for p in plots)}",
                                                              markup=False, highlight=False)


def _unmeasured_note(net, spec: str, ops: list[str]) -> None:
    """One line on stderr where the model prices an op its profile's library never measured
    (lionsim.network.unmeasured), as estimate's caption says it for a run."""
    from lionsim.estimate.library_note import profile_source
    from lionsim.network.unmeasured import line

    if text := line(net, profile_source(net, spec), {"": set(ops)}):
        err_console.print(f"note: {text[0].lower()}{text[1:]}", markup=False, highlight=False)


def _nodes_of(net, spec: str, gpus_per_node: int, counts: list[int], given_workers: bool, traits: str | None):
    """`net` with --gpus-per-node workers a node, as `lionsim estimate` lays it out (the network's
    intra link, else its device's NVLink, else estimate's default device's) and prices it (a flat
    preset on nodes of several GPUs runs NCCL unless --traits `traits` names a library): the same
    nodes and library, so the two commands price one call alike. Every --workers count must fill
    whole nodes (or one), as estimate's must."""
    gpus_in_range(positive_int("gpus-per-node", gpus_per_node))  # before the per-count check adds its --workers
    for n in counts:
        try:
            check_gpus_per_node(n, gpus_per_node)
        except LionsimError as e:
            raise LionsimError(f"{e} (--workers {n}{'' if given_workers else ', the default'})") from None
    device, _ = chosen_device(None, spec, net)
    laid = gpu_nodes_library(with_gpus_per_node(net, gpus_per_node, get_device(device)), spec, gpus_per_node,
                             library_chosen(net, traits))
    if laid.intra is not net.intra:  # the link inside a node came from a device, not the network: say whose
        err_console.print(f"note: --gpus-per-node {gpus_per_node}: the GPUs of a node are joined by {device}'s "
                          f"NVLink, {laid.intra.bandwidth_Bps / 1e9:g} GB/s (network {net.name!r} has no intra "
                          "link; a profile's [intra] sets another)", markup=False, highlight=False)
    return laid


ESTIMATE_NOTE = "estimate prices GPUs with NCCL: --traits nccl here gives its figures"


def library_note(net, loaded, spec: str, traits: str | None, gpus_per_node: int | None) -> str:
    """The one line on the library that priced the model `net` (of --network `spec`, `loaded` as
    its file says) where the table's title alone would mislead, else "": --gpus-per-node turned the
    nodes into GPUs and so changed the library (a profile without a library, a flat preset on nodes
    of several), or comm kept the ideal library where estimate prices NCCL (estimate_prices_otherwise)."""
    if gpus_per_node is not None and traits is None and not gpu_nodes(loaded) and net.traits.name != loaded.traits.name:
        return (f"--gpus-per-node {gpus_per_node} makes the nodes GPUs, which run {net.traits.name}, as estimate "
                f"prices them (network {net.name!r} alone: {loaded.traits.name}; --traits {loaded.traits.name} "
                "keeps that)")
    return ESTIMATE_NOTE if estimate_prices_otherwise(net, spec, traits) else ""


def estimate_prices_otherwise(net, spec: str, traits: str | None) -> bool:
    """Whether `net` (comm's model of --network `spec`) is nodes of several workers priced by the
    ideal library where `lionsim estimate` would price the same --network and --traits with NCCL
    (a profile naming no library takes the device's: network_for's `library`): nodes that comm does
    not take for GPUs (gpu_library.gpu_nodes: no device stated, a link slower than NVLink inside),
    which estimate, modelling GPUs always, does."""
    if not net.traits.ideal or net.workers_per_node < 2:  # a device stated is GPU nodes: comm prices NCCL too
        return False
    return network_for(spec, traits=traits, library=DEVICE_LIBRARY).traits.name != net.traits.name


def _prepare(out: Path, overwrite: bool, overwrite_sweep: bool, writes: bool, timeout: float = 0):
    """Before anything is measured, with --out's lock held: --out may be written (one line if not),
    and, where this process writes it, a fresh staging directory beside it (what a killed run left is cleared,
    never published). The RunDir, or None on a launcher's rank that does not write: that one reads
    --out once rank 0 has put back what a stopped publish set aside (waiting at most `timeout` s)."""
    from lionsim.reports.outdir import claim_out
    from lionsim.cli.output import put_back_said
    from lionsim.reports.publish import RunDir, put_back_awaited

    if writes:
        put_back_said(out)  # what a stopped publish set aside
    else:  # so every rank decides from the folder rank 0 does (one that read first measured into a refusal)
        put_back_awaited(out, timeout)
    claim_out(out, overwrite=overwrite, overwrite_sweep=overwrite_sweep)
    if not writes:
        return None
    target = RunDir(out)
    target.prepare()
    return target


def _stage(target, frame, fitted: str | None, libraries: dict[str, str], link: str | None = None) -> None:
    """comm.csv, then its plots, into the staging directory: published together, or not at all.
    `fitted`: the name of the profile --fit wrote (its model rows are drawn dotted); `libraries`:
    the library that priced each model network, as the table's title names it; `link`: where the
    measured rows were measured ("loopback"), as the table says it."""
    from lionsim.reports.files import write_atomic
    from lionsim.reports.formats import write_csv
    from lionsim.reports.plots import plot_comm  # matplotlib: only when plots are asked for

    target.write(lambda stage: [write_atomic(stage / "comm.csv", lambda f: write_csv(f, frame)),
                                *plot_comm(stage, frame, fitted=fitted, libraries=libraries,
                                           measured_on=link)])


def _measure(cfg, net, algorithm, launched, iface, extra, fit, shown, network_given: bool = True,
             unmodelled: list[int] = ()):
    """Measure (this host's ranks, or the launcher's group), print beside the model on the
    console `shown`, fit; on rank 0 the comm.csv frame and where the ranks measured
    (titles.measured_on: "loopback"), None on the launcher's other ranks. `extra`: the model's
    rows of the --workers counts other than the measured one, in comm.csv and in a table of
    their own titled modelled (the table and the CSV hold the same rows).
    `network_given` False (--network left at its default): the model describes no link measured,
    so, as bench does (lionsim.reports.titles.unchecked_model), it is left out of the table,
    comm.csv and the plots, and one line says why; the model of the `unmodelled` --workers counts
    too (the caller left them out of `extra`), which the line says."""
    import pandas as pd

    from lionsim.group.hosts import shared_cores
    from lionsim.measure import measure, measured_rows, with_model
    from lionsim.measure.launch import MeasureFailure
    from lionsim.measure.rank import measure_in_group
    from lionsim.measure.table import compared

    where = "the launcher's group" if launched is not None else "this host's loopback"
    if launched is None or launched.rank == 0:
        cases: dict[str, list[str]] = {}
        for op, dtype in cfg.cases():
            cases.setdefault(op, []).append(dtype)
        what = ", ".join(f"{op} ({', '.join(d)})" if len(d) > 1 else op for op, d in cases.items())
        shown.print(f"measuring {what} on {cfg.ranks} {cfg.backend} ranks "
                    f"({where}): {len(cfg.sizes)} sizes, {cfg.warmup} warm-up + {cfg.iters} timed iterations "
                    "each", markup=False, highlight=False)
    try:
        result = measure(cfg) if launched is None else measure_in_group(cfg, launched, iface)
    except MeasureFailure as e:
        fail(str(e), code=1)
    except RuntimeError as e:  # under a launcher: a collective failed (a peer died)
        from lionsim.group.quiet import library_words

        fail(f"a collective failed (a peer rank died or stopped answering): {library_words(e)}", code=1)
    if result is None:
        return None
    points, hosts = result
    warning = shared_cores(hosts)
    if warning:
        err_console.print(f"warning: {warning}", markup=False)
    from lionsim.group.hosts import by_host, one_machine_link
    from lionsim.reports.titles import link_name, measured_on, model_left_out

    one_host = len(by_host(hosts)) == 1
    meta = {"config": {"backend": cfg.backend}, "ranks_on_one_host": one_host, "link": one_machine_link(hosts)}
    link = measured_on(meta)  # bench's caption's rule
    left_out = None if network_given else model_left_out(
        net.name, link_name(meta), cfg.backend, one_host, calibrate=False,
        fitting=None if fit is None else str(fit))
    if left_out and unmodelled:
        left_out += (f"; the model of --workers {','.join(map(str, unmodelled))} is left out with it (--network "
                     "names the link to model it on)")
    measured = measured_rows(points, cfg.ranks, cfg.backend)
    frame = measured if left_out else with_model(measured, net, algorithm)
    if fit is not None:
        fitted = _fit(points, cfg, net, hosts, fit, shown)
        frame = pd.concat([frame, with_model(measured, fitted, algorithm)
                           .query("source == 'model'")], ignore_index=True)[list(frame.columns)]
    if left_out:
        print_measured(measured, cfg.backend, cfg.ranks, net.name, shown, left_out=left_out, link=link)
    else:
        rows = compared(frame[frame.network.isin([net.name, cfg.backend])])
        print_measured(rows, cfg.backend, cfg.ranks, net.name, shown, slow_words(net.traits, rows.bytes), link=link)
    if extra:
        shown.print(model_table(extra, net.name, net.library_text(),
                                slow=slow_words(net.traits, [row["bytes"] for row in extra])))
        frame = pd.concat([rows_frame(extra), frame], ignore_index=True)[list(frame.columns)]
    return frame, link


def _fit(points, cfg, prior, hosts, path: Path, shown):
    """Fit and write the profile; print it on the console `shown`. Returns the fitted Network."""
    import datetime
    import sys

    import torch

    import lionsim
    from lionsim.group.hosts import by_host, shared_cores
    from lionsim.network.fit import FitConfig, Measured, error_summary, fit_profile, link_source
    from lionsim.network.profile import host_slow_line
    from lionsim.network.toml_out import profile_toml
    from lionsim.network.unmeasured import described, header_line
    from lionsim.reports.files import make_dir, write_atomic, written_together

    machines = by_host(hosts)
    record = {"backend": cfg.backend, "ranks": cfg.ranks, "hosts": len(machines),
              "ranks_per_host": [len(m["ranks"]) for m in machines],
              "hostnames": [m["hostname"] for m in machines],
              "interfaces": sorted({i for m in machines for i in m["ifaces"]}) or ["default"],
              "addresses": sorted({a for m in machines for a in m["addresses"]}),
              "torch": torch.__version__, "lionsim": lionsim.__version__,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "sizes": f"{min(cfg.sizes)}-{max(cfg.sizes)} B, {len(cfg.sizes)} sizes",
              "iterations": f"{cfg.warmup} warm-up + {cfg.iters}", "argv": " ".join(sys.argv[1:])}
    desc = (f"fitted by lionsim comm --backend {cfg.backend} on {cfg.ranks} ranks, {len(machines)} host(s), "
            f"link alpha from {prior.name}")
    measured = [Measured(p.op, p.dtype, p.nbytes(cfg.ranks), p.times) for p in points]
    net, errors = fit_profile(measured, workers=cfg.ranks, prior=prior, backend=cfg.backend, name=path.stem,
                              cfg=FitConfig(shared_cores=shared_cores(hosts) is not None),
                              description=desc, record=record)
    summary = error_summary(errors)
    print_fit(net, summary, path, shown)
    stand_ins = header_line(net)  # the ops --collective left out: priced, but not measured
    comment = (f"{desc}\nlink: {link_source(net)}\nmedian / worst |error| of the mean on the sweep: " + "; ".join(
        f"{r.collective} {r.dtype} {r.median_abs_error:.1%} / {r.worst_abs_error:.1%}"
        for r in summary.itertuples(index=False)) + (f"\n{stand_ins}" if stand_ins else ""))
    with written_together():  # a failed write leaves no folder it made either
        written = write_atomic(make_dir(path.parent) / path.name, lambda f: f.write(profile_toml(net, comment)))
    shown.print(f"wrote {written}", markup=False, highlight=False)
    if net.traits.slow.shared_cores:  # written with the profile: estimate and sim runs leave it out
        err_console.print(f"note: {host_slow_line(written, 'sim')}; {path.name} marks it shared_cores",
                          markup=False, highlight=False)
    left = [op for op in FIT_COLLECTIVES if op not in cfg.collectives]  # what lionsim's transports issue
    if left:
        err_console.print(f"note: {path.name} measured {', '.join(cfg.collectives)} only; the others are priced "
                          f"by a stand-in (a library's fixed cost is mostly per call): {described(net)}; "
                          f"--collective {','.join([*cfg.collectives, *left])} measures "
                          f"{'it' if len(left) == 1 else 'them'} too",
                          markup=False, highlight=False)
    if len(machines) == 1 and record["interfaces"] == ["default"]:
        err_console.print(f"note: all {cfg.ranks} ranks ran on {machines[0]['hostname']}: the profile describes its "
                          "loopback, not a link between hosts (measure across hosts under torchrun --nnodes N)",
                          markup=False, highlight=False)
    return net
