"""Measured collectives, nccl-tests style, on a real process group (`lionsim comm --backend gloo|nccl`).

config.py says what to measure, ops.py how each collective is sized and run, rank.py what
one rank does, launch.py starts and watches the ranks, table.py turns the timings into
comm.csv rows beside the model's. transports.py measures the vote transports end to end
(`python -m lionsim.perf transports`).
"""

from lionsim.measure.config import MeasureConfig
from lionsim.measure.launch import measure
from lionsim.measure.ops import sized
from lionsim.measure.table import MEASURED_COLUMNS, Point, measured_rows, with_model

__all__ = ["MEASURED_COLUMNS", "MeasureConfig", "Point", "measure", "measured_rows", "sized", "with_model"]
