"""Which strategy runs over which transport: parsing and validating `NAME[@TRANSPORT]`.

Everything is checked before any training starts: an unknown strategy or transport, or a
pair that cannot work (the payload kinds differ), fails with the list of valid choices.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, Strategy, valid_transports
from lionsim.transports import TRANSPORTS


@dataclass(frozen=True, slots=True)
class RunSpec:
    strategy: str
    transport: str

    @property
    def label(self) -> str:
        return f"{self.strategy}@{self.transport}"

    @property
    def strategy_class(self) -> type[Strategy]:
        return STRATEGIES.get(self.strategy)


def parse_runs(specs: list[str], transport: str | None = None) -> list[RunSpec]:
    """`dlion-mavo@a2a-1bit` or `dlion-mavo` (then `transport`, else the strategy's default)."""
    if not specs:
        raise LionsimError(f"no strategy given; choose from: {', '.join(STRATEGIES.names())}")
    if transport is not None:
        TRANSPORTS.get(transport)
    runs = []
    for text in specs:
        name, _, chosen = text.partition("@")
        strategy = STRATEGIES.get(name)
        valid = valid_transports(strategy)
        if chosen:
            TRANSPORTS.get(chosen)
        elif transport is not None and transport in valid:
            chosen = transport
        elif transport is not None and not any(transport in valid_transports(s) for s in _named(specs)):
            chosen = transport  # nobody can use it: report below for this strategy
        else:
            chosen = strategy.default_transport  # --transport is for the strategies it fits
        if chosen not in valid:
            raise LionsimError(
                f"strategy {name!r} cannot use transport {chosen!r} (it sends {strategy.payload_kind}); "
                f"valid transports: {', '.join(valid)}"
            )
        run = RunSpec(name, chosen)
        if run in runs:
            raise LionsimError(f"strategy {run.label} given twice")
        runs.append(run)
    return runs


def _named(specs: list[str]) -> list[type[Strategy]]:
    return [STRATEGIES.get(s.partition("@")[0]) for s in specs]
