"""Option declarations shared by commands (one place for names, defaults and help).

Names are taken in any case: the callbacks below turn `-w MLP`, `--backend SIM`, `--tie Zero`
into the registered spelling before a command sees them (strategies, transports and network
presets are matched ignoring case where they are looked up: lionsim.runs, lionsim.registry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.config.defaults import DEFAULT_STRATEGIES
from lionsim.errors import LionsimError
from lionsim.cli.one_value import sweep_one_value
from lionsim.registry import did_you_mean, match_name
from lionsim.tie_rules import TIE_RULES
from lionsim import whole
from lionsim.whole import read_whole


def _workload(value: str | None) -> str | None:
    """FILE.py:FUNC with the file made absolute (it must exist); a name as given: the command's
    configuration puts it in its listed spelling, or refuses it, with the registry, which imports
    torch (lionsim.config.bench: after the checks that need none)."""
    from lionsim.plugin_load import is_spec, parse_spec

    return parse_spec(value, "--workload").text if value is not None and is_spec(value) else value


def _choice(option: str, choices: tuple[str, ...]):
    """A callback: `value` in its listed spelling (any case), else one line with the nearest."""
    def check(value: str | None) -> str | None:
        if value is None:
            return None
        found = match_name(value, choices)
        if found is None and "," in value and sweep_one_value(option):  # a list, as the sweep's axes take
            raise LionsimError(f"bad {option} {value!r}: {option} takes one value; accepted: {', '.join(choices)}"
                               f"{sweep_one_value(option)}")
        if found is None:
            raise LionsimError(f"bad {option} {value!r}; accepted: {', '.join(choices)}{did_you_mean(value, choices)}")
        return found
    return check


class NotWhole(typer.BadParameter):
    """A whole-number option's value that is not one: its text and why, for the CLI's one line
    (lionsim.cli.refusals.bad_parameter: "bad --workers 2.5: not a whole number; accepted: ...");
    `accepted`: the option's range in words where its parser knows it (whole_in), else None."""

    def __init__(self, text: str, why: str, accepted: str | None = None):
        super().__init__(f"{why}: {text}")
        self.text, self.why, self.accepted = text, why, accepted


def whole_number(text: str | int, read=read_whole) -> int:
    """A whole-number option's value (lionsim.whole.read_whole: 1000, 1e3 or 2.5e3, exactly, keeping its
    text for refusals to echo; `read`: read_count for a count that also takes 350M); refused in one
    line where it is not whole (1.5) or not finite."""
    try:
        return read(text)
    except whole.NotWhole as e:
        raise NotWhole(str(text).strip(), e.why) from None


def whole_in(accepted: str, read=read_whole):
    """whole_number for an option whose range is `accepted` (lionsim.ranges' words): a value that is
    no whole number is refused with the range a whole one out of it gets (`--params 1.5.3` as `--params
    0`), not only the form a whole number takes."""
    def parse(text: str | int) -> int:
        try:
            return whole_number(text, read)
        except NotWhole as e:
            raise NotWhole(e.text, e.why, accepted) from None

    return parse


def _lower(value: str | None) -> str | None:
    """Forms whose keywords are lower case (`IID`, `Dirichlet:0.5`)."""
    return value.strip().lower() if isinstance(value, str) else value

Workers = Annotated[int, typer.Option("--workers", "-n", parser=whole_number, help="Data-parallel workers N.")]
Strategy = Annotated[Optional[list[str]], typer.Option(
    "--strategy", "-s", help="NAME or NAME@TRANSPORT, any case; repeatable or comma-separated (adamw,lion) "
                             "(see `lionsim strategies`). Default: " + ", ".join(DEFAULT_STRATEGIES) + ".")]
Transport = Annotated[Optional[str], typer.Option(
    "--transport", help="Transport for every strategy given without one that can use it (the others keep "
                        "their default); an error if it applies to no run (none of those can use it, or every "
                        "strategy names its own).")]
Network = Annotated[str, typer.Option("--network", help="Network preset (`lionsim networks`) or a profile .toml/.json.")]
Traits = Annotated[Optional[str], typer.Option(
    "--traits", callback=_choice("--traits", ("ideal", "gloo", "nccl", "mpi")),
    help="The collective library the network model assumes on top of the links: ideal (the alpha-beta formulas, "
         "the cheapest plan), gloo (measured here, a flat ring), nccl (NCCL's tuning model: its ring, tree or "
         "NVLS Tree per call) or mpi (MPI on host memory: the cheapest plan, every GPU buffer copied to the host and back). "
         "Default: the network's own (nccl in the GPU-cluster presets, ideal in the flat ones, a profile's "
         "traits key); a profile without one runs NCCL on a GPU (estimate, bench --compute GPU, comm on GPU nodes: "
         "a device stated, NVLink inside nodes or --gpus-per-node given), else the backend's (ideal on sim).")]
Iface = Annotated[Optional[str], typer.Option(
    "--iface", help="gloo/nccl across hosts: the network interface the ranks talk over (sets GLOO_SOCKET_IFNAME and "
                    "NCCL_SOCKET_IFNAME).")]
Backend = Annotated[str, typer.Option("--backend", callback=_choice("--backend", ("sim", "gloo", "nccl")), help="Where collectives run: sim (one process, modelled), gloo or nccl (real processes, measured).")]
Workload = Annotated[str, typer.Option("--workload", "-w", callback=_workload, help="Workload (`lionsim workloads`), "
                                      "or your own: FILE.py:FUNC or package.module:FUNC returning (model, dataset, loss_fn).")]
ModelSize = Annotated[str, typer.Option("--model-size", callback=_choice("--model-size", ("tiny", "small", "paper")), help="Workload model size: tiny | small | paper.")]
Steps = Annotated[int, typer.Option("--steps", parser=whole_number, help="Training steps per strategy.")]
Seed = Annotated[int, typer.Option("--seed", parser=whole_number, help="Seed for init, data, splits and quantizers.")]
BatchSize = Annotated[int, typer.Option("--batch-size", "-b", parser=whole_number, help="Samples per worker per step.")]
Lr = Annotated[Optional[float], typer.Option("--lr", help="Learning rate for every strategy (default: each strategy's own).")]
WeightDecay = Annotated[Optional[float], typer.Option("--weight-decay", help="Weight decay for every strategy (default: each strategy's own).")]
Betas = Annotated[Optional[str], typer.Option("--betas", help="beta1,beta2 for every strategy, e.g. 0.95,0.98 (default: each strategy's own).")]
MomentumSync = Annotated[str, typer.Option(
    "--momentum-sync", help="never | every:K | schedule:K, for every run with per-worker momentum (the Lion family; "
                            "the others are unaffected); an error only if no run has it. An fp32 average of the "
                            "momenta after steps K, 2K, ... (every:K), or after gaps of round(2^(j/K)) steps, "
                            "j = 0, 1, ..., doubling every K syncs (schedule:5: steps 1, 2, 3, 5, 7, 9, 11, 14, ...).")]
SyncTensors = Annotated[str, typer.Option(
    "--sync-tensors", help="Tensors a momentum sync averages: all | min-numel:N (at least N parameters) | "
                           "GLOB[,GLOB] (fnmatch patterns on tensor names); only their bytes are sent.")]
Tie = Annotated[str, typer.Option(
    "--tie", callback=_choice("--tie", TIE_RULES), help="dlion-mavo tie rule: zero (sign(0) = 0, the paper's) | alternate (+1/-1 step by step) | "
                  "random (a coin seeded by --seed and the step); a rule that moves ties needs 1 bit down at any N.")]
EstimateTie = Annotated[str, typer.Option(
    "--tie", callback=_choice("--tie", TIE_RULES),
    help="dlion-mavo tie rule priced: zero (sign(0) = 0: a tie stays, so an even N needs 2 bits down) | alternate "
         "| random (ties move: 1 bit down at any N).")]
Data = Annotated[Optional[Path], typer.Option("--data", help="CIFAR-10 python dir (vit) or text file (gpt); default: generated data.")]
DataSplit = Annotated[str, typer.Option("--data-split", callback=_lower, help="iid | dirichlet:ALPHA (label skew).")]
Baseline = Annotated[Optional[str], typer.Option("--baseline", help="Run that speedups are against: STRATEGY@TRANSPORT, or a STRATEGY "
                                                                   "only one run has (default: the first).")]
def _load_plugins(values: list[str] | None) -> list[str] | None:
    """--plugin: import each file now (lionsim.plugins), so what it registers is known to the command."""
    from lionsim.plugins import load_plugins

    load_plugins(values or [])
    return values


Plugin = Annotated[Optional[list[str]], typer.Option(
    "--plugin", metavar="FILE.py", callback=_load_plugins, is_eager=True,
    help="A Python file defining strategies or transports (their @STRATEGIES.register / @TRANSPORTS.register "
         "classes), repeatable; installed packages register through the entry points lionsim.strategies and "
         "lionsim.transports.")]
Config = Annotated[Optional[Path], typer.Option("--config", help="TOML file (or a run.json lionsim wrote) giving any option; flags win.")]

_EVAL_SAMPLES_HELP = ("Held-out samples each evaluation scores: N, or all (a CIFAR-10 test set's every image, gpt's every "
                     "non-overlapping held-out window); default 1024 (fewer if the test set holds fewer). At "
                     "most what the workload holds out: generated data holds out as many samples as it trains on "
                     "(gpt: its held-out text's distinct windows), or 1024 where that is fewer. "
                     "run.json says how many were used.")
EvalEvery = Annotated[int, typer.Option("--eval-every", parser=whole_number, help="Evaluate every this many steps.")]
EvalSamples = Annotated[Optional[str], typer.Option("--eval-samples", metavar="N|all", help=_EVAL_SAMPLES_HELP)]
OVERLAP_HELP = ("auto: each strategy's exchange as its reference implementation runs it (per bucket during "
                "backward, or after it) where its transport can, else after backward; buckets: per bucket "
                "wherever the transport can; tensors: per parameter tensor wherever the transport can, every "
                "codec kernel launched once per tensor (GRACE's per-tensor compressors); none (or after): everything "
                "after backward (a framework without overlap). Per bucket, each bucket's exchange pays a call's "
                "latency and runs at a mid-size call's share of the link, so comm can exceed one exchange after "
                "backward; backward hides part of it, so exposed is often less, but not always (a fast network "
                "moves one large call at a far better rate than many buckets). "
                "`lionsim strategies --format csv` lists what auto runs for each strategy and transport.")
Overlap = Annotated[str, typer.Option("--overlap", help=OVERLAP_HELP)]
WarmupSteps = Annotated[Optional[int], typer.Option(
    "--warmup-steps", parser=whole_number, help="Leading steps of each run left out of the timing medians (default 3, fewer in a shorter "
                           "run; fewer than --steps). Measured times only: gloo/nccl, or --compute measured "
                           "(refused on sim with a --compute device, which models every time).")]
HYPER_HELP = ("Per-run hyperparameters, a JSON object: each key a run (NAME@TRANSPORT) or a strategy's name, "
              "each value an object of lr, weight_decay and betas ([b1, b2]), e.g. "
              "'{\"lion\": {\"lr\": 0.0003}, \"adamw@bf16-allreduce\": {\"weight_decay\": 0}}'. A run's own "
              "values win over --lr, --weight-decay and --betas, and a table under its run name over one under "
              "its strategy's. A config file gives it as tables: [hyper.\"lion@fp32-allreduce\"] "
              "lr = 0.0003. run.json records every run's resolved values so.")
Hyper = Annotated[Optional[str], typer.Option("--hyper", metavar="JSON", help=HYPER_HELP)]
ComputeSpread = Annotated[Optional[list[str]], typer.Option(
    "--compute-spread", metavar="SPEC",
    help="Uneven workers, repeatable (the factors multiply each worker's compute per step, seeded by --seed): "
         "lognormal:SIGMA (jitter, median 1; SIGMA 0 to 3) | slow:K:FACTOR (K persistent slow workers, compute x "
         "FACTOR, 1 to 1,000) | episodes:P:FACTOR:STEPS (fail-slow episodes, FACTOR as slow's) | trace:FILE.csv "
         "(columns step,worker,compute_s). "
         "A step waits for the slowest worker.")]
Overwrite = Annotated[bool, typer.Option(
    "--overwrite", help="--out may hold a previous run (or estimate, comm table): its files are replaced only when the new "
                        "run completes (a bench stopped first keeps its steps in --out/.rerun, which --resume "
                        "continues). Never a sweep root (--overwrite-sweep), never files lionsim did not write.")]
OverwriteSweep = Annotated[bool, typer.Option(
    "--overwrite-sweep", help="Like --overwrite, and --out may be a sweep root: its cells and files are cleared too.")]
