"""lionsim's command line: `lionsim ARGS` (or `python cli.py ARGS`)."""

from lionsim.cli.app import app, main

# Each import registers its commands on `app`.
from lionsim.cli import bench_cmd, comm_cmd, estimate_cmd, lists, network_cmds, plot_cmd, regress_cmd  # noqa: E402,F401
from lionsim.cli import sweep_cmd  # noqa: E402,F401
from lionsim.cli import report_cmd  # noqa: E402,F401

__all__ = ["app", "main"]
