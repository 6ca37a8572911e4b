"""The column contract of a run's records: names, order, kinds, and the check that enforces it.
No pandas at import (check_columns imports it): the commands' plain checks read these names
before anything heavy loads (lionsim.estimate.plain)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lionsim.errors import LionsimError
from lionsim.numbers import plural
from lionsim.plugin_load import Spec, is_spec

if TYPE_CHECKING:
    import pandas as pd

# One row per (strategy, transport, step); this is also the column order of steps.csv.
STEP_COLUMNS: list[str] = [
    "strategy",
    "transport",
    "workers",
    "network",
    "backend",
    "workload",
    "seed",
    "step",  # 1-based
    "loss",  # mean training loss over workers this step
    "compute_s",
    "encode_s",
    "comm_s",
    "decode_s",
    "update_s",
    "step_s",  # as modelled: may be less than the sum of the parts where overlap is modelled
    "sim_time_s",  # cumulative modelled wall clock
    "wire_bytes",  # bytes one worker sends this step
    "bits_per_param_up",
    "bits_per_param_down",
    "params",
    "eval_loss",  # NaN on steps without evaluation
    "eval_acc",  # the workload's metric (accuracy: a fraction in [0, 1]; steps.csv's eval_metric names it);
    # NaN on steps without evaluation; may be NaN throughout
]

EXTRA_STEP_COLUMNS: list[str] = ["comm_exposed_s", "comm_model_s", "comm_model_p10_s", "comm_model_p90_s",
                                 "comm_measured_s", "barrier_wait_s", "calls", "ranks", "diverged_at_step",
                                 "compute_median_s", "compute_max_s", "wait_s", "vote_agreement", "synced",
                                 "aggregate_rel_error", "eval_metric", "eval_higher_is_better"]
"""Written after the contract columns of steps.csv. `synced`: 1 where the step exchanged what the
strategy sends (every step, but for localsgd/diloco every --local-steps-th only), 0 on a local step.
`aggregate_rel_error`: a lossy float transport's (bf16-allreduce, fp8-*) error against the exact
mean, ||aggregate - mean|| / ||mean||, on the simulator; NaN elsewhere (lionsim.transports.error).
`eval_metric`, `eval_higher_is_better`: what eval_acc holds and its direction (1: higher is better),
the workload's (Workload.metric_name, higher_is_better: "accuracy", 1 for the built-ins)."""

# Columns read back as text whatever they look like (a network named "10" stays "10").
TEXT_COLUMNS: list[str] = ["strategy", "transport", "network", "backend", "workload", "cell", "eval_metric"]

# The per-step time components, in the order they happen and are stacked in plots.
TIME_COLUMNS: list[str] = ["compute_s", "encode_s", "comm_s", "decode_s", "update_s"]

# Columns that describe a run rather than a step: constant within one (strategy, transport).
RUN_CONSTANT_COLUMNS: list[str] = ["workers", "network", "backend", "workload", "seed", "params"]

# What summary.csv must hold for `load_run` to accept it.
SUMMARY_REQUIRED: list[str] = [
    "strategy",
    "transport",
    "workers",
    "network",
    "steps",
    "final_loss",
    "best_loss",
    "final_eval_loss",
    "final_eval_acc",
    "best_eval_acc",
    *TIME_COLUMNS,
    "step_s",
    "sim_time_s",
    "wire_bytes",
    "bits_per_param_up",
    "bits_per_param_down",
    "speedup",
    "time_to_target_speedup",
]


def run_label(strategy: str, transport: str) -> str:
    """How a run is named in plots, tables and `--baseline`: "strategy@transport"."""
    return f"{strategy}@{transport}"


ROUND_STEPS = "round_steps"
"""estimate.csv's H of a run: the inner steps of a local-step strategy's round (its --local-steps;
Streaming DiLoCo's H, where `local_steps` is its H / P between sends), 1 for the others."""


def strategy_text(strategy: str, h: int = 1, star: bool = False) -> str:
    """How estimate names a run's strategy wherever it names the run (tables, plots, legends):
    * for the baseline where asked, and H where it has local steps (`diloco H=100`), so a table or
    plot read on its own says which H it priced."""
    return f"{strategy}{'*' if star else ''}" + (f" H={int(h)}" if h == h and h > 1 else "")


def rounds_of(frame: pd.DataFrame) -> dict[str, int]:
    """run_label -> its H (ROUND_STEPS) for each run of an estimate's frame (estimate.csv, sweep.csv);
    empty for a CSV written before the column (each run then named without H)."""
    if ROUND_STEPS not in frame.columns:
        return {}
    return {run_label(s, t): int(h) for s, t, h in zip(frame["strategy"], frame["transport"], frame[ROUND_STEPS])
            if h == h}


def recorded_rounds(runs) -> dict[str, int]:
    """run_label -> its H for each run a bench's run.json records (`runs`: each run's resolved
    options; a local-step strategy's carry local_steps, its H), so a report names it as estimate does."""
    out = {}
    for run in runs or []:
        options = run.get("options") if isinstance(run, dict) else None
        h = options.get("local_steps") if isinstance(options, dict) else None
        if isinstance(h, int) and not isinstance(h, bool) and h > 1:
            out[run_label(run.get("strategy"), run.get("transport"))] = h
    return out


def run_name(strategy: str, transport: str, rounds: dict[str, int] | None = None, star: bool = False) -> str:
    """An estimate's run on one line, "diloco H=100@fp32-allreduce" (strategy_text, H from `rounds`:
    rounds_of), as its plots' legends and report.md name it."""
    h = (rounds or {}).get(run_label(strategy, transport), 1)
    return f"{strategy_text(strategy, h, star)}@{transport}"


def label_name(label: str, rounds: dict[str, int] | None = None) -> str:
    """A run_label ("diloco@fp32-allreduce") named as run_name names it ("diloco H=5@fp32-allreduce");
    anything without '@' as it is."""
    strategy, at, transport = str(label).partition("@")
    return run_name(strategy, transport, rounds) if at else str(label)


def check_columns(df: pd.DataFrame, required: list[str], source: str) -> None:
    """Fail with one line naming every missing column, and every non-numeric numeric one."""
    import pandas as pd

    missing = [c for c in required if c not in df.columns]
    if missing:
        raise LionsimError(f"{source} is missing column(s): {', '.join(missing)}; required: {', '.join(required)}")
    not_numeric = [c for c in required if c not in TEXT_COLUMNS and not pd.api.types.is_numeric_dtype(df[c])]
    if not_numeric:
        col = not_numeric[0]
        numbers = pd.to_numeric(df[col], errors="coerce")
        bad = df[col][numbers.isna() & df[col].notna()]
        row, value = (bad.index[0], bad.iloc[0]) if len(bad) else (None, None)
        where = f" (first: {value!r} in data row {row + 1})" if row is not None else ""
        if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise LionsimError(f"{source} has a value that is not a finite number in column {col}{where}; "
                               "a lionsim CSV writes a missing value as an empty cell")
        raise LionsimError(f"{source} has non-numeric values in column(s): {', '.join(not_numeric)}{where}")


ESTIMATE_SWEEP_VARIABLES = ("workers", "bandwidth")
"""What `lionsim estimate --sweep` sweeps: crossover.csv's `variable`."""


def sweep_heading(variable: str) -> str:
    """The swept column's heading in every table of an estimate sweep (step time, speedup, bytes,
    time to target, crossovers): what it is and its unit, as the plots' x axis names it."""
    return "inter-node bandwidth (GB/s)" if variable == "bandwidth" else variable


def model_name(row) -> str:
    """estimate.csv's model of a row in a title: the preset's name, or "3,000,000,000 params" when
    sized by --params (whose model column says "params")."""
    return f"{int(row['params']):,} params" if row["model"] == "params" else str(row["model"])


def model_text(row) -> str:
    """estimate.csv's model of a row as text: "transformer-3b (2,651,553,280 params)", or
    "3,000,000,000 params" when sized by --params."""
    count = f"{int(row['params']):,} params"
    return count if row["model"] == "params" else f"{row['model']} ({count})"


DEFAULT_LR = "default"
"""An --lr item that means each strategy's own lr (--lr not given): the value None."""


def lr_text(lr: float | None) -> str:
    """An lr as every cell id, table, report and plot writes it: the shortest text that reads back
    as the same float (0.001, 3e-05; two close lrs never print alike, as :g's 6 digits would), or
    `default`."""
    return DEFAULT_LR if lr is None else repr(float(lr))


def workload_text(workload) -> str:
    """A workload as every table and plot title and a sweep's cell names name it: a FILE.py:FUNC or
    module:FUNC plug-in by the file's stem (or the module) and the function ("cnn_workload.make":
    the path, absolute in the CSVs, would run off a plot's edge and wrap a table's title, and a
    cell's folder name holds no '/' or ':'), a built-in or installed plug-in by its name. The one
    spelling, so a run's table, its plots and its sweep's cells name a workload alike."""
    name = str(workload)
    if not is_spec(name):
        return name
    target, _, function = name.rpartition(":")
    return Spec(target.replace(chr(92), "/"), function).stem  # a Windows path's folders too


def per_worker_text(row) -> str:
    """estimate.csv's work per worker and step in its unit: "1,024 tokens/worker", "1 sample/worker"
    (an estimate.csv written before samples_per_worker held a counted model's samples in
    tokens_per_worker)."""
    unit = row.get("unit", "tokens") if isinstance(row.get("unit", "tokens"), str) else "tokens"
    count = row.get(f"{unit}_per_worker")
    if count is None or count != count:  # absent or empty
        count = row.get("tokens_per_worker")
    count = int(count)
    return f"{plural(format(count, ','), unit.removesuffix('s'))}/worker"


ACCURACY = "accuracy"
"""The metric built-in workloads report as eval_acc (a fraction, shown as a percentage)."""


def topology(row) -> str:
    """Nodes and workers a node, in words: "16 nodes x 1 GPU", "2 nodes x 8 GPUs" (a worker of G devices,
    --replica-gpus, is counted as a worker)."""
    workers = int(row["workers"])
    each = min(int(row["gpus_per_node"]), workers)
    nodes = workers // each
    unit = "GPU" if int(row.get("replica_gpus", 1) or 1) == 1 else "worker"
    return f"{plural(format(nodes, ','), 'node')} x {plural(each, unit)}"


def library_text(row) -> str:
    """The library that priced comm, as estimate's title says it: "nccl over sockets", "ideal"; ""
    for a CSV written before estimate.csv's library column."""
    library, fabric = row.get("library", ""), row.get("fabric", "")
    if not isinstance(library, str) or not library:
        return ""
    return f"{library} over {fabric}" if isinstance(fabric, str) and fabric else library


def shows_across(frame: pd.DataFrame) -> bool:
    """Whether estimate's table and report show `across` (inter_bytes): wherever a node of the
    network has several GPUs, so the column does not come and go with the plan (a ring's hop out
    of the node carries what a GPU sends, so there it equals `sent`); on a flat network a node is
    a worker and it would repeat `sent`."""
    return "inter_bytes" in frame.columns and "gpus_per_node" in frame.columns and bool(
        (frame["gpus_per_node"] > 1).any())


def eval_metric(frame: pd.DataFrame) -> tuple[str, bool]:
    """(name, higher_is_better) of the metric in eval_acc of a steps or summary frame (one
    workload's): its eval_metric and eval_higher_is_better columns, or accuracy, higher is
    better, for files written before they existed."""
    if "eval_metric" not in frame.columns or frame["eval_metric"].isna().all():
        return ACCURACY, True
    name = str(frame["eval_metric"].dropna().iloc[0])
    higher = frame["eval_higher_is_better"].dropna() if "eval_higher_is_better" in frame.columns else []
    return name, bool(higher.iloc[0]) if len(higher) else True


def metric_value(value: float, name: str) -> str:
    """eval_acc as tables show it: accuracy as a percentage (58.7%), any other metric as a number."""
    if value is None or value != value:
        return "-"
    return f"{value * 100.0:.1f}%" if name == ACCURACY else f"{value:.4g}"


def metric_axis(name: str, higher_is_better: bool = True) -> tuple[str, float]:
    """(axis label, factor) of eval_acc in a plot: accuracy in %, any other metric as it is,
    with its direction."""
    if name == ACCURACY and higher_is_better:
        return "eval accuracy (%)", 100.0
    return f"eval {name} ({'higher' if higher_is_better else 'lower'} is better)", 1.0

NETWORK_GBPS = "network_GBps"
"""sweep.csv's last column: the given network's inter link, effective GB/s (its efficiency folded in,
as a bandwidth sweep's values are), whatever the row's sweep value: where the plots mark the
network the user named on a bandwidth axis."""


def off_sim(steps) -> bool:
    """Whether some row of a steps or summary table ran on a real backend (gloo, nccl), not the
    simulator: its link was the one its ranks crossed, not the network it priced."""
    return "backend" in steps.columns and bool((steps["backend"] != "sim").any())
