"""Which strategy runs over which transport: parsing and validating `NAME[@TRANSPORT]`.

Everything is checked before any training starts: an unknown strategy or transport, or a
pair that cannot work (the payload kinds differ), fails with the list of valid choices.

The rules read the names through `Names`: the registries (registry_names, which import torch),
or lionsim.name_table's record of the built-ins, which refuses a bad name before torch loads
with these same rules, so in the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from lionsim.errors import LionsimError

if TYPE_CHECKING:  # the registries import torch: registry_names imports them when called
    from lionsim.registry import Registry
    from lionsim.strategies import Strategy


@dataclass(frozen=True, slots=True)
class RunSpec:
    strategy: str
    transport: str

    @property
    def label(self) -> str:
        return f"{self.strategy}@{self.transport}"

    @property
    def strategy_class(self) -> type[Strategy]:
        from lionsim.strategies import STRATEGIES

        return STRATEGIES.get(self.strategy)


@dataclass(frozen=True, slots=True)
class Names:
    """What the rules below read of the strategies and transports: the registries, or a record of
    them. A strategy (strategies.get) has `payload_kind` and `default_transport`."""

    strategies: Registry
    transports: Registry
    can_use: Callable[[Any, str], bool]
    """(strategy, canonical transport name) -> whether it can use it."""
    valid_transports: Callable[[Any], list[str]]
    """strategy -> the registered transports it can use."""
    uncarried: Mapping[str, str] = field(default_factory=dict)
    """Payload kind -> why no hier: transport carries it (lionsim.transports.hierarchy.UNCARRIED)."""


def registry_names() -> Names:
    """The registries themselves (importing them imports torch)."""
    from lionsim.strategies import STRATEGIES, can_use, valid_transports
    from lionsim.transports import TRANSPORTS
    from lionsim.transports.hierarchy import UNCARRIED

    return Names(STRATEGIES, TRANSPORTS, can_use, valid_transports, UNCARRIED)


def split_specs(specs: list[str], names: Names | None = None) -> list[str]:
    """Comma-separated lists spread into single specs (`adamw,lion` is `adamw` and `lion`),
    names in their registered spelling (`AdamW@BF16-allreduce` is `adamw@bf16-allreduce`).
    An empty item (`adamw,,lion`) is an error."""
    names = names or registry_names()
    out = []
    for text in specs:
        if not isinstance(text, str):
            raise LionsimError(f"bad --strategy {text!r}; accepted: NAME or NAME@TRANSPORT (`lionsim strategies`)")
        for item in text.split(","):
            name, at, chosen = item.strip().partition("@")
            if not name or (at and not chosen.strip()):
                raise LionsimError(f"bad --strategy {text!r}: an empty name; accepted: NAME[@TRANSPORT][,NAME...]")
            name = names.strategies.canonical(name.strip())
            out.append(f"{name}@{names.transports.canonical(chosen.strip())}" if at else name)
    return out


def parse_runs(specs: list[str], transport: str | None = None, source: str | None = None,
               names: Names | None = None) -> list[RunSpec]:
    """`dlion-mavo@a2a-1bit` or `dlion-mavo` (then `transport`, else the strategy's default);
    names in any case, and comma-separated lists (split_specs). `source`: where `specs` came from
    when the user named none ("estimate's default strategies"), for a refusal to say so.

    The --transport rule, the same for strategies named and for the default set: it applies to
    every strategy given without a transport that can use it; the others keep their default
    transport; it is an error where it applies to no run: no strategy given without a transport
    can use it, or every strategy names its own. A run it makes identical to one given explicitly
    (`-s dlion-mavo -s dlion-mavo@a2a-1bit --transport a2a-1bit`) runs once. Over a default set the
    refusal names the set, not one of its strategies the user never gave, and says to give -s.
    `names`: what the names are read from (default: the registries)."""
    names = names or registry_names()
    can_use = names.can_use
    specs = split_specs(list(specs), names)
    if not specs:
        raise LionsimError(f"no strategy given; choose from: {', '.join(names.strategies.names())}")
    bare = [names.strategies.get(s) for s in specs if "@" not in s]  # the strategies --transport is for
    if transport is not None:
        transport = names.transports.canonical(transport)
        if not any(can_use(s, transport) for s in bare) and (source is not None or len(bare) > 1):
            # one strategy is refused below with its valid transports; several: none of them is the one at fault
            raise _applies_to_none(transport, specs, source or "the -s list", names)
        if not bare:
            raise LionsimError(f"--transport {transport} applies to no run: every strategy names its own transport "
                               f"({', '.join(specs)}); accepted: --transport with a strategy given without "
                               "@TRANSPORT")
    runs: list[RunSpec] = []
    via_transport: set[RunSpec] = set()
    for text in specs:
        name, _, chosen = text.partition("@")
        strategy = names.strategies.get(name)
        if chosen:
            names.transports.get(chosen)
        elif transport is not None and can_use(strategy, transport):
            chosen = transport
        elif transport is not None and not any(can_use(s, transport) for s in bare):
            chosen = transport  # no strategy it is for can use it: report below for this strategy
        else:
            chosen = strategy.default_transport  # --transport is for the strategies it fits
        if not can_use(strategy, chosen):
            raise LionsimError(_cannot_use(name, strategy, chosen, names))
        run = RunSpec(name, chosen)
        made = "@" not in text and transport is not None and chosen == transport
        if run in runs and (made or run in via_transport):
            continue  # --transport made it the same run as one given with that transport: one run
        if made:
            via_transport.add(run)
        if run in runs:
            raise LionsimError(f"strategy {run.label} given twice")
        runs.append(run)
    return runs


def _cannot_use(name: str, strategy: Any, chosen: str, names: Names) -> str:
    """The refusal of `strategy` over `chosen`, a transport it cannot use: a hier: name over a kind
    no hierarchy carries says why, as hier: says it of a transport that carries only such kinds."""
    kind, valid = strategy.payload_kind, ", ".join(names.valid_transports(strategy))
    why = names.uncarried.get(kind)
    if why is None:
        return (f"strategy {name!r} cannot use transport {chosen!r} (it sends {kind}); valid transports: {valid} "
                "(and hier: before one of them, where it has a hierarchical form)")
    if chosen.startswith("hier:"):
        return (f"strategy {name!r} cannot use transport {chosen!r}: it sends {kind}, which has no hierarchical "
                f"form ({why}); valid transports: {valid}")
    return f"strategy {name!r} cannot use transport {chosen!r} (it sends {kind}); valid transports: {valid}"


def _applies_to_none(transport: str, specs: list[str], source: str, names: Names) -> LionsimError:
    """--transport over a default set that no run of it can take: the set named, -s suggested with a
    strategy that can use the transport (one of the set's where one can)."""
    bare = [s for s in specs if "@" not in s]
    why = ("each names its own transport" if not bare else
           f"{', '.join(bare)} cannot use it{' and the others name their own' if len(bare) < len(specs) else ''}")
    given = [s.partition("@")[0] for s in specs] + list(names.strategies.names())
    fit = next((n for n in dict.fromkeys(given) if names.can_use(names.strategies.get(n), transport)), None)
    hint = f"give -s, e.g. -s {fit} --transport {transport}" if fit else "no strategy can use it (`lionsim strategies --matrix`)"
    return LionsimError(f"--transport {transport} applies to no run of {source} ({', '.join(specs)}): {why}; {hint}")
