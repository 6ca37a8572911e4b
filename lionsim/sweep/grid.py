"""The grid of a sweep: the values of each axis, parsed and checked before anything runs.

Axes take comma lists (`--workers 4,8,16`) or, from a TOML `--config`, arrays. Every value is
checked up front (unknown names, empty items, duplicates, workers < 1), so bad input fails
with one line and nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from lionsim.errors import LionsimError
from lionsim.network import canonical_network, load_network
from lionsim.ranges import MAX_SEED, SEED, WORKERS, refusal
from lionsim.runs import RunSpec, parse_runs
from lionsim.whole import MAX_WORKERS, Text, read_whole
from lionsim.workloads import WORKLOADS, canonical_workload

Items = Sequence[str | int]
"""One axis as given: comma-separated text pieces or TOML array items."""


EXAMPLES = {"--workload": "mlp,vit", "--workers": "4,8,16", "--network": "1gbe,10gbe", "--seed": "0,1,2"}
"""A comma list of each axis, for the messages."""


def split_items(option: str, given: Items) -> list[str]:
    """`["4,8", 16]` -> `["4", "8", "16"]`; an empty item (`4,,8`) or a repeated value fails."""
    example = f"a comma list like {EXAMPLES.get(option, '4,8,16')}"
    shown = Text(",".join(map(str, given)))  # as typed, for the refusals
    items: list[str] = []
    for piece in given:
        for item in str(piece).split(","):
            item = item.strip()
            if not item:
                raise LionsimError(refusal(option, shown, example, "an empty item"))
            if item in items:
                raise LionsimError(refusal(option, shown, f"{example}, each value once", f"{item} given twice"))
            items.append(item)
    if not items:
        raise LionsimError(refusal(option, shown, example, "no value"))
    return items


def parse_ints(option: str, given: Items, low: int, high: int, accepted: str) -> list[int]:
    """Each item a whole number as every whole-number option takes it (1000, 1e3 or 2.5e3:
    lionsim.whole.read_whole) from `low` to `high`, each once; else refused as bench refuses the
    one value (`accepted`: lionsim.ranges' words for the option)."""
    values = []
    for item in split_items(option, given):
        try:
            value = read_whole(item)
        except ValueError:
            raise LionsimError(refusal(option, Text(item), accepted, "not a whole number")) from None
        if not low <= value <= high:
            raise LionsimError(refusal(option, value, accepted))
        if value in values:  # "4" and "04" are one value
            raise LionsimError(refusal(option, Text(",".join(map(str, given))), "each value once",
                                       f"{int(value)} given twice"))
        values.append(value)
    return values


def _distinct(option: str, names: list[str]) -> list[str]:
    """`10gbe,10GbE` is one value given twice."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise LionsimError(refusal(option, Text(",".join(names)), "each value once", f"{name} given twice"))
    return names


@dataclass(frozen=True, kw_only=True, slots=True)
class Grid:
    """The axes of a sweep; a cell is one value of each."""

    workloads: tuple[str, ...]
    """Workload names (`lionsim workloads`), or FILE.py:FUNC with the file's absolute path (the cell id
    uses the file's stem and the function: lionsim.reports.columns.workload_text)."""
    workers: tuple[int, ...]
    """Data-parallel worker counts N, each >= 1."""
    networks: tuple[str, ...]
    """Network presets in their listed spelling, or profile files as given (the cell id uses the
    preset name or file stem)."""
    seeds: tuple[int, ...]
    """Seeds of init, data and quantizers."""
    runs: tuple[RunSpec, ...]
    """strategy@transport runs, resolved as bench resolves --strategy and --transport."""

    @classmethod
    def parse(cls, *, workload: Items, workers: Items, network: Items, seed: Items,
              strategies: list[str], transport: str | None, source: str | None = None) -> Grid:
        """The grid of the options as typed; `source` names the strategies' set where the command
        filled them in (its defaults: lionsim.runs.parse_runs says so in a refusal)."""
        # names in their listed spelling (`MLP` -> `mlp`, `10GbE` -> `10gbe`): cell ids, sweep.json
        # and a resumed sweep's grid check see one spelling; a profile file path stays as given
        workloads = _distinct("--workload", [canonical_workload(name) for name in split_items("--workload", workload)])
        networks = _distinct("--network", [canonical_network(spec) for spec in split_items("--network", network)])
        for spec in networks:
            load_network(spec)  # an unknown preset or a bad profile file fails now
        return cls(workloads=tuple(workloads), workers=tuple(parse_ints("--workers", workers, 1, MAX_WORKERS, WORKERS)),
                   networks=tuple(networks), seeds=tuple(parse_ints("--seed", seed, 0, MAX_SEED, SEED)),
                   runs=tuple(parse_runs(strategies, transport, source)))

    def to_dict(self) -> dict[str, list]:
        """The grid as sweep.json records it (the keys of the output contract)."""
        return {"workload": list(self.workloads), "workers": list(self.workers), "network": list(self.networks),
                "seed": list(self.seeds), "runs": [r.label for r in self.runs]}


OPTION_OF_AXIS = {"workload": "--workload", "workers": "--workers", "network": "--network", "seed": "--seed",
                  "runs": "--strategy"}


def check_grows(old: dict, new: dict, where: str, held: dict | None = None) -> None:
    """A resumed sweep may add values to any axis, and drop only those no finished cell holds:
    the finished cells of the old grid must stay cells of the new one (else the CSVs would hold
    cells outside the grid), but a value whose cells never finished (added by a run interrupted
    before its first cell) computed nothing, and the command without it is the sweep on disk.
    `held`: axis -> the old grid's values that finished cells hold (None: every value)."""
    spelling = {"workload": lambda v: WORKLOADS.canonical(v) if v in WORKLOADS else v,
                "network": lambda v: canonical_network(v) if isinstance(v, str) else v}
    for axis, option in OPTION_OF_AXIS.items():
        listed = spelling.get(axis, lambda v: v)  # a sweep.json written before names were canonical
        lost = [v for v in old.get(axis, [])
                if listed(v) not in new[axis] and (held is None or v in held.get(axis, ()))]
        if lost:
            raise LionsimError(f"{option} differs from the sweep in {where}: it lacks {', '.join(map(str, lost))}, "
                               f"which finished cells hold; a resumed sweep may drop only grid values no finished "
                               f"cell holds; {start_over(where)}")


def start_over(where: str | Path) -> str:
    """The ways on from a sweep root (`where`: its sweep.json) that this command may not resume.
    `lionsim sweep` never clears a root (its cells are hours of training; bench, estimate and comm's
    --overwrite-sweep replaces one with their own output), so beginning again is said plainly."""
    root = Path(where).parent
    return (f"rerun with the same options to resume, or use a new --out (lionsim sweep never clears a sweep "
            f"root: delete {root} to start it over)")
