"""A docs block from `lionsim comm`: the modelled table (pure modelling, the same on any
machine), run as a user would, 80 columns off a terminal (in this process: lionsim.docgen.run), every
time it renders."""

from __future__ import annotations

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.run import printed

ARGS = ["--collective", "all_reduce", "--collective", "all_to_all", "--sizes", "1KB:1GB:x1000", "--workers", "8",
        "--network", "10gbe"]
"""The block's `lionsim comm` arguments (the page shows the same command above the block)."""


def comm_table() -> str:
    """What `lionsim comm ARGS` prints, blank padding trimmed, as a text code block."""
    lines = printed(["comm", *ARGS])
    body = "\n".join(line for line in lines if line.strip())
    return f"\n```text\n{body}\n```\n\n"


BLOCKS.add("comm-10gbe", Block("comm-10gbe", comm_table))
