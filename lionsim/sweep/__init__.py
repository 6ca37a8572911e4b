"""`lionsim sweep`: a grid of bench runs under one root, resumable, optionally in parallel.

    grid.py    the axes, parsed and checked (comma lists, TOML arrays)
    cells.py   cells (one run on one network) and training units (cells that share a training)
    config.py  SweepConfig: grid + the bench options every cell shares; resume rules
    store.py   ROOT/sweep.json and ROOT/cells/<id>/, published whole
    tables.py  sweep_steps.csv and sweep_summary.csv, rebuilt from the finished cells
    train.py   one unit: train once, book per network (in this process or a worker)
    runner.py  run_sweep: the order of work that makes every interruption safe
"""

from lionsim.sweep.cells import Cell, Unit
from lionsim.sweep.config import SweepConfig
from lionsim.sweep.grid import Grid
from lionsim.sweep.runner import SweepEvents, SweepInterrupted, SweepOutcome, run_sweep
from lionsim.sweep.tables import STEPS_CSV, SUMMARY_CSV

__all__ = ["STEPS_CSV", "SUMMARY_CSV", "Cell", "Grid", "SweepConfig", "SweepEvents", "SweepInterrupted",
           "SweepOutcome", "Unit", "run_sweep"]
