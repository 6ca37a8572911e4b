"""The form of what a strategy's own kernels move per parameter (lionsim.steptime.passes adds its
payload, its transport's packing and the aggregate): its local rule and its update, one ideal
fused kernel per pass, every input read once and every output written once; and, for
`estimate --kernels table`, the kernels its implementation runs: the optimizer step its rule and
its update run (lionsim.optim.steps, in the form `--optimizer` picks) and its other kernels
(scales, error feedback, top-k, casts: lionsim.compute.kernel_ops.Op, as its code runs them).
Each strategy declares its own in its module (Strategy.bytes, Strategy.local_step_bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.compute.kernel_ops import Op, Step

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
    rule_step: Step | None = None
    """The optimizer step the rule runs (a Lion-family vote, a local step's inner optimizer)."""
    update_step: Step | None = None
    """The optimizer step the update runs, reading the aggregate as its gradient."""
    rule_ops: tuple[Op, ...] = ()
    """The rule's other kernels, the payload's included, as the implementation runs them."""
    update_ops: tuple[Op, ...] = ()
    """The update's other kernels."""

    @property
    def declares_kernels(self) -> bool:
        """Whether the real kernels are declared (else `estimate --kernels table` prices the ideal
        passes as float-pass kernels, one each)."""
        return bool(self.rule_step or self.update_step or self.rule_ops or self.update_ops)
