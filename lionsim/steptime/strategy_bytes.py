"""The form of what a strategy's own kernels move per parameter (lionsim.steptime.passes adds its
payload, its transport's packing and the aggregate): its local rule and its update, one ideal
fused kernel per pass, every input read once and every output written once. Each strategy
declares its own in its module (Strategy.bytes, Strategy.local_step_bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.steptime.wire_passes import F32

__all__ = ["F32", "StrategyBytes"]


@dataclass(frozen=True, slots=True)
class StrategyBytes:
    """What a strategy's own kernels move per parameter, besides its payload and the aggregate."""

    rule: float
    """Local rule: bytes read and written (gradient, state, extra statistic passes)."""
    update: float
    """Update: bytes read and written of the replica and the state."""
    why: str
    """The accounting, in words."""
