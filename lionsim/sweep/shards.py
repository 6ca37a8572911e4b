"""Scheduler shards: `lionsim sweep --shard I/N` runs shard I's share of the grid's units.

Units (the cells that share one training: a cell id without its network) are dealt to the N
shards by their stable ids: largest first (most workers, ties by id), each to the shard with
the least work so far. The split is a function of the grid alone, so every array task computes
the same one with no coordination, and the shards finish about together (the array lasts as
long as its slowest task). Cells of one training stay together, so a shard trains each unit
once. Shard I writes only under ROOT/parts/shard-I-of-N/ (a sweep root of its own), so
concurrent shards on a shared file system never write the same file, and it skips cells that
the root or another part already finished; `lionsim sweep merge ROOT` combines the parts.
"""

from __future__ import annotations

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

    def select(self, units: list[tuple[str, int]]) -> set[str]:
        """The keys of this shard's units, from every unit's (key, cost) in the grid."""
        load = [0] * self.count
        mine = set()
        for key, cost in sorted(units, key=lambda u: (-u[1], u[0])):
            least = load.index(min(load))
            load[least] += cost
            if least == self.index - 1:
                mine.add(key)
        return mine

    def root(self, out: Path) -> Path:
        return Path(out) / PARTS_DIR / self.name


def part_roots(out: Path) -> list[Path]:
    """Every shard part under ROOT/parts that a shard has started (it holds a sweep.json)."""
    parts = Path(out) / PARTS_DIR
    if not parts.is_dir():
        return []
    found = [p for p in parts.iterdir() if p.is_dir() and PART_NAME.fullmatch(p.name) and (p / "sweep.json").is_file()]
    return sorted(found, key=lambda p: tuple(int(n) for n in PART_NAME.fullmatch(p.name).groups())[::-1])
