"""`lionsim estimate`'s configuration: a model size, N workers on a network, a device, strategies."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field

from lionsim.aggregators import check_tie
from lionsim.compute import DEVICES, MODELS, Device
from lionsim.errors import LionsimError
from lionsim.estimate.defaults import DEFAULT_STRATEGIES
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.spread import ComputeSpread
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS, TRAITS, Network, network_for
from lionsim.runs import RunSpec, parse_runs
from lionsim.strategies.given import check_given

"""Like with like: both global optimizers all-reduce bf16 gradients (DDP's bf16_compress_hook,
what large runs use), so adamw (the baseline) and lion differ only in the optimizer; the
vote rows then show what the 1-bit exchange gains over the same optimizer's gradient
all-reduce. (Was adamw@bf16 against lion@fp32, which charged Lion twice the bytes.)"""


@dataclass(kw_only=True, slots=True)
class EstimateConfig:
    """One estimate: no training, only the step-time model."""

    model: str | None = None
    """Model preset (`lionsim.compute.MODELS`); or give `params`."""
    params: int | None = None
    """Parameters, when no model preset is given."""
    tensors: int | None = None
    """Parameter tensors (per-tensor scales of ef-signsgd, terngrad); default: the model's
    count, or 1 with `params` (scales are a few bytes per tensor either way)."""
    tokens_per_worker: int | None = None
    """Tokens (or patches) one worker processes per step; default: one sample of the model."""
    workers: int = 8
    """N: data-parallel workers."""
    gpus_per_node: int | None = None
    """Workers per node, overriding the network's; the intra link is the network's, or else
    the device's NVLink. The network's inter link stays per node (shared by its workers)."""
    network: str = "10gbe"
    """Network preset or profile file."""
    traits: str | None = None
    """Collective library traits the network is run by (ideal, gloo, nccl); None: the
    profile's own, else ideal (lionsim.network.libraries)."""
    device: str = "h100"
    """Accelerator preset (`lionsim.compute.DEVICES`)."""
    mfu: float | None = None
    """Model FLOPs utilisation; None: the device's default."""
    strategies: list[str] = field(default_factory=lambda: list(DEFAULT_STRATEGIES))
    """`NAME` or `NAME@TRANSPORT` per row."""
    transport: str | None = None
    """Transport for every strategy given without one (where it fits)."""
    overlap: str = "auto"
    """auto | buckets | none (lionsim.steptime.overlap)."""
    bucket_mb: float = 25.0
    """Bucket size, MB of float32 gradients (DDP's bucket_cap_mb)."""
    algorithm: str = AUTO
    """Collective algorithm: auto (cheapest per phase) or a name of `lionsim comm --algorithm`,
    used for the ops it implements (the others take the cheapest)."""
    tie: str = "zero"
    """MaVo tie rule: zero | alternate | random (a rule that moves ties needs 1 bit down at any N)."""
    baseline: str | None = None
    """Row the speedups are against: "strategy@transport" or a strategy (default: the first)."""
    compute_spread: list[str] = field(default_factory=list)
    """Uneven workers (lionsim.steptime.spread): the step waits for the slowest of N, whose factor's
    distribution is exact for one spec, a seeded Monte Carlo for several (stragglers.py)."""
    seed: int = 0
    """Seed of the spread's slow workers and Monte Carlo draws."""
    options: dict[str, object] = field(default_factory=dict)
    """Strategy options given (each strategy module's Options): by flag key (`powersgd_rank`) or
    `NAME.FIELD` (`--opt`); a shape-dependent strategy (powersgd, demo) needs a --model preset."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, kw_only=True, slots=True)
class Resolved:
    """An EstimateConfig with every name looked up and every value checked."""

    model: str
    """The preset's name, or "params"."""
    params: int
    tensors: int
    tokens_per_worker: int
    workers: int
    network: Network
    device: Device
    mfu: float
    runs: list[RunSpec]
    overlap: OverlapConfig
    algorithm: str
    baseline: str | None
    tie: str = "zero"
    spread: ComputeSpread | None = None
    shapes: list[tuple[int, ...]] | None = None
    """The model preset's tensor shapes (None with --params)."""
    options: dict = dataclasses.field(default_factory=dict)
    """The strategy options given (EstimateConfig.options)."""


MAXIMA = {"params": 10**15, "tokens-per-worker": 10**9}
"""Beyond these a figure is a typo, not a model: 10^15 parameters is 1,000x today's largest
models; 10^9 tokens one worker's step (both far above any preset)."""


def _positive_int(name: str, value: object) -> int:
    given = value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    top = MAXIMA.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (top is not None and value > top):
        example = ", written in full or like 3e9" if name == "params" else ""
        bound = f" and <= 1e{len(str(top)) - 1}" if top is not None else ""
        shown = f"{given:g}" if isinstance(given, float) else repr(given)  # as typed: 3e9, not 3000000000.0
        raise LionsimError(f"bad --{name} {shown}; accepted: a whole number >= 1{bound}{example}")
    return value


def with_gpus_per_node(network: Network, gpus_per_node: int, device: Device) -> Network:
    """`network` with `gpus_per_node` workers per node: the network's intra link, else the
    device's NVLink; the inter link stays per node, now shared by `gpus_per_node` workers."""
    if gpus_per_node == network.workers_per_node:
        return network
    intra = network.intra if network.intra is not None else device.intra_link
    if gpus_per_node > 1 and intra is None:
        raise LionsimError(f"--gpus-per-node {gpus_per_node} needs an intra-node link: network {network.name!r} "
                           f"has none and device {device.name!r} has no NVLink")
    return dataclasses.replace(network, workers_per_node=gpus_per_node, intra=intra)


def resolve(cfg: EstimateConfig) -> Resolved:
    """Check cfg and look up its presets; every problem is one LionsimError line."""
    if (cfg.model is None) == (cfg.params is None):
        raise LionsimError(f"give exactly one of --model (one of: {', '.join(MODELS.names())}) or --params N")
    if cfg.model is not None:
        shape = MODELS.get(cfg.model)
        name, params, tensors, sample = MODELS.canonical(cfg.model), shape.params, shape.tensors, shape.tokens_per_sample
        shapes = shape.tensor_shapes
    else:
        name, params, tensors, sample = "params", _positive_int("params", cfg.params), 1, None
        shapes = None
    if cfg.tensors is not None:
        tensors = _positive_int("tensors", cfg.tensors)
    if tensors > params:  # every tensor holds at least one parameter
        raise LionsimError(f"bad --tensors {tensors}; accepted: an integer from 1 to the parameter count {params}")
    if cfg.tokens_per_worker is not None:
        tokens = _positive_int("tokens-per-worker", cfg.tokens_per_worker)
    elif sample is not None:
        tokens = sample
    else:
        raise LionsimError("--params needs --tokens-per-worker (tokens one worker processes per step)")
    workers = _positive_int("workers", cfg.workers)
    device = DEVICES.get(cfg.device)
    mfu = device.mfu if cfg.mfu is None else cfg.mfu
    if not (isinstance(mfu, (int, float)) and math.isfinite(mfu) and 0 < mfu <= 1):
        raise LionsimError(f"bad --mfu {mfu!r}; accepted: a number in (0, 1]")
    network = network_for(cfg.network, traits=TRAITS.canonical(cfg.traits) if cfg.traits else None)
    if cfg.gpus_per_node is not None:
        network = with_gpus_per_node(network, _positive_int("gpus-per-node", cfg.gpus_per_node), device)
    network.nodes(workers)  # whole nodes, or one node
    algorithm = AUTO if str(cfg.algorithm).lower() == AUTO else COLLECTIVE_ALGORITHMS.canonical(cfg.algorithm)
    check_tie(cfg.tie)
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int) or not 0 <= cfg.seed < 2**63:
        raise LionsimError(f"bad --seed {cfg.seed!r}; accepted: an integer from 0 to 2**63 - 1")
    spread = ComputeSpread.parse(cfg.compute_spread, cfg.seed)
    if spread is not None:
        spread.check(workers)
    runs = parse_runs(list(cfg.strategies), cfg.transport)
    check_given(cfg.options, [r.strategy for r in runs])
    return Resolved(
        model=name, params=params, tensors=tensors, tokens_per_worker=tokens, workers=workers, network=network,
        device=device, mfu=float(mfu), runs=runs, shapes=shapes if cfg.tensors is None else None,
        options={k: v for k, v in cfg.options.items() if v is not None},
        overlap=OverlapConfig(mode=cfg.overlap.lower() if isinstance(cfg.overlap, str) else cfg.overlap,
                              bucket_mb=cfg.bucket_mb), algorithm=algorithm,
        baseline=cfg.baseline, tie=cfg.tie, spread=spread,
    )
