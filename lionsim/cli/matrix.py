"""`lionsim strategies --matrix`: what works with what, read from the registries themselves (so
it cannot drift from the code): per strategy, the transports it can use (its payload kind
against each transport's `carries`), the backends, the momentum sync, the local-step option,
its other options with their defaults, whether lionsim.optim.DistributedLion runs it in a
user's script, and whether `lionsim estimate` prices it (not at all where it declares no bytes, nor
its local steps where it declares no local_step_bytes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

MATRIX_COLUMNS = ["strategy", "sends", "transports", "backends", "momentum_sync", "local_steps", "options",
                  "distributed_lion", "estimate"]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _options(name: str, cls, cfg) -> list[str]:
    """Its option flags with the run's values (but --local-steps: its own column), then the
    common options it reads (`reads`)."""
    from lionsim.strategies.core.form import option_specs

    resolved = cls.resolve_options(cfg)
    shown = [f"{s.flag} ({getattr(resolved, s.field)})" for s in option_specs(name, cls.Options) if s.flag != LOCAL_STEPS]
    return shown + [_flag(o) for o in cls.reads]


LOCAL_STEPS = "--local-steps"
NO_BYTES = "no: it declares no bytes"
"""The estimate column of a strategy without `bytes`: estimate refuses it whatever --model (as bench
and sweep do on a --compute device: lionsim.steptime.undeclared)."""
NO_LOCAL_BYTES = "no: it declares no local_step_bytes"
"""The estimate column of a strategy that takes local steps without `local_step_bytes`: refused
the same way wherever it takes more than one step per sync."""


def _estimate(cls, cfg, local: bool) -> str:
    """The estimate column: whether `lionsim estimate` prices it, and what it needs."""
    from lionsim.steptime.undeclared import undeclared_strategy  # torch: loaded with the matrix, not at start-up

    missing = undeclared_strategy(cls, local or cls.steps_per_sync(cfg) > 1)
    if missing is not None:
        return NO_BYTES if missing == "bytes" else NO_LOCAL_BYTES
    return "yes (--model: tensor shapes)" if cls.shape_dependent else "yes"


def strategy_matrix(workload: str | None = None) -> list[dict]:
    """One record per strategy (MATRIX_COLUMNS); defaults are those of `workload` (each strategy's `tuning`)."""
    from lionsim.backends import BACKENDS
    from lionsim.strategies import STRATEGIES, StrategyConfig, valid_transports
    from lionsim.strategies.dlion import DistributedLionStrategy
    from lionsim.strategies.core.form import option_specs

    rows = []
    cfg = StrategyConfig(workload=workload)
    for name, cls in STRATEGIES.items():
        transports = sorted(valid_transports(cls), key=lambda t: t != cls.default_transport)
        options = _options(name, cls, cfg)
        local = any(s.flag == LOCAL_STEPS for s in option_specs(name, cls.Options))
        vote = cls.rule.name if issubclass(cls, DistributedLionStrategy) else None
        rows.append({
            "strategy": name,
            "sends": cls.payload_kind,
            "transports": ", ".join(transports),
            "backends": ", ".join(BACKENDS),  # every strategy runs on the Comm protocol: sim, gloo and nccl alike
            "momentum_sync": "never, every:K, schedule:K" if cls.has_momentum_sync else "-",
            "local_steps": f"H = {cls.steps_per_sync(cfg)}" if local else "-",
            "options": ", ".join(options) or "-",
            "distributed_lion": f'vote="{vote}"' if vote else "-",
            "estimate": _estimate(cls, cfg, local),
        })
    return rows


def matrix_frame(workload: str | None = None) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_records(strategy_matrix(workload), columns=MATRIX_COLUMNS)


def matrix_markdown(workload: str | None = None) -> str:
    """The matrix as a Markdown table (tests/cli/test_matrix.py checks docs/strategies.md holds it)."""
    head = ["strategy", "sends", "transports (default first)", "momentum sync", "local steps", "options (default)",
            "DistributedLion", "estimate"]
    keys = ["strategy", "sends", "transports", "momentum_sync", "local_steps", "options", "distributed_lion", "estimate"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in strategy_matrix(workload):
        lines.append("| " + " | ".join(f"`{row[k]}`" if k == "strategy" else row[k] for k in keys) + " |")
    return "\n".join(lines)


def matrix_table(workload: str | None = None):
    """A rich table: a block of lines per strategy, so that it fits 80 columns."""
    from rich import box
    from rich.table import Table

    from lionsim.transports.hierarchy import LISTING

    where = f"; defaults on {workload}" if workload else ""
    table = Table(title=f"what works with what (every strategy runs on sim, gloo and nccl{where})",
                  box=box.SIMPLE_HEAD, show_lines=True, pad_edge=False, collapse_padding=True,
                  caption=LISTING, caption_justify="left")
    table.add_column("strategy", no_wrap=True)
    table.add_column("transports", no_wrap=True)
    table.add_column("sync\nevery", no_wrap=True)  # narrow, so the options' longest line fits 80 columns whole
    table.add_column("options (default)", overflow="fold", min_width=len('DistributedLion(vote="mavo")'))
    for row in strategy_matrix(workload):
        syncs = "1" if row["local_steps"] == "-" else f"H = {row['local_steps'].removeprefix('H = ')}"
        lines = [row["options"].replace(" (", " ").replace(")", "").replace(", --", "\n--")] if row["options"] != "-" else []
        if row["momentum_sync"] != "-":
            lines.append("--momentum-sync")
        if row["distributed_lion"] != "-":
            lines.append(f"DistributedLion({row['distributed_lion']})")
        if row["estimate"] == NO_BYTES:
            lines += ["declares no bytes:", "estimate refuses it;", "bench: --compute measured"]
        elif row["estimate"] == NO_LOCAL_BYTES:
            lines += ["declares no", "local_step_bytes:", "estimate refuses", "its local steps;",
                      "bench: --compute measured"]
        elif row["estimate"] != "yes":
            lines.append("estimate needs --model")
        table.add_row(row["strategy"], row["transports"].replace(", ", "\n"), syncs, "\n".join(lines) or "-")
    return table
