"""`lionsim estimate`'s configuration: a model size, N workers on a network, a device, strategies."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field

from lionsim.aggregators import check_tie
from lionsim.compute import MODELS, Device, training_flops
from lionsim.compute.models import model_choices
from lionsim.compute.device_file import get_device
from lionsim.compute.counted import Count, count_on_meta
from lionsim.compute.kernel_ops import DEFAULT_OPTIMIZER
from lionsim.errors import LionsimError
from lionsim.estimate.defaults import DEFAULT_STRATEGIES, estimate_reads, hidden_in_help
from lionsim.estimate.from_run import Measured
from lionsim.estimate.from_run import as_trained, check_trained
from lionsim.estimate.from_run import load as load_measured
from lionsim.run_plugins import load_recorded
from lionsim.estimate.plain import (  # noqa: F401  (with_gpus_per_node: re-exported for lionsim.estimate)
    MAXIMA, check_gpus_per_node, check_mfu, check_one_model, check_plain, check_seed, chosen_algorithm, chosen_device,
    load_plain_network, positive_int as _positive_int, with_gpus_per_node,
)
from lionsim.estimate.gpu_library import gpu_nodes_library
from lionsim.estimate.kernel_choice import (  # noqa: F401  (KernelChoice: re-exported)
    IDEAL_KERNELS, KernelChoice, resolve_kernels, resolve_optimizer,
)
from lionsim.estimate.run import run_steps
from lionsim.estimate.trained_options import trained_options
from lionsim.estimate.to_target import Convergence
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.spread import ComputeSpread
from lionsim.network import AUTO, Network
from lionsim.network.profile import library_chosen
from lionsim.plugin_load import SPEC_FORMS, is_spec, load_function, parse_spec
from lionsim.ranges import refusal, span
from lionsim.runs import RunSpec, parse_runs, split_specs
from lionsim.schedules import PER_BUCKET
from lionsim.steptime.stragglers import max_distribution
from lionsim.strategies.core.base import STRATEGIES
from lionsim.strategies.core.form import RUN
from lionsim.strategies.core.given import check_given, flags, named_specs
from lionsim.forms import MomentumSync
from lionsim.estimate.library_checks import check_library_algorithm, check_reduce_rate
from lionsim.estimate.probe import check_algorithm


@dataclass(kw_only=True, slots=True)
class EstimateConfig:
    """One estimate: no training, only the step-time model."""

    model: str | None = None
    """Model preset (`lionsim.compute.MODELS`), or FILE.py:FUNC / module:FUNC returning an nn.Module or
    (module, example_input), built on the meta device and counted (lionsim.compute.counted); or give `params`."""
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
    replica_gpus: int = 1
    """Devices one worker is made of: a model replica sharded over G devices (FSDP, ZeRO-3), as a
    DiLoCo worker is a datacenter. tokens_per_worker are the replica's; its FLOPs and every
    per-parameter pass (codec, optimizer) split over the G devices, each launching its kernels;
    the replica's traffic inside itself is not priced (module doc of lionsim.estimate.table)."""
    network: str = "10gbe"
    """Network preset or profile file."""
    traits: str | None = None
    """Collective library traits the network is run by (ideal, gloo, nccl); None: the preset's
    (lionsim.network.presets), the profile's own, else NCCL (DEVICE_LIBRARY: a GPU runs NCCL)."""
    device: str | None = None
    """Accelerator preset (`lionsim.compute.DEVICES`); None: the network's (a profile's or preset's
    `device`), else h100 (lionsim.estimate.plain.chosen_device)."""
    mfu: float | None = None
    """Model FLOPs utilisation; None: the device's default."""
    strategies: list[str] | None = None
    """`NAME` or `NAME@TRANSPORT` per row; None: DEFAULT_STRATEGIES, or with from_run the runs it
    trained, its baseline first (default_strategies)."""
    transport: str | None = None
    """Transport for every strategy given without one (where it fits)."""
    overlap: str = "auto"
    """auto | buckets | tensors | none (after = none) (lionsim.steptime.overlap.MODES)."""
    bucket_mb: float | None = None
    """Bucket size, MB of float32 gradients (DDP's bucket_cap_mb); None: DDP's 25. Given, some run must
    exchange per bucket under the overlap mode, auto included (check_buckets): else it changes nothing."""
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
    seed: int | None = None
    """Seed of the spread's Monte Carlo draws (several compute_spread specs; one spec's distribution is
    exact); None: 0."""
    options: dict[str, object] = field(default_factory=dict)
    """Strategy options given (each strategy module's Options): by flag key (`powersgd_rank`) or
    `NAME.FIELD` (`--opt`); a shape-dependent strategy (powersgd, demo) needs a --model preset."""
    momentum_sync: str | None = None
    """The Lion family: never | every:K | schedule:K (None: never); a run (--steps) prices the syncs,
    the steady row only where step 1 syncs."""
    steps: int | None = None
    """A whole run of this many steps (lionsim.estimate.run): every phase priced, run_s and
    mean_step_s beside the steady step_s; None: the steady step alone."""
    tokens: int | None = None
    """A whole run that processes this many tokens in all (steps = ceil(tokens / (tokens per
    worker x workers))); give steps or tokens, not both."""
    kernels: str = "table"
    """How encode, decode and update are priced: `table` (the codec kernel table's rows for the
    device: lionsim.compute.kernel_table), `table:DEVICE` (another device's rows, e.g. table:cpu
    for codecs staged through the host), or `ideal` (one fused pass each at the device's bandwidth)."""
    optimizer: str = DEFAULT_OPTIMIZER
    """How the strategies' optimizer steps run (lionsim.compute.kernel_ops.OPTIMIZER_KINDS): fused (one
    kernel, what large-model trainers run: apex/DeepSpeed/Megatron FusedAdam, torch fused=True),
    foreach (torch's multi-tensor ops) or eager (torch's for-loop: every op per tensor)."""
    from_run: str | None = None
    """A finished bench run or sweep root whose measured steps to target price each strategy's run
    to target at scale (lionsim.estimate.to_target); with it, `steps` / `tokens` are the baseline's
    steps to target at scale (None: the run's own)."""
    target_loss: float | None = None
    """With from_run: the loss its runs' steps to target are measured to again, from its loss curves
    (lionsim.estimate.retarget); None: the target each run was summarised with."""

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
    names: list[str] | None = None
    """Their names, where the model says them (a preset's, a counted module's), else None."""
    options: dict = dataclasses.field(default_factory=dict)
    """The strategy options given (EstimateConfig.options), and momentum_sync where given; with --from-run,
    each option the estimate reads that was not given is the one its run trained with (trained_options)."""
    run_steps: int | None = None
    """Steps of the whole run priced (--steps); None: none, or --tokens' count at each worker count."""
    run_tokens: int | None = None
    """--tokens: the run's steps follow from it at each worker count (a sweep over workers)."""
    flops_per_unit: float | None = None
    """Counted forward + backward FLOPs of one unit of tokens_per_worker (a sample of a counted model:
    a ResNet preset, --model FILE.py:FUNC with an example input); None: 6 P per token."""
    kernels: KernelChoice = dataclasses.field(default_factory=lambda: IDEAL_KERNELS)
    """How encode, decode and update are priced."""
    optimizer: str = DEFAULT_OPTIMIZER
    """The optimizer steps' form (EstimateConfig.optimizer)."""
    convergence: Convergence | None = None
    """--from-run's measured convergence (None: no time to target)."""
    replica_gpus: int = 1
    """Devices a worker is made of (EstimateConfig.replica_gpus)."""
    device_from: str = ""
    """Whose the device is where --device was not given: "the profile's" or "the preset's" (the
    network's `device`); "": given, or lionsim's default."""
    library_chosen: bool = False
    """Whether --traits or the profile named the collective library (network.profile.library_chosen),
    rather than a preset's default: the ideal library's hint to price NCCL is for a default."""

    def step_flops(self) -> float:
        """One worker's forward + backward FLOPs a step: a counted model's own per sample (flops_per_unit),
        else 6 P per token."""
        if self.flops_per_unit is None:
            return training_flops(self.params, self.tokens_per_worker)
        return self.flops_per_unit * self.tokens_per_worker

    def steps_for(self, workers: int) -> int | None:
        """The whole run's steps on `workers` workers (None: no whole run asked for)."""
        if self.run_tokens is not None:
            return run_steps(None, self.run_tokens, self.tokens_per_worker, workers)
        return self.run_steps


def resolve(cfg: EstimateConfig) -> Resolved:
    """Check cfg and look up its presets; every problem is one LionsimError line."""
    spread = check_plain(cfg)  # --compute-spread parsed (a trace:FILE read) and checked against --workers
    network = load_plain_network(cfg)  # the profile parsed once: priced on, and whether it named its library
    check_one_model(cfg)
    flops_per_unit = None
    if is_spec(cfg.model):
        name, count = counted_model(cfg.model)
        shapes, names = count.tensor_shapes, list(count.tensor_names) or None
        params, tensors, sample, flops_per_unit = count.params, len(shapes), count.samples, count.training_flops_per_sample
        if params > MAXIMA["params"]:
            raise LionsimError(f"bad --model {cfg.model}: {params:.3g} parameters; accepted: up to 1e15")
    elif cfg.model is not None:
        if cfg.model not in MODELS:  # the presets, then the form a model of one's own takes, the suggestion last
            raise LionsimError(f"unknown model {cfg.model!r}; choose from: {model_choices()}, or a model of your own: "
                               f"{SPEC_FORMS}{MODELS.suggest(cfg.model)}")
        shape = MODELS.get(cfg.model)  # an alias (gpt2-medium) is priced and labelled as its preset
        name, params, tensors, sample = shape.name, shape.params, shape.tensors, shape.tokens_per_sample
        shapes, names = shape.tensor_shapes, getattr(shape, "tensor_names", None)  # a plug-in shape may name none
        flops_per_unit = getattr(shape, "training_flops_per_unit", None)  # counted presets (resnet*)
    else:
        name, params, tensors, sample = "params", _positive_int("params", cfg.params), 1, None
        shapes = names = None
    if cfg.tensors is not None:
        tensors = _positive_int("tensors", cfg.tensors)
    if tensors > params:  # every tensor holds at least one parameter
        raise LionsimError(refusal("--tensors", tensors, span(1, f"the parameter count {params:,}", whole=True)))
    if cfg.tokens_per_worker is not None:
        tokens = _positive_int("tokens-per-worker", cfg.tokens_per_worker)
    elif sample is not None:
        tokens = sample
    elif cfg.model is not None:
        raise LionsimError(f"--model {cfg.model} gives a module without an example input: give --tokens-per-worker "
                           "(priced by 6 P per token), or return (module, example_input) to count its FLOPs")
    else:
        raise LionsimError("--params needs --tokens-per-worker (tokens one worker processes per step)")
    workers = _positive_int("workers", cfg.workers)
    replica_gpus = _positive_int("replica-gpus", cfg.replica_gpus)
    chosen = library_chosen(network, cfg.traits)
    device_name, device_from = chosen_device(cfg.device, cfg.network, network)
    device = get_device(device_name)
    mfu = device.mfu if cfg.mfu is None else cfg.mfu
    check_mfu(mfu)
    if cfg.gpus_per_node is not None:
        check_gpus_per_node(workers, _positive_int("gpus-per-node", cfg.gpus_per_node))
        network = with_gpus_per_node(network, cfg.gpus_per_node, device)
        network = gpu_nodes_library(network, cfg.network, cfg.gpus_per_node, chosen)
    network.nodes(workers)  # whole nodes, or one node
    algorithm = chosen_algorithm(cfg.algorithm)
    check_tie(cfg.tie)
    if cfg.seed is not None:
        check_seed(cfg.seed)
    check_seed_acts(cfg.seed, spread, workers)
    steps = run_steps(cfg.steps, cfg.tokens, tokens, workers)  # checks both; --tokens is kept as tokens
    kernels = resolve_kernels(cfg.kernels, device)
    optimizer = resolve_optimizer(cfg.optimizer, kernels.table is None)
    measured = None if cfg.from_run is None else load_measured(cfg.from_run, cfg.target_loss)
    if measured is not None:  # its runs' names: the plug-ins it was trained with register them
        load_recorded(cfg.from_run)
    source = None if cfg.strategies is not None else (
        "estimate's default strategies" if measured is None else f"the runs {measured.path} trained")
    given = None if cfg.strategies is None else list(cfg.strategies)
    if given is not None and measured is not None and cfg.transport is None:  # a bare name: as DIR trained it
        given = as_trained(measured, split_specs(given))
    runs = parse_runs(default_strategies(measured) if given is None else given, cfg.transport, source)
    if measured is not None:  # before anything is priced: a table of dashes answers nothing
        check_trained(measured, [(r.strategy, r.transport) for r in runs])
    check_never_read(cfg.options)  # first: "no run is one of them" would send the user to add one
    check_given(cfg.options, [r.strategy for r in runs])
    whole_run = cfg.steps is not None or cfg.tokens is not None or cfg.from_run is not None
    check_priced(cfg.options, [r.strategy for r in runs], whole_run)
    if cfg.tie != "zero" and not any("tie" in r.strategy_class.reads for r in runs):
        readers = ", ".join(name for name, cls in STRATEGIES.items() if "tie" in cls.reads)
        raise LionsimError(f"--tie {cfg.tie} applies to {readers} (the strategies that read it) and no run is one "
                           "of them")
    never = cfg.momentum_sync is not None and MomentumSync.parse(cfg.momentum_sync).mode == "never"
    if cfg.momentum_sync is not None and not never and not any(r.strategy_class.has_momentum_sync for r in runs):
        raise LionsimError(f"--momentum-sync {cfg.momentum_sync} applies to the Lion family (per-worker momentum) "
                           "and no run is one of them")
    # every:K is a steady step's (one sync over K steps, as a local-step strategy's exchange over H:
    # lionsim.estimate.table); a schedule's gaps grow over the run, so only a whole run prices it
    if cfg.momentum_sync is not None and not whole_run and MomentumSync.parse(cfg.momentum_sync).mode == "schedule":
        raise LionsimError(f"--momentum-sync {cfg.momentum_sync} syncs at gaps that grow over the run, so what it "
                           "adds to a step depends on the run's length: add --steps N, --tokens T or --from-run DIR "
                           "(every:K has a steady share: one sync over K steps)")
    if cfg.tensors is not None and shapes is not None:
        shaped = [r.strategy for r in runs if r.strategy_class.shape_dependent]
        if shaped:
            raise LionsimError(f"--tensors {cfg.tensors} prices the model as that many equal vectors, dropping "
                               f"--model {cfg.model}'s tensor shapes, and {', '.join(dict.fromkeys(shaped))} "
                               "compresses each tensor by its shape: drop --tensors")
    overlap = OverlapConfig(mode=cfg.overlap.lower() if isinstance(cfg.overlap, str) else cfg.overlap,
                            **({} if cfg.bucket_mb is None else {"bucket_mb": cfg.bucket_mb}))
    if cfg.bucket_mb is not None:
        check_buckets(overlap, runs)
    options = {k: v for k, v in cfg.options.items() if v is not None}
    if cfg.momentum_sync is not None:
        options["momentum_sync"] = cfg.momentum_sync
    if measured is not None:  # each run as DIR trained it, where the user gave no value (trained_options)
        options |= trained_options(measured.labels, measured.options, [(r.strategy, r.transport) for r in runs],
                                   options)
        if cfg.momentum_sync is None and measured.momentum_sync != "never":  # the sync its figures were trained with
            options["momentum_sync"] = measured.momentum_sync
    resolved = Resolved(
        model=name, params=params, tensors=tensors, tokens_per_worker=tokens, workers=workers, network=network,
        device=device, mfu=float(mfu), runs=runs, shapes=shapes if cfg.tensors is None else None,
        names=names if cfg.tensors is None else None,
        options=options,
        overlap=overlap, algorithm=algorithm,
        baseline=cfg.baseline, tie=cfg.tie, spread=spread, kernels=kernels, optimizer=optimizer,
        run_steps=steps if cfg.tokens is None else None, run_tokens=None if cfg.tokens is None else int(cfg.tokens),
        flops_per_unit=flops_per_unit, replica_gpus=replica_gpus, device_from=device_from,
        library_chosen=chosen,
        convergence=None if measured is None else Convergence(measured),
    )
    if algorithm != AUTO:
        check_library_algorithm(resolved.network, algorithm, cfg.algorithm)
        check_algorithm(resolved)
    check_reduce_rate(resolved, str(cfg.network))
    return resolved


def default_strategies(measured: Measured | None) -> list[str]:
    """What an estimate given no strategies prices: DEFAULT_STRATEGIES, or, with --from-run, the
    runs DIR trained as they were trained, its baseline first (so the speedups are against the run
    whose loss set the target): pricing others would leave every one without a measured figure."""
    if measured is None:
        return list(DEFAULT_STRATEGIES)
    return [measured.baseline, *(label for label in measured.labels if label != measured.baseline)]


def from_run_line(measured: Measured) -> str:
    """The line an estimate prints when it prices DIR's runs for want of -s."""
    runs = default_strategies(measured)
    return (f"no -s given: pricing the {len(runs)} runs {measured.path} trained, its baseline {measured.baseline} "
            f"first: {', '.join(runs)}")


def check_never_read(given: dict) -> None:
    """A strategy flag whose every option only the training arithmetic reads (estimate's --help hides
    it: defaults.hidden_in_help) is refused as check_priced refuses it, whatever the runs: were it
    checked against the runs first, "applies to diloco ... and no run is one of them" would send the
    user to add a run that then refuses it."""
    by_key = flags()
    for key, value in given.items():
        if value is None or "." in key or key not in by_key:
            continue  # --opt NAME.FIELD names its strategy: check_given and check_priced say it
        specs = by_key[key]
        specs[0].value(value)  # a bad value is refused in its one range first, as every command refuses it
        if hidden_in_help([s.rule for s in specs]):
            raise LionsimError(f"{specs[0].flag} {specs[0].rule.why}: estimate does not read it; bench does")


def check_priced(given: dict, run_strategies: list[str], whole_run: bool) -> None:
    """Every strategy option given (checked by check_given) acts on a priced step: one that only
    the training arithmetic reads (OptionRule.priced TRAINING) is refused, and one only a whole
    run prices (RUN) needs `whole_run` (--steps, --tokens or --from-run)."""
    by_key = flags()
    for key, value in given.items():
        if value is None:
            continue
        if "." in key:
            _, field, by_field = named_specs(key)
            specs, shown = [by_field[field]], f"--opt {key}={value}"
        else:
            specs, shown = [s for s in by_key[key] if s.strategy in run_strategies], f"{by_key[key][0].flag} {value}"
        priced = {s.rule.priced for s in specs}
        if estimate_reads(priced, whole_run):
            continue
        if RUN in priced:
            raise LionsimError(f"{shown} acts on the first steps of a run, which the steady step leaves out: add "
                               "--steps N, --tokens T or --from-run DIR to price a whole run")
        raise LionsimError(f"{shown.split()[0] if '.' not in key else shown} {specs[0].rule.why}: estimate does "
                           "not read it; bench does")


def check_seed_acts(seed: int | None, spread: ComputeSpread | None, workers: int) -> None:
    """--seed draws the Monte Carlo of several --compute-spread specs; refused where nothing is drawn,
    unless it is the default (0): a script or config that always states it changes nothing."""
    if seed is None or seed == 0:
        return
    if spread is None:
        raise LionsimError(f"--seed {seed} seeds --compute-spread's draws: give --compute-spread SPEC (two or more "
                           "for a seeded Monte Carlo) with it, or drop --seed")
    if max_distribution(spread, workers).method == "exact":
        raise LionsimError(f"--seed {seed}: --compute-spread {spread.describe()} has an exact distribution of the "
                           "slowest worker, which draws nothing; the seed acts on two or more specs (a Monte Carlo): "
                           "drop --seed or add a spec")


def check_buckets(overlap: OverlapConfig, runs: list[RunSpec]) -> None:
    """--bucket-mb sizes the buckets of a run exchanged per bucket; refused where no run is."""
    from lionsim.transports import TRANSPORTS

    if any(overlap.label(TRANSPORTS.get(r.transport)(), r.strategy_class) == PER_BUCKET for r in runs):
        return
    labels = ", ".join(r.label for r in runs)
    if overlap.mode == "auto":  # each run as its reference runs it, where its transport can: here after backward
        why, other = f"{labels}: each exchanges after backward; `lionsim strategies` lists each run's overlap", ""
    else:
        why, other = labels, " (or auto, where a run's reference exchanges per bucket)"
    raise LionsimError(f"--bucket-mb {overlap.bucket_mb:g} sizes the buckets of a run exchanged per bucket in "
                       f"backward, and under --overlap {overlap.mode} none of these runs is ({why}): give "
                       f"--overlap buckets{other}, or drop --bucket-mb")


def check_one_worker_buckets(bucket_mb: float | None, workers: int, swept_workers: bool) -> None:
    """--bucket-mb with one worker and no sweep over workers is refused, as bench refuses it: one
    worker exchanges nothing, so no bucket it sizes is ever sent."""
    if bucket_mb is not None and workers == 1 and not swept_workers:
        raise LionsimError(f"--bucket-mb {bucket_mb:g} sizes per-bucket exchanges and 1 worker exchanges nothing: "
                           "give --workers 2 or more (or --sweep workers=...), or drop --bucket-mb")


def counted_model(text: str) -> tuple[str, Count]:
    """(canonical spec, count) of `--model FILE.py:FUNC` or `module:FUNC`, built on the meta device."""
    spec = parse_spec(text, "--model")
    return spec.text, count_on_meta(load_function(spec, "--model"), f"--model {spec.text}")
