"""The state of a training unit a Ctrl-C stopped, kept so that the rerun continues it.

A sweep's unit is one bench run; stopped at a step boundary it leaves a RunCheckpoint
(lionsim.training.checkpoint), which the sweep's process writes where a bench keeps it, in the
unit's own hidden run directory ROOT/.units/<unit key>/ (no result; store.prepare leaves it). The rerun's unit loads it and continues
from its step, so its cells equal an uninterrupted sweep's, as `bench --resume` does. The state
is used only by a unit whose configuration (the resolved bench options, but the network, which
only prices the records) equals the one it was saved under; otherwise that unit starts over.
Once the unit's cells are published the state goes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lionsim.plan import BenchPlan
from lionsim.training.checkpoint import RunCheckpoint, load_checkpoint, save_checkpoint

UNITS_DIR = ".units"
PRICING = ("network", "out")
"""Options that do not change what a unit trains: left out of the comparison."""


def unit_dir(root: Path, key: str) -> Path:
    """Where a unit's state lives (its key is as safe a name as its cells' ids)."""
    return Path(root) / UNITS_DIR / key


def training_key(plan: BenchPlan) -> dict:
    """What a kept state must match: the unit's resolved options but the pricing ones."""
    from lionsim.training.record import resolved_config

    return {k: v for k, v in resolved_config(plan).items() if k not in PRICING}


def keep(root: Path, key: str, plan: BenchPlan, checkpoint: RunCheckpoint) -> None:
    """Write a stopped unit's state (atomically); a stop before its first step keeps nothing new."""
    if checkpoint.step == 0:
        return
    checkpoint.key = {"training": training_key(plan)}
    save_checkpoint(unit_dir(root, key), 0, checkpoint)


def kept(root: Path, key: str, plan: BenchPlan) -> RunCheckpoint | None:
    """The unit's kept state if it was saved under this configuration, else None (it starts over)."""
    checkpoint = load_checkpoint(unit_dir(root, key), 0)
    if checkpoint is None or checkpoint.key.get("training") != training_key(plan):
        return None
    return checkpoint


def drop(root: Path, key: str) -> None:
    """The unit finished (its cells are published): its state is no longer needed, nor the folder
    of the states once it holds none (a finished sweep leaves no empty .units behind)."""
    shutil.rmtree(unit_dir(root, key), ignore_errors=True)
    try:
        (Path(root) / UNITS_DIR).rmdir()  # only when empty: another unit's state stays
    except OSError:
        pass
