"""Measured hyperparameter defaults per (strategy, workload) pair, for the strategies that share
one measurement (the Lion family on gpt, sgdm on vit).

A strategy's own `defaults` (its module) were tuned on the default `vit` bench; a workload
listed here overrides them for the strategies it names; a strategy module's own `tuning`
(Strategy.tuning) wins over this table. Every entry says what was measured.
`lionsim strategies --workload NAME` shows the defaults a run on NAME gets.
"""

from __future__ import annotations

LION_FAMILY = ("lion", "dlion-mavo", "dlion-avg", "lioncub-l1", "lioncub-linf", "lioncub-l0", "lioncub-ternary", "signum-mv")

WORKLOAD_DEFAULTS: dict[str, dict[str, dict]] = {}
"""workload -> strategy -> the Hyper fields (lr, weight_decay, betas) and Options fields that
differ from the strategy's own defaults; filled below, one block per workload with its measurement."""


def workload_defaults(strategy: str, workload: str | None) -> dict:
    """The measured overrides for (strategy, workload): {} keeps the strategy's own."""
    return WORKLOAD_DEFAULTS.get(workload or "", {}).get(strategy, {})


# gpt (character-level transformer). Measured: 300 steps, 8 workers x 32 sequences. At the vit
# default lr 3e-3 the Lion family spiked (to 5.2) and ended at loss 2.82-3.28 against AdamW's 1.89
# on a 10 KB text; at lr 1e-3 Lion matched AdamW. Re-measured on a 675 KB text (vim's
# version7.txt): Lion at 3e-3 was at loss 3.00 at step 141 against AdamW's 2.14; at 1e-3 it
# reached 1.84 at step 300 against AdamW's 1.73, without a spike.
# Sign updates (signum's too) move every coordinate by the full lr, so a smaller lr suits the wide embedding and
# the attention logits; AdamW keeps its 3e-3.
WORKLOAD_DEFAULTS["gpt"] = {name: {"lr": 1e-3} for name in LION_FAMILY}

# vit (the default bench). sgdm's own lr 0.05 left it near chance: 100 steps, 8 workers x 32
# images, eval accuracy 18.5% against 82-83% for signum-mv and dlion-mavo. Measured at 0.2:
# 41.9%; 0.5: 39.6%; 1.0 diverged (loss 58 at step 70). 0.2 it is; SGD trails sign methods on
# this ViT, as in the Distributed Lion paper's table (REFERENCE.md 2).
WORKLOAD_DEFAULTS["vit"] = {"sgdm": {"lr": 0.2}}

# The measured defaults of powersgd, localsgd, diloco and demo are in their own modules (`tuning`).
