"""A docs block from `lionsim comm`: the modelled table (pure modelling, the same on any
machine), run as a user would, 80 columns off a terminal, every time it renders."""

from __future__ import annotations

import os
import subprocess
import sys

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.errors import LionsimError

ARGS = ["--collective", "all_reduce", "--collective", "all_to_all", "--sizes", "1KB:1GB:x1000", "--workers", "8",
        "--network", "10gbe"]
"""The block's `lionsim comm` arguments (the page shows the same command above the block)."""


def comm_table() -> str:
    """What `lionsim comm ARGS` prints, blank padding trimmed, as a text code block."""
    done = subprocess.run([sys.executable, "-m", "lionsim", "comm", *ARGS], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "COLUMNS": "80"})
    if done.returncode != 0:
        raise LionsimError(f"lionsim comm {' '.join(ARGS)} failed: {done.stderr.strip()}")
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    body = "\n".join(line for line in lines if line.strip())
    return f"\n```text\n{body}\n```\n\n"


BLOCKS.add("comm-10gbe", Block("comm-10gbe", comm_table))
