"""What each strategy's own kernels move per parameter (lionsim.steptime.passes adds its payload,
its transport's packing and the aggregate): its local rule and its update, one ideal fused kernel
per pass, every input read once and every output written once.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.steptime.wire_passes import F32


@dataclass(frozen=True, slots=True)
class StrategyBytes:
    """What a strategy's own kernels move per parameter, besides its payload and the aggregate."""

    rule: float
    """Local rule: bytes read and written (gradient, state, extra statistic passes)."""
    update: float
    """Update: bytes read and written of the replica and the state."""
    why: str
    """The accounting, in words."""


STRATEGY_BYTES: dict[str, StrategyBytes] = {
    "adamw": StrategyBytes(0, 6 * F32, "no local rule (the gradient is sent); update reads p, m, v, writes p, m, v"),
    "lion": StrategyBytes(0, 4 * F32, "no local rule; update reads p, m, writes p, m"),
    "sgdm": StrategyBytes(0, 4 * F32, "no local rule; update reads p, buf, writes p, buf"),
    "dlion-mavo": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "dlion-avg": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "signum-mv": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "lioncub-l1": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-linf": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for max|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-l0": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean log|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-ternary": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "signsgd": StrategyBytes(F32, 2 * F32, "rule reads g; update reads p, writes p"),
    "qsgd": StrategyBytes(
        2 * F32, 4 * F32, "rule: a pass reading g for ||g|| per tensor, then reads g (draws from a counter RNG in "
        "registers); update (SGD momentum) reads p, buf, writes p, buf"
    ),
    "onebit-adam": StrategyBytes(
        7 * F32, 5 * F32, "rule (1-bit phase) reads g, m, e, writes m; a pass reading m, e for ||m + e||; then reads "
        "m, e, writes e; update reads p, m, v, writes p, m"
    ),
    "ef-signsgd": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, e for mean|p| per tensor, then reads g, e, writes e; update reads p, writes p"
    ),
    "terngrad": StrategyBytes(
        3 * F32, 4 * F32,
        "rule: a pass reading g for its sum and sum of squares per tensor (sigma of the 2.5 sigma clip), a pass "
        "reading g for max|clipped g| per tensor, then reads g (clip and Bernoulli draws from a counter RNG in registers); "
        "update (SGD momentum) reads p, buf, writes p, buf",
    ),
    "dgc": StrategyBytes(
        6 * F32, 2 * F32, "rule reads g, u, v, writes u, v, then a pass reading |v| for the top-k threshold; update reads p, writes p"
    ),
    "powersgd": StrategyBytes(
        3 * F32, 9 * F32, "rule reads g, e, writes M = g + e (in e); update: AdamW reads p, m, v, writes p, m, v, then "
        "reads M and the average, writes e (the warm-up steps are priced as compressed ones: conservative)"
    ),
    "demo": StrategyBytes(
        12 * F32, 3 * F32, "rule reads g, delta, writes delta; the DCT reads delta, writes C; top-k reads |C|; the "
        "sent part is scattered (zero fill, write) and inverse-transformed (read, write); delta -= it (read 2, write); "
        "update: the inverse DCT of the mean writes the update, then reads p and it, writes p"
    ),
    # local-step strategies at a sync step, priced with the default inner AdamW (local steps: LOCAL_STEP_BYTES)
    "localsgd": StrategyBytes(
        10 * F32, 6 * F32, "rule: the inner AdamW step (reads g, p_i, m_i, v_i, writes p_i, m_i, v_i), then reads p, p_i, "
        "writes delta_i; update: the outer step reads p, buf, writes p, buf, then p copied to p_i (read, write)"
    ),
    "diloco": StrategyBytes(
        10 * F32, 6 * F32, "rule: the inner AdamW step (reads g, p_i, m_i, v_i, writes p_i, m_i, v_i), then reads p, p_i, "
        "writes delta_i; update: the outer Nesterov step reads p, buf, writes p, buf, then p copied to p_i"
    ),
    "diloco-int8": StrategyBytes(
        12 * F32, 6 * F32, "rule: inner AdamW step, delta_i, a pass reading delta_i for max|delta_i| per tensor, then "
        "reads delta_i (draws from a counter hash in registers) for the levels; update as diloco"
    ),
    "diloco-sign": StrategyBytes(
        12 * F32, 6 * F32, "rule: inner AdamW step, delta_i, a pass reading delta_i for mean|delta_i| per tensor, then "
        "reads delta_i for its sign; update as diloco"
    ),
}

LOCAL_STEP_BYTES: dict[str, float] = {name: 7 * F32 for name in ("localsgd", "diloco", "diloco-int8", "diloco-sign")}
"""Bytes per parameter of a local step (no sync) of a local-step strategy: the inner AdamW step
alone (reads g, p_i, m_i, v_i, writes p_i, m_i, v_i); nothing is decoded or applied to p."""
