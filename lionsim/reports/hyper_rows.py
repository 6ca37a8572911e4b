"""A report's `hyper.RUN` rows: each run's resolved hyperparameters (lr, weight decay, betas), as
run.json's `config.hyper` records them (the form a config file's [hyper."RUN"] tables take), so
a report read alone says what each run trained with: its strategy's defaults for the workload,
--lr and the other flags, or its own --hyper values. A sweep's come from its cells' run.json:
where a run's value differs between cells (the lr axis, or defaults tuned per workload) the row
lists each ("lr 0.05/0.2/0.5 (by cell), weight_decay 0")."""

from __future__ import annotations

from collections.abc import Iterable

from lionsim.reports.columns import label_name, lr_text

KEYS = ("lr", "weight_decay", "betas")
"""What a run's table holds, in the order a row names them (a strategy's ignored ones are left
out of run.json, and so of its row: signSGD has no betas)."""


def _text(key: str, value) -> str:
    if key == "lr":
        return lr_text(value)  # as the tables, cell ids and legends write an lr
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in value) + ")"
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def hyper_rows(tables: Iterable[dict | None], rounds: dict[str, int] | None = None) -> list[list[str]]:
    """[`hyper.RUN`, "lr 0.003, weight_decay 0.01, betas (0.9, 0.999)"] for each run of the
    recorded `tables` (each a run.json's config.hyper: run -> its values), runs in first-seen
    order, each named as the report names it (`rounds`: a local-step run's H, columns.label_name);
    a value that differs between tables is each of them, "/"-joined, then "(by cell)"."""
    seen: dict[str, dict[str, list[str]]] = {}
    for table in tables:
        for run, values in (table or {}).items() if isinstance(table, dict) else ():
            if not isinstance(values, dict):
                continue
            held = seen.setdefault(str(run), {})
            for key in KEYS:
                if key in values:
                    texts = held.setdefault(key, [])
                    texts += [] if (text := _text(key, values[key])) in texts else [text]
    rows = []
    for run, held in seen.items():
        parts = [f"{key} {'/'.join(texts)}" + (" (by cell)" if len(texts) > 1 else "") for key, texts in held.items()]
        rows.append([f"hyper.{label_name(run, rounds)}", ", ".join(parts)])
    return rows


def cells_hyper_rows(records: dict[str, dict | None], rounds: dict[str, int] | None = None) -> list[list[str]]:
    """hyper_rows of a sweep's cells' run.json `records` (lionsim.reports.cell_records, in the
    cells' order); a cell whose record is missing or unreadable adds nothing (the others still say theirs)."""
    tables = []
    for record in records.values():
        config = record.get("config") if isinstance(record, dict) else None
        tables.append(config.get("hyper") if isinstance(config, dict) else None)
    return hyper_rows(tables, rounds)
