"""Scheduler shards: `lionsim sweep --shard I/N` runs the units whose stable id falls in shard I.

A unit (the cells that share one training: a cell id without its network) belongs to shard
`sha256(unit key) mod N + 1`, a function of the id alone: every array task computes the same
split with no coordination, and a grid that grows never moves a cell to another shard. Cells
of one training stay together, so a shard trains each unit once. Shard I writes only under
ROOT/parts/shard-I-of-N/ (a sweep root of its own), so concurrent shards on a shared file
system never write the same file; `lionsim sweep merge ROOT` combines the parts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from lionsim.errors import LionsimError

PARTS_DIR = "parts"
PART_NAME = re.compile(r"shard-(\d+)-of-(\d+)")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 1 <= I <= N (a Slurm array task passes $SLURM_ARRAY_TASK_ID/N)."""
        index, slash, count = str(text).strip().partition("/")
        accepted = "accepted: I/N with 1 <= I <= N, e.g. --shard 1/3"
        if not slash or not index.strip().isdigit() or not count.strip().isdigit():
            raise LionsimError(f"bad --shard {text!r}; {accepted}")
        shard = cls(int(index), int(count))
        if not 1 <= shard.index <= shard.count:
            raise LionsimError(f"bad --shard {text!r}: shard {shard.index} of {shard.count} does not exist; {accepted}")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def name(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    def holds(self, unit_key: str) -> bool:
        digest = hashlib.sha256(unit_key.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def root(self, out: Path) -> Path:
        return Path(out) / PARTS_DIR / self.name


def part_roots(out: Path) -> list[Path]:
    """Every shard part under ROOT/parts that a shard has started (it holds a sweep.json)."""
    parts = Path(out) / PARTS_DIR
    if not parts.is_dir():
        return []
    found = [p for p in parts.iterdir() if p.is_dir() and PART_NAME.fullmatch(p.name) and (p / "sweep.json").is_file()]
    return sorted(found, key=lambda p: tuple(int(n) for n in PART_NAME.fullmatch(p.name).groups())[::-1])
