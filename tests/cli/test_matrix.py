"""`lionsim strategies --matrix` reads the registries (it cannot drift from the code), and the
table in docs/strategies.md is its Markdown, word for word."""

import dataclasses
import io
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.cli.matrix import MATRIX_COLUMNS, matrix_markdown, strategy_matrix
from lionsim.strategies import STRATEGIES, valid_transports

PAGE = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"


def test_the_docs_hold_the_matrix_as_the_registries_give_it():
    assert matrix_markdown() in PAGE.read_text(encoding="utf-8"), "docs/strategies.md: paste cli.matrix.matrix_markdown()"


def test_matrix_rows_follow_the_strategies_and_what_they_declare(capsys):
    with pytest.raises(SystemExit) as done:
        main(["strategies", "--matrix", "--format", "csv"])
    assert done.value.code == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(frame.columns) == MATRIX_COLUMNS
    assert list(frame.strategy) == STRATEGIES.names()
    for row in strategy_matrix():
        cls = STRATEGIES.get(row["strategy"])
        transports = row["transports"].split(", ")
        assert transports[0] == cls.default_transport and sorted(transports) == sorted(valid_transports(cls))
        assert (row["momentum_sync"] != "-") == cls.has_momentum_sync
        local = any(f.name == "local_steps" for f in dataclasses.fields(cls.Options))
        assert (row["local_steps"] != "-") == local
    rows = {r["strategy"]: r for r in strategy_matrix("vit")}
    assert rows["diloco"]["local_steps"].startswith("H = ") and "--outer-lr" in rows["diloco"]["options"]
    assert rows["powersgd"]["estimate"].startswith("yes (--model") and rows["demo"]["estimate"] == rows["powersgd"]["estimate"]
    assert rows["dlion-mavo"]["distributed_lion"] == 'vote="mavo"' and "--tie" in rows["dlion-mavo"]["options"]


def test_matrix_table_fits_80_columns(capsys, monkeypatch):
    from lionsim.cli.app import console

    monkeypatch.setattr(console, "width", 80)
    with pytest.raises(SystemExit):
        main(["strategies", "--matrix"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "diloco-sign" in out and "H = " in out


def test_workers_is_refused_with_the_matrix_which_has_no_per_worker_column(capsys):
    from tests.helpers.cli import one_line_exit_2

    # -n 3 and -n 64 gave the same matrix: it was accepted and ignored
    one_line_exit_2(["strategies", "--matrix", "--format", "csv", "-n", "3"], capsys,
                    "--workers 3 does not apply to --matrix: no column of it depends on the worker count; "
                    "accepted with --matrix: --workload, --format")
    one_line_exit_2(["strategies", "--matrix", "-n", "0"], capsys, "bad --workers 0")  # the value first
