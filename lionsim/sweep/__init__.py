"""`lionsim sweep`: a grid of bench runs under one root, resumable, parallel, on one machine or many.

    grid.py     the axes, parsed and checked (comma lists, TOML arrays)
    cells.py    cells (one run on one network) and training units (cells that share a training)
    plan.py     SweepPlan: the grid, the bench options every cell shares, each unit's BenchPlan;
                resume rules (the command's SweepConfig, lionsim.config.sweep, plans it)
    store.py    ROOT/sweep.json and ROOT/cells/<id>/, published whole; failed.json
    tables.py   sweep_steps.csv and sweep_summary.csv, rebuilt from the finished cells
    train.py    one unit: train once, book per network (in this process, a worker or a Ray task)
    unit_state.py  a unit stopped by Ctrl-C: its state kept, which the rerun continues from
    execute/    where units run: local (this process or --jobs processes) or ray
    shards.py   --shard I/N: which units a scheduler's array task runs, and where it writes
    merge.py    shard parts combined into their root (`lionsim sweep merge ROOT`)
    runner.py   run_sweep: the order of work that makes every interruption safe

The package's names load on first use, so `lionsim sweep` can start its worker processes
(lionsim.sweep.execute.local.start_workers) before this process imports torch.
"""

from lionsim._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".cells": "Cell Unit",
    ".grid": "Grid",
    ".merge": "MergeOutcome merge_shards",
    ".plan": "SweepPlan",
    ".runner": "SweepEvents SweepInterrupted SweepOutcome run_sweep",
    ".shards": "Shard",
    ".tables": "STEPS_CSV SUMMARY_CSV",
})
