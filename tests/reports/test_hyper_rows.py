"""report.md's Configuration table names each run's resolved hyperparameters (`hyper.RUN` rows):
they were in no row (a reader saw a run's own lr only in the Reproduce command), for a bench and
for a sweep alike (a sweep's: tests/sweep/test_lr_axis.py)."""

from __future__ import annotations

from lionsim.reports.hyper_rows import hyper_rows
from lionsim.reports.markdown import write_report
from lionsim.strategies import STRATEGIES
from tests.helpers.cli import TINY_BENCH, exit_code


def test_rows_say_each_value_and_each_cells_where_they_differ():
    tables = [{"adamw@fp32-allreduce": {"lr": 0.001, "weight_decay": 0.01, "betas": [0.9, 0.999]},
               "signsgd@allgather-1bit": {"lr": 0.0001, "weight_decay": 0.0}},
              {"adamw@fp32-allreduce": {"lr": 0.01, "weight_decay": 0.01, "betas": [0.9, 0.999]}},
              None]  # a cell whose record said nothing
    assert hyper_rows(tables) == [
        ["hyper.adamw@fp32-allreduce", "lr 0.001/0.01 (by cell), weight_decay 0.01, betas (0.9, 0.999)"],
        ["hyper.signsgd@allgather-1bit", "lr 0.0001, weight_decay 0"]]
    assert hyper_rows([{}]) == [] and hyper_rows([]) == []
    local = hyper_rows([{"diloco@fp32-allreduce": {"lr": 0.01}}], {"diloco@fp32-allreduce": 5})
    assert local == [["hyper.diloco H=5@fp32-allreduce", "lr 0.01"]]  # as every other row names it


def _row_text(values) -> str:
    """A row's text written here from the values themselves (the reference)."""
    return f"lr {values.lr!r}, weight_decay {values.weight_decay:g}, betas ({values.betas[0]:g}, {values.betas[1]:g})"


def test_a_bench_report_names_each_runs_own_and_default_hyperparameters(tmp_path):
    out = tmp_path / "r"
    assert exit_code([*TINY_BENCH, "-s", "adamw,lion", "--hyper", '{"lion": {"lr": 0.0003, "betas": [0.95, 0.98]}}',
                      "--out", str(out)]) == 0
    config = write_report(out).read_text().split("## Configuration\n\n")[1].split("\n\n")[0]
    adamw = STRATEGIES.get("adamw").defaults_for("mlp")
    lion = STRATEGIES.get("lion").defaults_for("mlp")
    assert f"| hyper.adamw@fp32-allreduce | {_row_text(adamw)} |" in config
    assert f"| hyper.lion@fp32-allreduce | lr 0.0003, weight_decay {lion.weight_decay:g}, betas (0.95, 0.98) |" in config
