"""The grid of a sweep: the values of each axis, parsed and checked before anything runs.

Axes take comma lists (`--workers 4,8,16`) or, from a TOML `--config`, arrays. Every value is
checked up front (unknown names, empty items, duplicates, workers < 1, lr <= 0), so bad input
fails with one line and nothing written.

The learning rate is an axis too (`--lr 0.0003,0.001`; `default`: each strategy's own), with one
rule that keeps every sweep root written before it was one valid: the cells of the axis's first
value carry no lr in their id (`mlp-w4-1gbe-s0-adamw@fp32-allreduce`, as a sweep of one lr always
named them), those of every other value say it (`mlp-w4-1gbe-s0-lr0.003-adamw@fp32-allreduce`:
lr_tag). So a sweep of one lr keeps its ids and sweep.json (its lr stays in "bench"), and growing
it (`--lr 0.001` to `--lr 0.001,0.003`) trains only the new value's cells: no finished cell is
renamed. The price: the first value must stay first once a cell has finished (check_grows).

The module imports no torch (the runs and the workloads' registry load inside Grid.parse), so the
command checks the axes before torch loads (check_axes), with the helpers Grid.parse uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

from lionsim.errors import LionsimError
from lionsim.forms import beyond_float32, built_in_workloads, check_workload_name
from lionsim.network import canonical_network, load_network
from lionsim.plugin_load import is_spec, parse_spec
from lionsim.ranges import LR, MAX_SEED, SEED, WORKERS, refusal
from lionsim.registry import match_name
from lionsim.reports.columns import DEFAULT_LR, lr_text  # one text of an lr: ids, tables, report, plots
from lionsim.whole import MAX_WORKERS, NotWhole, Text, read_whole

if TYPE_CHECKING:  # the runs import the strategies, and torch: Grid.parse imports them
    from lionsim.runs import RunSpec

Items = Sequence[str | int]
"""One axis as given: comma-separated text pieces or TOML array items."""


EXAMPLES = {"--workload": "mlp,vit", "--workers": "4,8,16", "--network": "1gbe,10gbe", "--seed": "0,1,2",
            "--lr": "0.0003,0.001"}
"""A comma list of each axis, for the messages."""


def _example(option: str) -> str:
    return f"a comma list like {EXAMPLES.get(option, '4,8,16')}"


def each_once(option: str) -> str:
    """What a refusal of a value given twice accepts: one wording for every axis."""
    return f"{_example(option)}, each value once"


def given_twice(option: str, shown: str, value: object) -> LionsimError:
    """The refusal of a value given twice (`4,4`, `0.001,1e-3`, `10gbe,10GbE`)."""
    return LionsimError(refusal(option, Text(shown), each_once(option), f"{value} given twice"))


def split_items(option: str, given: Items) -> list[str]:
    """`["4,8", 16]` -> `["4", "8", "16"]`; an empty item (`4,,8`) or a repeated value fails."""
    example = _example(option)
    shown = Text(",".join(map(str, given)))  # as typed, for the refusals
    items: list[str] = []
    for piece in given:
        for item in str(piece).split(","):
            item = item.strip()
            if not item:
                raise LionsimError(refusal(option, shown, example, "an empty item"))
            if item in items:
                raise given_twice(option, shown, item)
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
        except NotWhole as e:  # its own reason: "not a whole number", "100 digits or more"
            raise LionsimError(refusal(option, Text(item), accepted, e.why)) from None
        if not low <= value <= high:
            raise LionsimError(refusal(option, value, accepted))
        if value in values:  # "4" and "04" are one value
            raise given_twice(option, ",".join(map(str, given)), int(value))
        values.append(value)
    return values


LR_ACCEPTED = f"{LR.words}, or {DEFAULT_LR} (each strategy's own); a comma list like {EXAMPLES['--lr']} sweeps them"


def parse_lrs(given: Items) -> list[float | None]:
    """Each --lr item a learning rate above 0 that float32 holds, or `default` (None), each once
    (`0.001,1e-3` is one value twice)."""
    values: list[float | None] = []
    for item in split_items("--lr", given):
        if item.lower() == DEFAULT_LR:
            value = None
        else:
            try:
                value = float(item)
            except ValueError:
                raise LionsimError(refusal("--lr", Text(item), LR_ACCEPTED, "not a number")) from None
            if not LR(value) or beyond_float32(value):
                raise LionsimError(refusal("--lr", Text(item), LR_ACCEPTED, beyond_float32(value)))
        if value in values:
            raise given_twice("--lr", ",".join(map(str, given)), lr_text(value))
        values.append(value)
    return values


def lr_tag(lr: float | None, lrs: Sequence[float | None]) -> str:
    """The lr part of a cell id: none for the grid's first lr (a sweep of one lr keeps the ids it
    always had; module doc), `lr0.003` for any other."""
    return "" if lr == lrs[0] else f"lr{lr_text(lr)}"


def _distinct(option: str, names: list[str]) -> list[str]:
    """`10gbe,10GbE` is one value given twice."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise given_twice(option, ",".join(names), name)
    return names


def _networks(network: Items) -> list[str]:
    """Each --network in its listed spelling (a profile file's path as given), each once, each
    loaded: an unknown preset or a bad profile file fails now."""
    networks = _distinct("--network", [canonical_network(spec) for spec in split_items("--network", network)])
    for spec in networks:
        load_network(spec)
    return networks


def _lrs(lr: Items | float | None) -> list[float | None]:
    return [None] if lr is None else parse_lrs(lr if isinstance(lr, (list, tuple)) else [lr])


class Axes(NamedTuple):
    """The axes check_axes read: the workloads as typed, the worker counts and the lrs."""

    workloads: list[str]
    workers: list[int]
    lrs: list[float | None]


def check_axes(*, workload: Items, workers: Items, network: Items, seed: Items,
               lr: Items | float | None = None) -> Axes:
    """Every check of Grid.parse that needs no registry, in its order and its words: each workload's
    name (lionsim.forms.check_workload_name; a built-in's given twice in two spellings; a
    FILE.py:FUNC's file), the networks, the worker counts, the seeds and the lrs. The runs
    (strategies, transports), which Grid.parse checks after all of these, and a workload file's
    function wait for Grid.parse (torch)."""
    names = split_items("--workload", workload)
    for name in names:
        check_workload_name(name)
        if is_spec(name):
            parse_spec(name, "--workload")  # the file exists; its function is imported in Grid.parse
    listed = [match_name(name, built_in_workloads()) for name in names]
    if None not in listed:  # Grid.parse's spelling where every name is a built-in's
        _distinct("--workload", listed)
    _networks(network)
    counts = parse_ints("--workers", workers, 1, MAX_WORKERS, WORKERS)
    parse_ints("--seed", seed, 0, MAX_SEED, SEED)
    return Axes(names, counts, _lrs(lr))


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
    lrs: tuple[float | None, ...] = (None,)
    """Learning rates, each for every run (None: each strategy's own); the first names its cells
    without an lr (lr_tag)."""

    @classmethod
    def parse(cls, *, workload: Items, workers: Items, network: Items, seed: Items,
              strategies: list[str], transport: str | None, source: str | None = None,
              lr: Items | float | None = None) -> Grid:
        """The grid of the options as typed; `source` names the strategies' set where the command
        filled them in (its defaults: lionsim.runs.parse_runs says so in a refusal)."""
        from lionsim.runs import parse_runs
        from lionsim.workloads import canonical_workload

        # names in their listed spelling (`MLP` -> `mlp`, `10GbE` -> `10gbe`): cell ids, sweep.json
        # and a resumed sweep's grid check see one spelling; a profile file path stays as given
        workloads = _distinct("--workload", [canonical_workload(name) for name in split_items("--workload", workload)])
        networks = _networks(network)
        counts = parse_ints("--workers", workers, 1, MAX_WORKERS, WORKERS)
        seeds = parse_ints("--seed", seed, 0, MAX_SEED, SEED)
        lrs = _lrs(lr)  # before the runs, as check_axes (which has no registry to check them) does
        return cls(workloads=tuple(workloads), workers=tuple(counts), networks=tuple(networks), seeds=tuple(seeds),
                   runs=tuple(parse_runs(strategies, transport, source)), lrs=tuple(lrs))

    def to_dict(self) -> dict[str, list]:
        """The grid as sweep.json records it (the keys of the output contract): "lr" only where it
        has several values (one lr stays a bench option, as before lr was an axis: recorded_grid)."""
        lrs = {"lr": list(self.lrs)} if len(self.lrs) > 1 else {}
        return {"workload": list(self.workloads), "workers": list(self.workers), "network": list(self.networks),
                "seed": list(self.seeds), "runs": [r.label for r in self.runs], **lrs}

    def axes(self) -> dict[str, list]:
        """Every axis's values, "lr" always (what check_grows compares)."""
        return {**self.to_dict(), "lr": list(self.lrs)}


OPTION_OF_AXIS = {"workload": "--workload", "workers": "--workers", "network": "--network", "seed": "--seed",
                  "runs": "--strategy", "lr": "--lr"}


def recorded_grid(record: dict) -> dict[str, list]:
    """A sweep.json's grid with "lr" always: a sweep of one lr (or of none given) records it in
    "bench", as every sweep did before lr was an axis."""
    grid = dict(record.get("grid") or {})
    if "lr" not in grid:
        bench = record.get("bench")
        grid["lr"] = [bench.get("lr") if isinstance(bench, dict) else None]
    return grid


def check_grows(old: dict, new: dict, where: str, held: dict | None = None) -> None:
    """A resumed sweep may add values to any axis, and drop only those no finished cell holds:
    the finished cells of the old grid must stay cells of the new one (else the CSVs would hold
    cells outside the grid), but a value whose cells never finished (added by a run interrupted
    before its first cell) computed nothing, and the command without it is the sweep on disk.
    `held`: axis -> the old grid's values that finished cells hold (None: every value). `old`
    and `new` hold "lr" (recorded_grid, Grid.axes): its first value must stay first once a cell
    has finished, since that value's cells carry no lr in their id (lr_tag)."""
    from lionsim.workloads import WORKLOADS

    old, new = ({"lr": [None]} | g for g in (old, new))  # a grid of one lr may leave it out (Grid.to_dict)
    spelling = {"workload": lambda v: WORKLOADS.canonical(v) if v in WORKLOADS else v,
                "network": lambda v: canonical_network(v) if isinstance(v, str) else v}
    for axis, option in OPTION_OF_AXIS.items():
        listed = spelling.get(axis, lambda v: v)  # a sweep.json written before names were canonical
        lost = [v for v in old.get(axis, [])
                if listed(v) not in new[axis] and (held is None or v in held.get(axis, ()))]
        if lost:
            shown = lr_text if axis == "lr" else str
            raise LionsimError(f"{option} differs from the sweep in {where}: it lacks {', '.join(map(shown, lost))}, "
                               f"which finished cells hold; a resumed sweep may drop only grid values no finished "
                               f"cell holds; {start_over(where)}")
    was, now = old["lr"] or [None], new["lr"] or [None]
    if now[0] != was[0] and (held is None or any(held.values())):
        raise LionsimError(f"--lr differs from the sweep in {where}: its first value is {lr_text(was[0])}, whose "
                           f"finished cells carry no lr in their id, and {lr_text(now[0])} now; give "
                           f"{lr_text(was[0])} first (new values after it); {start_over(where)}")


def start_over(where: str | Path) -> str:
    """The ways on from a sweep root (`where`: its sweep.json) that this command may not resume.
    `lionsim sweep` never clears a root (its cells are hours of training; bench, estimate and comm's
    --overwrite-sweep replaces one with their own output), so beginning again is said plainly."""
    root = Path(where).parent
    return (f"rerun with the same options to resume, or use a new --out (lionsim sweep never clears a sweep "
            f"root: delete {root} to start it over)")
