"""Docs blocks of the methods of 2025 that need no run: each default beside its authors' (lionsim's
value read from the strategy registry, so the table follows the code), and what one Streaming
DiLoCo send costs for a fragment of n values once its blocks are padded (priced by the
transports' own plans)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.errors import LionsimError


@dataclass(frozen=True, slots=True)
class Default:
    """One default of one method beside its authors'."""

    strategy: str
    key: str
    """lr, weight_decay, betas, an Options field, or a FIXED entry (a value no option sets)."""
    authors: str
    source: str
    """Where the authors' value is written: repository and file."""
    why: str = "the same"
    """Why lionsim's differs (or "the same")."""


MUON_PY = "KellerJordan/Muon muon.py"
DION_TRAIN = "microsoft/dion train.py"
DION_160M = "microsoft/dion configs/dion_160m.yaml"
MULOCO_CONFIG = "facebookresearch/MuLoCo config/diloco/2x_4gpu_muloco_quantized_outer.py"
TORCHFT = "meta-pytorch/torchft torchft/local_sgd.py"
SPARSELOCO = "tplr-ai/SparseLoCo train.py (its hparams)"
SHORT_RUNS = ("measured on the default vit bench (100 steps), where the paper's long rounds sync too seldom "
              "(the module's tuning comment)")
ONE_ADAMW = "lionsim has one AdamW (lionsim.optim.functional.adamw_update_) for every strategy"

DEFAULTS = (
    Default("muon", "lr", "0.02", MUON_PY),
    Default("muon", "weight_decay", "0", MUON_PY),
    Default("muon", "momentum", "0.95", MUON_PY),
    Default("muon", "ns_steps", "5", MUON_PY),
    Default("muon", "precision", "bf16", MUON_PY),
    Default("muon", "adamw_lr", "3e-4", MUON_PY + " (MuonWithAuxAdam)",
            "lionsim's AdamW lr on its small 100-step workloads (adamw's own default)"),
    Default("muon", "betas", "(0.9, 0.95)", MUON_PY + " (MuonWithAuxAdam)"),
    Default("muon", "adamw eps", "1e-10", MUON_PY + " (MuonWithAuxAdam)",
            ONE_ADAMW + "; the two differ only where a gradient's RMS is below about 1e-8"),
    Default("dion", "lr", "0.02", DION_160M),
    Default("dion", "weight_decay", "0.01 (matrices; 0 on the embedding and head)", DION_TRAIN,
            "one weight decay per strategy: lionsim's AdamW tensors (vectors, embedding, head) take it too"),
    Default("dion", "rank_fraction", "0.125", DION_TRAIN + " (Hyperparameters)",
            "vit's 64-wide matrices: 0.25 gave loss 0.359 / 87.2% (0.125: 0.526 / 84.8%)"),
    Default("dion", "mu", "0.95", DION_160M),
    Default("dion", "adamw_lr", "lr (0.02) on the embedding, lr / sqrt(d) on the head", DION_TRAIN,
            "one lr for every AdamW tensor (lionsim's AdamW default); per-group scaling is not modelled"),
    Default("dion", "betas", "(0.95, 0.98)", DION_TRAIN,
            "muon.py's AdamW betas, kept: on vit (0.95, 0.98) gave loss 0.396 / 89.9% against 0.359 / 87.2% "
            "(one seed: a lower loss, a higher accuracy)"),
    Default("muloco", "lr", "0.0224", MULOCO_CONFIG, "rounded; measured on vit at 0.02"),
    Default("muloco", "weight_decay", "1e-4", MULOCO_CONFIG,
            "the class default of MuLoCo's Muon (0.01); on vit 1e-4 gave loss 0.546 / 86.3% against 0.520 / 85.6%"),
    Default("muloco", "betas", "(0.9, 0.99)", MULOCO_CONFIG),
    Default("muloco", "inner_momentum", "0.9", MULOCO_CONFIG),
    Default("muloco", "local_steps", "30", MULOCO_CONFIG + " (sync_steps)", SHORT_RUNS),
    Default("muloco", "outer_lr", "0.8", MULOCO_CONFIG, SHORT_RUNS),
    Default("muloco", "outer_momentum", "0.9 (Nesterov)", MULOCO_CONFIG, SHORT_RUNS),
    Default("muloco", "error_decay", "0.9", MULOCO_CONFIG),
    Default("muloco", "precision", "bf16", "facebookresearch/MuLoCo torchtitan/experiments/dion_optimizer/muon.py"),
    Default("sparseloco", "betas", "(0.9, 0.95)", SPARSELOCO,
            "lionsim's AdamW, kept: on vit (0.9, 0.95) with weight decay 0.1 gave loss 1.148 / 56.3% against "
            "0.872 / 70.5%"),
    Default("sparseloco", "weight_decay", "0.1", SPARSELOCO, "as betas"),
    Default("sparseloco", "gradient clipping", "1.0 (global norm)", SPARSELOCO,
            "lionsim clips no strategy's gradients: the inner steps take them as the workload gives them"),
    Default("sparseloco", "local_steps", "15 to 30", SPARSELOCO, SHORT_RUNS),
    Default("sparseloco", "outer_lr", "1", SPARSELOCO),
    Default("sparseloco", "outer_momentum", "0 (error feedback instead)", SPARSELOCO),
    Default("sparseloco", "inner_optimizer", "AdamW", SPARSELOCO),
    Default("sparseloco", "topk", "32", SPARSELOCO),
    Default("sparseloco", "chunk", "64", SPARSELOCO),
    Default("sparseloco", "bits", "2", SPARSELOCO),
    Default("sparseloco", "error_decay", "0.95", SPARSELOCO),
    Default("streaming-diloco", "local_steps", "100 (the paper)", "arXiv 2501.18512", SHORT_RUNS),
    Default("streaming-diloco", "inner_optimizer", "AdamW (the paper)", "arXiv 2501.18512"),
    Default("streaming-diloco", "fragments", "the user's (torchtitan: whole layers, about equal)",
            TORCHFT, "runs of consecutive tensors, the largest as small as tensor boundaries allow"),
    Default("streaming-diloco", "pattern", "strided (the paper's Figure 2 and its choice)", "arXiv 2501.18512",
            "sequential kept: the vit and gpt figures above were measured with it; strided prices the paper's "
            "simulation (its sends overlap more of backward)"),
    Default("streaming-diloco", "delay", "0 (fragment_sync_delay)", TORCHFT),
    Default("streaming-diloco", "alpha", "0.0 (fragment_update_alpha; the paper: 0.5)", TORCHFT,
            "the paper's 0.5; on vit alpha 0 gave 0.869 / 66.1% against 0.901 / 75.4%"),
    Default("streaming-diloco", "outer_lr", "0.7 (the paper)", "arXiv 2501.18512", SHORT_RUNS),
    Default("streaming-diloco", "outer_momentum", "0.9 (the paper)", "arXiv 2501.18512", SHORT_RUNS),
)
"""Each method's defaults beside its authors' (muon-dist shares muon's)."""


def _adamw_eps() -> float:
    from lionsim.optim.functional import adamw_update_

    return inspect.signature(adamw_update_).parameters["eps"].default


FIXED = {"adamw eps": lambda: f"{_adamw_eps():g}", "gradient clipping": lambda: "none"}
"""Values no option sets: what lionsim does, read from the code where it is a number."""


def _text(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    return f"{value:g}".replace("e-0", "e-") if isinstance(value, float) else str(value)


def lionsim_value(d: Default) -> tuple[str, str]:
    """(the option as a user gives it, lionsim's default with the workloads' tuned values where they differ)."""
    from lionsim.strategies import STRATEGIES
    from lionsim.strategies.core.form import option_specs

    cls = STRATEGIES.get(d.strategy)
    if d.key in FIXED:
        return d.key, FIXED[d.key]()
    if d.key in ("lr", "weight_decay", "betas"):
        label = "--" + d.key.replace("_", "-")
        default = getattr(cls.defaults, d.key)
        tuned = {w: getattr(cls.defaults_for(w), d.key) for w in cls.tuning}
    else:
        spec = next((s for s in option_specs(d.strategy, cls.Options) if s.field == d.key), None)
        if spec is None:
            raise LionsimError(f"methods-2025-defaults: {d.strategy} has no option {d.key}")
        label, default = spec.flag, spec.default
        tuned = {w: values[d.key] for w, values in cls.tuning.items() if d.key in values}
    others = {w: v for w, v in tuned.items() if v != default}
    where = ", ".join(others)
    if others and len(set(others.values())) == 1:
        return label, f"{_text(default)} ({where}: {_text(next(iter(others.values())))})"
    return label, _text(default) + "".join(f" ({w}: {_text(v)})" for w, v in others.items())


def defaults_table() -> str:
    rows = ["| method | option | lionsim | authors' | from | why they differ |", "|---|---|---|---|---|---|"]
    for d in DEFAULTS:
        label, ours = lionsim_value(d)
        rows.append(f"| {d.strategy} | `{label}` | {ours} | {d.authors} | {d.source} | {d.why} |")
    return "\n" + "\n".join(rows) + "\n\n"


PADDING_SIZES = (116, 400, 4096, 34_314, 4096 * 4096)
PADDING_WORKERS = (4, 8)


def padding_table() -> str:
    """One send of a fragment of n values over fp4-allreduce and fp8-allreduce: the blocks of 256
    values (padded to a multiple of N), the bytes each worker sends, and per value."""
    from lionsim.network.presets import NETWORKS
    from lionsim.steptime.timeline import price_calls
    from lionsim.transports import TRANSPORTS, PayloadSpec
    from lionsim.transports.minifloat_allreduce import blocks

    network = NETWORKS.get("1gbe")
    rows = ["| fragment (values) | N | blocks of 256 | fp4: sent per worker | bits a value | fp8: sent per worker "
            "| bits a value |", "|---|---|---|---|---|---|---|"]
    for n in PADDING_SIZES:
        for workers in PADDING_WORKERS:
            cells = [f"{n:,}", str(workers), f"{blocks(n, workers):,}"]
            for name in ("fp4-allreduce", "fp8-allreduce"):
                calls = TRANSPORTS.get(name)().plan(PayloadSpec(kind="dense", numel=n), workers)
                sent = price_calls(calls, workers, network).sent_bytes
                cells += [f"{sent:,.0f} B", f"{8 * sent / n:.3g}"]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n" + "\n".join(rows) + "\n\n"


BLOCKS.add("methods-2025-defaults", Block("methods-2025-defaults", defaults_table))
BLOCKS.add("streaming-padding", Block("streaming-padding", padding_table))
