"""`lionsim estimate`'s plain inputs checked before torch loads, as bench's BenchConfig.check_plain:
the counts, fractions, seed, run length, device, --sweep and the forms of --overlap, --algorithm,
--compute-spread, --momentum-sync, --kernels and --optimizer (check_plain), the network
(load_plain_network, which returns it) and --need (parse_need), each refused in one line in a
moment (the command imports the model, the strategies and torch only after them). What needs the
registries or a model (strategies, transports, options, a FILE.py:FUNC model, the tensor count
against the parameters) is lionsim.estimate.config.resolve's, which runs these first too."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionsim.errors import LionsimError
from lionsim.estimate.defaults import ACCEPTED
from lionsim.reports.columns import ESTIMATE_SWEEP_VARIABLES
from lionsim.ranges import AT_LEAST_1, BANDWIDTH_GBPS, BUCKET_MB, bucket_mb_ok, MAX_SEED, SEED, STEPS, WORKERS, refusal, span
from lionsim.registry import did_you_mean
from lionsim.whole import MAX_STEPS, MAX_WORKERS, Text, typed  # noqa: F401 (typed re-exported)
from lionsim.whole_nodes import check_workers, fills_nodes

if TYPE_CHECKING:
    from lionsim.network import Network
    from lionsim.steptime.spread import ComputeSpread

VARIABLES = ESTIMATE_SWEEP_VARIABLES
MAXIMA = {"params": 10**15, "tokens-per-worker": 10**9, "replica-gpus": 10**6, "workers": MAX_WORKERS}
"""Beyond these a figure is a typo, not a model: 10^15 parameters is 1,000x today's largest
models; 10^9 tokens one worker's step (both far above any preset); 10^6 devices a replica; 10^8
workers (lionsim.whole.MAX_WORKERS: 1,000x the largest clusters, inside every payload container)."""
NEED_ACCEPTED = f"utilisation=U (or utilization=U) with U {span(0, 1, above=True, below=True)}, e.g. utilisation=0.95"
"""The --need form."""
COUNTS = {"workers": WORKERS,
          "params": span(1, MAXIMA["params"], whole=True, why="1,000x today's largest models; written in full, "
                                                               "like 3e9, or with K, M, B or T: 350M, 1.5B"),
          "tokens-per-worker": span(1, MAXIMA["tokens-per-worker"], whole=True, why="far above any preset's"),
          "replica-gpus": span(1, MAXIMA["replica-gpus"], whole=True, why="far more devices than any replica holds")}
"""What each count with a top (MAXIMA) accepts, in the words every command refusing it uses."""
DEFAULT_DEVICE = "h100"
"""The device an estimate runs on where neither --device nor the network (a profile's or preset's
`device`) names one."""
DEVICE_LIBRARY = "nccl"
"""The library a profile without [traits] is priced with: every device preset is a GPU, and GPUs
all-reduce with NCCL (the MI300X with RCCL, NCCL's fork, whose tuning model has the same form)."""


def chosen_device(given: str | None, spec, network) -> tuple[str, str]:
    """(the device an estimate runs on, whose it is): --device where given (""), else the `device` of
    `network` (loaded from --network `spec`: "the preset's", or "the profile's" for a file), else
    DEFAULT_DEVICE ("")."""
    import os

    from lionsim.network.presets import NETWORKS

    if given is not None:
        return given, ""
    if network.device:
        from lionsim.compute.device_file import check_profile_device
        from lionsim.compute.devices import DEVICES

        check_profile_device(spec, network)  # refused as the profile's other keys are (lionsim.network.profile)
        name = network.device if network.device.endswith(".toml") else DEVICES.canonical(network.device)
        return name, "the preset's" if os.fspath(spec) in NETWORKS else "the profile's"
    return DEFAULT_DEVICE, ""


def whole(value: object) -> int | None:
    """`value` as an int where it is a whole number (an int, or a float such as 3e9), else None."""
    if isinstance(value, float) and value.is_integer():  # False for inf and nan
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def count_range(name: str) -> str:
    """What count --`name` accepts, in words: its COUNTS range, else a whole number at least 1."""
    return COUNTS.get(name, AT_LEAST_1)


def positive_int(name: str, value: object) -> int:
    """`value` as a whole number >= 1 (and within MAXIMA), else one LionsimError line naming --`name`."""
    number, top = whole(value), MAXIMA.get(name)
    if number is None or number < 1 or (top is not None and number > top):
        raise LionsimError(refusal(f"--{name}", value, count_range(name)))
    return number


MIN_MFU = 1e-3
"""The least --mfu taken: 0.1% of peak (the published cases' least is 0.08). Below it a GPU would be
idle, a typo; --mfu 1e-300 priced steps of 1e296 s in a table hundreds of columns wide."""
MFU = span(MIN_MFU, 1, why="0.1% of peak to all of it")


def check_mfu(mfu: object) -> None:
    if not (isinstance(mfu, (int, float)) and not isinstance(mfu, bool) and math.isfinite(mfu)
            and MIN_MFU <= mfu <= 1):
        raise LionsimError(refusal("--mfu", mfu, MFU))


def check_seed(seed: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise LionsimError(refusal("--seed", seed, SEED))


def run_length(name: str, value: object, tokens_per_worker: int = 0, workers: int = 0, where: str = "") -> int:
    """--steps, or --tokens at `tokens_per_worker` x `workers` tokens a step, as a whole number of at most
    MAX_STEPS steps; else one line naming the value as typed and the accepted range, and for --tokens
    where its top comes from (`where`: whose worker count it is, where more than --workers is priced)."""
    number = whole(value)
    step = tokens_per_worker * workers
    top = MAX_STEPS if name == "steps" else MAX_STEPS * step
    if number is None or not 1 <= number <= top:
        raise LionsimError(refusal(f"--{name}", value, STEPS if name == "steps" else span(1, top, whole=True, why=(
            f"lionsim's most steps in a run, {MAX_STEPS:,}, of {step:,} tokens: {tokens_per_worker:,} a worker x "
            f"{workers:,} worker{'s' * (workers != 1)}{where}"))))
    return number


def check_run_length(steps: object, tokens: object, tokens_per_worker: int | None = None, workers: int = 1,
                     where: str = "") -> None:
    """--steps or --tokens (not both), each as run_length takes it: --tokens where the tokens a worker
    takes a step are known before the model is built (given, or a preset's sample), else in resolve;
    at `workers`, the fewest workers priced (the most steps), `where` saying whose count it is."""
    if steps is not None and tokens is not None:
        raise LionsimError(f"give --steps ({typed(steps)}) or --tokens ({typed(tokens)}), not both")
    if steps is not None:
        run_length("steps", steps)
    if tokens is not None and tokens_per_worker is not None:
        run_length("tokens", tokens, tokens_per_worker, workers, where)


def fewest_workers(workers: int, sweep: str | None) -> tuple[int, str]:
    """(the fewest workers an estimate prices, whose count it is, for run_length's `where`): --tokens
    makes the most steps there. --workers' table is priced beside a --sweep over workers, so the
    fewer of --workers and the sweep's smallest count."""
    swept = parse_sweep(sweep) if sweep is not None else None
    if swept is None or swept.variable != "workers":
        return workers, ""
    smallest = swept.values[0]
    if smallest < workers:
        return smallest, f", the smallest count of --sweep {sweep}"
    return workers, (f", --workers: its table is priced beside the sweep's, which starts at {smallest:,} workers; "
                     f"give --workers {smallest} to start there")


FROM_RUN_ACCEPTED = ("a finished `lionsim bench` --out directory (run.json with status complete and summary.csv) "
                     "or a finished `lionsim sweep` root (sweep.json and sweep_summary.csv)")
"""What --from-run DIR is (lionsim.estimate.from_run reads those files)."""


def check_one_model(cfg) -> None:
    """Exactly one of --model and --params (resolve checks it here too, after the network)."""
    if (cfg.model is None) == (cfg.params is None):
        from lionsim.compute.models import model_choices

        raise LionsimError(f"give exactly one of --model (one of: {model_choices()}) or --params N")


def check_from_run(path) -> None:
    """--from-run DIR is a directory: refused in a moment where it is absent or a file (what it
    holds is lionsim.estimate.from_run's to read, with pandas)."""
    from pathlib import Path

    where = Path(path)
    if not where.exists() or not where.is_dir():
        why = "no such directory" if not where.exists() else "it is a file"
        raise LionsimError(f"bad --from-run {where}: {why}; accepted: {FROM_RUN_ACCEPTED}")


def check_plain(cfg, sweep: str | None = None) -> ComputeSpread | None:
    """Every check of an EstimateConfig (or anything with its fields) that needs no torch but the
    network's (load_plain_network, which parses the profile); `sweep`: the --sweep text, parsed to
    be refused early (its user parses it again with the network's node size; --need likewise:
    parse_need). Returns --compute-spread parsed (check_forms), which resolve prices with."""
    from lionsim.compute.device_file import get_device

    if cfg.params is not None:
        positive_int("params", cfg.params)
    for name, value in (("tensors", cfg.tensors), ("tokens-per-worker", cfg.tokens_per_worker),
                        ("gpus-per-node", cfg.gpus_per_node)):
        if value is not None:
            positive_int(name, value)
    workers = positive_int("workers", cfg.workers)
    positive_int("replica-gpus", cfg.replica_gpus)
    if cfg.mfu is not None:
        check_mfu(cfg.mfu)
    if cfg.bucket_mb is not None and not bucket_mb_ok(cfg.bucket_mb):
        raise LionsimError(refusal("--bucket-mb", cfg.bucket_mb, BUCKET_MB))
    if getattr(cfg, "target_loss", None) is not None:
        from lionsim.estimate.retarget import check_target

        check_target(cfg.target_loss)
        if cfg.from_run is None:
            raise LionsimError(f"--target-loss {cfg.target_loss:g} measures --from-run DIR's steps to target "
                               "again at that loss: give --from-run DIR with it")
    if cfg.seed is not None:
        check_seed(cfg.seed)
    check_run_length(cfg.steps, cfg.tokens, _tokens_per_worker(cfg), *fewest_workers(workers, sweep))
    if cfg.device is not None:
        get_device(cfg.device, "--device")  # an unknown name fails with the sorted list, a bad file naming it
    return check_forms(cfg, workers)


def check_forms(cfg, workers: int) -> ComputeSpread | None:
    """The options whose accepted forms need no registry: --overlap's mode, --algorithm, each
    --compute-spread spec (against `workers`), --momentum-sync, --kernels (a table:DEVICE's rows) and
    --optimizer under it; each refused as resolve would refuse it, by the same parser. Returns the
    spread parsed under cfg's seed (None: none given), so a trace:FILE is read once a resolve."""
    from lionsim.estimate.kernel_choice import kernel_rows, resolve_optimizer
    from lionsim.forms import MomentumSync
    from lionsim.steptime.overlap import OverlapConfig

    OverlapConfig(mode=cfg.overlap)  # the mode alone: --bucket-mb is checked above
    chosen_algorithm(cfg.algorithm)
    spread = None
    if cfg.compute_spread:  # numpy only where a spread is given
        from lionsim.steptime.spread import ComputeSpread

        spread = ComputeSpread.parse(cfg.compute_spread, 0 if cfg.seed is None else cfg.seed)
        spread.check(workers)
    if cfg.momentum_sync is not None:
        MomentumSync.parse(cfg.momentum_sync)
    resolve_optimizer(cfg.optimizer, ideal=kernel_rows(cfg.kernels) is None)
    return spread


def chosen_algorithm(text: object) -> str:
    """--algorithm: auto, or a collective algorithm in its listed spelling (any case given); else one
    line naming those lionsim prices."""
    from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS

    return AUTO if str(text).lower() == AUTO else COLLECTIVE_ALGORITHMS.canonical(text)


def load_plain_network(cfg) -> Network:
    """cfg's network (network_for: its profile parsed once, what resolve prices on), refused without
    torch where the preset or profile is bad or --workers do not fill its nodes (or --gpus-per-node's)."""
    from lionsim.network import TRAITS, network_for

    network = network_for(cfg.network, traits=TRAITS.canonical(cfg.traits) if cfg.traits else None,
                          library=DEVICE_LIBRARY)  # a bad preset or profile (a bandwidth <= 0) fails here
    if cfg.gpus_per_node is None:
        check_workers(cfg.workers, network.workers_per_node, network.name)  # whole nodes, or one node
    else:
        check_gpus_per_node(cfg.workers, cfg.gpus_per_node)
    return network


def check_gpus_per_node(workers: int, gpus_per_node: int) -> None:
    """--gpus-per-node G that the --workers fill: one node (G >= workers) or whole nodes (G divides
    workers: lionsim.whole_nodes); else refused naming the option typed (the network's own
    workers_per_node is lionsim.network.link.Network.nodes' to refuse)."""
    gpus_in_range(gpus_per_node)
    if fills_nodes(workers, gpus_per_node):
        return
    small = [d for d in range(1, math.isqrt(workers) + 1) if workers % d == 0]
    divisors = sorted({*small, *(workers // d for d in small)} - {workers})
    shown = ", ".join(f"{d:,}" for d in divisors[:12]) + (", ..." if len(divisors) > 12 else "")
    raise LionsimError(refusal("--gpus-per-node", gpus_per_node,
                               f"a divisor of --workers ({shown}) or at least {workers:,} (one node)",
                               f"{workers:,} workers do not fill whole nodes of {gpus_per_node:,}"))


def gpus_in_range(gpus_per_node: int) -> None:
    """--gpus-per-node within the workers lionsim takes, refused naming the flag (the network's own
    check would name its key, workers_per_node, which no user typed)."""
    if not 1 <= gpus_per_node <= MAX_WORKERS:
        raise LionsimError(refusal("--gpus-per-node", gpus_per_node, WORKERS))


def with_gpus_per_node(network: Network, gpus_per_node: int, device) -> Network:
    """`network` with `gpus_per_node` workers per node: the network's intra link, else the
    device's NVLink (a lionsim.compute.devices.Device); the inter link stays per node, now shared by
    `gpus_per_node` workers. `lionsim estimate` and `lionsim comm` lay out nodes here alike."""
    gpus_in_range(gpus_per_node)
    if gpus_per_node == network.workers_per_node:
        return network
    intra = network.intra if network.intra is not None else device.intra_link
    if gpus_per_node > 1 and intra is None:
        raise LionsimError(refusal("--gpus-per-node", gpus_per_node, "1 (one worker a node); more with a --device "
                                   "that has NVLink or a network with an intra link",
                                   f"nodes of several need an intra-node link: network {network.name!r} has none "
                                   f"and device {device.name!r} has no NVLink"))
    if gpus_per_node < 2 and network.nvls:  # the option typed, not the network's workers_per_node it sets
        raise LionsimError(refusal("--gpus-per-node", gpus_per_node, "at least 2, or a network without nvls",
                                   f"network {network.name!r} runs NVLink SHARP (nvls = {network.nvls!r}) on NVSwitch "
                                   "nodes of 2 or more GPUs"))
    return dataclasses.replace(network, workers_per_node=gpus_per_node, intra=intra)


def _tokens_per_worker(cfg) -> int | None:
    """The tokens a worker takes a step where known without torch: --tokens-per-worker, else a decoder or
    ViT preset's sample (a counted preset or a FILE.py:FUNC model is built first: None)."""
    from lionsim.compute.models import MODELS, DecoderShape, ViTShape

    if cfg.tokens_per_worker is not None:
        return positive_int("tokens-per-worker", cfg.tokens_per_worker)
    if isinstance(cfg.model, str) and cfg.model in MODELS:
        shape = MODELS.get(cfg.model)
        return shape.tokens_per_sample if isinstance(shape, (DecoderShape, ViTShape)) else None
    return None


@dataclass(frozen=True, slots=True)
class Sweep:
    """What varies and its values, ascending."""

    variable: str
    """"workers" or "bandwidth" (GB/s)."""
    values: tuple[float, ...]
    note: str = ""
    """One line for stderr where a range's points rounded onto fewer worker counts than its COUNT."""

    @property
    def unit(self) -> str:
        return "workers" if self.variable == "workers" else "GB/s"


SWEEP_WORKERS = f"worker counts (workers=N,N,... or workers=START:END:COUNT), each {WORKERS}"
"""What a --sweep workers= value accepts: ranges.WORKERS, the words --workers is refused in."""


def _bad(spec: str, why: str = "") -> str:
    """--sweep's one line, the value as typed: "bad --sweep bandwidth=100:0.1:5: END must exceed START;
    accepted: workers=N,N,... | ..." (lionsim.estimate.defaults.ACCEPTED, what a sweep looks like)."""
    return refusal("--sweep", Text(spec), ACCEPTED, why)


SWEEP_BANDWIDTH = (f"bandwidths (bandwidth=GBPS,GBPS,... or bandwidth=START:END:COUNT), each "
                   f"{BANDWIDTH_GBPS.words}")
"""What a --sweep bandwidth= value accepts: ranges.BANDWIDTH_GBPS, as a profile's bandwidth_GBps."""


def _workers_refusal(spec: str, why: str) -> LionsimError:
    """The line refusing a --sweep workers= value: the --sweep form, ranges.WORKERS' accepted text."""
    return LionsimError(refusal("--sweep", Text(spec), SWEEP_WORKERS, why))


def _number(text: str, spec: str, variable: str = "") -> float:
    """One value (or a range's START or END) of --sweep `spec` over `variable`: a worker count
    (ranges.WORKERS) or a bandwidth (ranges.BANDWIDTH_GBPS); "": a range's COUNT."""
    accepted = {"workers": SWEEP_WORKERS, "bandwidth": SWEEP_BANDWIDTH}.get(variable, ACCEPTED)
    try:
        value = float(text)
    except ValueError:
        why = f"{text.strip() or 'nothing'} is not a number"
        raise LionsimError(refusal("--sweep", Text(spec), accepted, why)) from None
    if variable == "workers" and not (value.is_integer() and 1 <= value <= MAX_WORKERS):
        raise _workers_refusal(spec, f"{text.strip()} is no worker count")
    if variable == "bandwidth" and not BANDWIDTH_GBPS(value):
        raise LionsimError(refusal("--sweep", Text(spec), accepted, f"{text.strip()} GB/s is out of range"))
    if not (math.isfinite(value) and value > 0):
        raise LionsimError(_bad(spec, f"{text.strip()} must be {span(0, above=True)}"))
    return value


MAX_POINTS = 1000
"""Points one --sweep may price (each a full estimate of every strategy)."""


def parse_sweep(spec: str, workers_per_node: int = 1) -> Sweep:
    """Parse `--sweep` (module doc); worker ranges round to multiples of `workers_per_node`."""
    variable, sep, body = spec.partition("=")
    variable = variable.strip()
    if not sep or variable not in VARIABLES or not body.strip():
        near = did_you_mean(variable, VARIABLES) if variable not in VARIABLES else ""
        raise LionsimError(_bad(spec, "" if variable in VARIABLES else f"unknown variable {variable!r}") + near)
    if ":" in body:
        parts = body.split(":")
        if len(parts) != 3:
            raise LionsimError(_bad(spec, "a range is START:END:COUNT"))
        start, end = _number(parts[0], spec, variable), _number(parts[1], spec, variable)
        count = _number(parts[2], spec)
        if end <= start:
            raise LionsimError(_bad(spec, "END must exceed START"))
        if not count.is_integer() or count < 2:
            raise LionsimError(_bad(spec, "COUNT must be a whole number at least 2"))
        if count > MAX_POINTS:
            raise LionsimError(f"bad --sweep {spec}: {int(count):,} points; accepted: COUNT from 2 to {MAX_POINTS:,}")
        import numpy as np

        values = list(np.geomspace(start, end, int(count)))
        if variable == "workers":
            values = [nearest_count(v, workers_per_node) for v in values]
    else:
        values = [_number(item.strip(), spec, variable) for item in body.split(",")]
        if len(values) > MAX_POINTS:
            raise LionsimError(f"bad --sweep {spec}: {len(values):,} points; accepted: at most {MAX_POINTS:,}")
    if variable == "workers":
        values = [int(v) for v in values]  # whole: each item checked, a range's points rounded to nodes
        if max(values) > MAX_WORKERS:  # a range's END rounded up to whole nodes past the top
            raise _workers_refusal(spec, f"{max(values):,} workers (END rounded to whole nodes) is past the top")
    distinct = tuple(sorted(set(values)))
    if ":" not in body and len(distinct) < len(values):  # as a grid refuses a network given twice
        twice = next(v for v in values if values.count(v) > 1)
        raise LionsimError(refusal("--sweep", Text(spec), f"{ACCEPTED}, each value once", f"{twice:g} given twice"))
    if ":" in body and len(distinct) < 2:  # a range is for a span: one that rounds to one node count is not
        raise LionsimError(f"bad --sweep {spec!r}: the range rounds to one point ({distinct[0]:g} workers, whole "
                           f"nodes of {workers_per_node}); accepted: a range over at least 2 node counts, or one "
                           "value to price at")
    note = ""
    if ":" in body and len(distinct) < len(values):
        nodes = f" (whole nodes of {workers_per_node} beyond one node)" if workers_per_node > 1 else ""
        note = (f"note: --sweep {spec} prices {len(distinct)} points, not {len(values)}: its counts rounded to "
                f"whole workers{nodes}, and those that met were priced once")
    return Sweep(variable=variable, values=distinct, note=note)


def nearest_count(workers: float, workers_per_node: int) -> int:
    """The worker count nearest `workers` that a network of `workers_per_node` takes (lionsim.whole_nodes):
    `workers` rounded where it fills nodes, else the nearest whole nodes (one at least)."""
    count = max(1, round(workers))
    if fills_nodes(count, workers_per_node):
        return count
    return max(1, round(workers / workers_per_node)) * workers_per_node




@dataclass(frozen=True, slots=True)
class Need:
    """What `--need` asks: compute as this share of the step."""

    utilisation: float
    """U in (0, 1): compute_s / step_s."""


def parse_need(text: str) -> Need:
    """`utilisation=U` (or `utilization=U`); anything else is one LionsimError line."""
    name, sep, value = str(text).partition("=")
    if not sep or name.strip().lower() not in ("utilisation", "utilization"):
        raise LionsimError(f"bad --need {text!r}; accepted: {NEED_ACCEPTED}")
    try:
        u = float(value)
    except ValueError:
        raise LionsimError(f"bad --need {text!r}: {value.strip()!r} is not a number; accepted: {NEED_ACCEPTED}") from None
    if not (math.isfinite(u) and 0.0 < u < 1.0):
        raise LionsimError(f"bad --need {text!r}: U must be above 0 and below 1; accepted: {NEED_ACCEPTED}")
    return Need(u)


