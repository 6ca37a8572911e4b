"""Machine-readable text of a result or listing table: `--format csv` or `--format json`.

A table's frame is written whole, every column, with full-precision numbers (the human table
rounds and drops columns to fit 80 characters): CSV as the files lionsim writes, JSON as a
list of one object per row (NaN as null).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from lionsim.errors import LionsimError

if TYPE_CHECKING:  # the --format check runs at every command's start: no pandas there
    import pandas as pd

FORMATS = ("table", "csv", "json")


def check_format(value: str) -> str:
    text = str(value).strip().lower()
    if text not in FORMATS:
        from lionsim.registry import did_you_mean

        raise LionsimError(f"bad --format {value!r}; accepted: {', '.join(FORMATS)}{did_you_mean(text, FORMATS)}")
    return text


def _plain(value):
    if type(value).__name__ == "NAType":  # pandas.NA, a count column's missing value (csv_frame's Int64)
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    if hasattr(value, "item"):  # numpy scalars
        return _plain(value.item())
    return value


def is_count(name: str) -> bool:
    """A column counting whole things: bytes (`bytes`, `wire_bytes`, `inter_bytes`, ...), parameters
    (`params`), steps (`steps_to_target`, `local_steps`, ...: `steps_*`, `*_steps`) or workers
    (`workers`); not a rate or ratio of them (`bytes_per_param`, `bytes_ratio`, `steps_per_s`)."""
    if "_per_" in name or name.endswith("_ratio"):
        return False
    return (name in ("bytes", "params", "workers") or name.endswith("_bytes") or name.startswith("steps_")
            or name.endswith("_steps"))


WORKER_CROSSOVER = ("crossover", "loses_at")
"""crossover.csv's columns that are worker counts where its `variable` is workers (a bandwidth's is GB/s)."""


def count_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of `frame` that count whole things: is_count's by name, and a crossover table's
    crossover and loses_at where every row's variable is workers."""
    names = [str(name) for name in frame.columns if is_count(str(name))]
    if "variable" in frame.columns and len(frame) and (frame["variable"] == "workers").all():
        names += [name for name in WORKER_CROSSOVER if name in frame.columns]
    return names


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as every CSV lionsim writes it, one form a column whichever command wrote it: a count
    (count_columns) a whole number (`53907324928`, not `53907324928.0`; a mean over steps of bytes is
    rounded to the byte, its fraction of a byte being no figure), a time (`*_s`) a float (`0.0`,
    not `0` where every value happened to be whole). Missing values stay empty."""
    import pandas as pd

    out = frame.copy()
    counts = count_columns(frame)
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        if str(name) in counts:
            values = column.astype(float)
            if not values.abs().eq(float("inf")).any():  # "no limit" (inf) keeps the column a float
                out[name] = values.round().astype("Int64")
        elif str(name).endswith("_s"):
            out[name] = column.astype(float)
    return out


def write_csv(target, frame: pd.DataFrame) -> None:
    """`frame` (csv_frame's form) to `target`: an open file or a path."""
    csv_frame(frame).to_csv(target, index=False)


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """The frame as CSV or JSON text (one object per row), ending with a newline."""
    if fmt == "csv":
        return csv_frame(frame).to_csv(index=False)
    if fmt == "json":  # the CSV's form of each column: a count a whole number (871078656, not 871078656.0)
        rows = [{k: _plain(v) for k, v in row.items()} for row in csv_frame(frame).to_dict(orient="records")]
        return json.dumps(rows, indent=2) + "\n"
    raise ValueError(f"frame_text writes csv or json, not {fmt!r}")
