"""Docs blocks read from `lionsim strategies`: the what-works-with-what matrix of docs/strategies.md
(its csv, read from the registries, so the page follows every strategy and transport added). Run
in this process each time it renders; the same on any machine."""

from __future__ import annotations

import csv
import io

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.figures import md
from lionsim.docgen.run import printed

COLUMNS = {"sends": "sends", "transports": "transports (default first)", "momentum_sync": "momentum sync",
           "local_steps": "local steps", "options": "options (default)", "distributed_lion": "DistributedLion",
           "estimate": "estimate"}
"""The csv's columns the page shows, and their headers."""
ALL_BACKENDS = "sim, gloo, nccl"
"""What the page's prose says every strategy runs on: a strategy that does not gets a backends column."""


def matrix() -> str:
    """`lionsim strategies --matrix --format csv` as a markdown table."""
    rows = list(csv.DictReader(io.StringIO("\n".join(printed(["strategies", "--matrix", "--format", "csv"])))))
    columns = dict(COLUMNS)
    if any(r["backends"] != ALL_BACKENDS for r in rows):
        columns = {"backends": "backends", **columns}
    return "\n" + md(["strategy", *columns.values()],
                     [[f"`{r['strategy']}`", *(r[c] for c in columns)] for r in rows]) + "\n"


BLOCKS.add("strategies-matrix", Block("strategies-matrix", matrix))
