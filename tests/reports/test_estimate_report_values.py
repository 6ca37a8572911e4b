"""report.md of an estimate sweep prints its swept values as the tables print numbers: a bandwidth to 3
significant digits (lionsim.numbers.sig), a worker count whole."""

from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

from lionsim.reports.estimate_report import _pivot


def _frame(values) -> pd.DataFrame:
    return pd.DataFrame({"strategy": "adamw", "transport": "fp32-allreduce", "sweep_value": values,
                         "step_s": [0.5] * len(values)})


def test_swept_bandwidths_print_to_three_significant_digits_and_worker_counts_whole():
    """A log-spaced bandwidth sweep printed "0.562341" and "3.16228"."""
    bandwidths = np.logspace(-1, 1, 5)  # 0.1, 0.316228, 1, 3.16228, 10
    rows = [line.split(" | ")[0].strip("| ") for line in _pivot(_frame(bandwidths), "step_s", str, "bandwidth")
            .splitlines()[2:]]
    assert rows == ["0.1", "0.316", "1", "3.16", "10"]
    rows = [line.split(" | ")[0].strip("| ") for line in _pivot(_frame([8.0, 1024.0]), "step_s", str, "workers")
            .splitlines()[2:]]
    assert rows == ["8", "1,024"]


@pytest.mark.parametrize("sweep", [[], ["--sweep", "bandwidth=1,10"]])
def test_the_report_of_an_estimate_carries_its_caption_notes_and_the_strategy_options_given(tmp_path, sweep):
    """report dropped the estimate's memory warning and its short-bench H note, and listed --powersgd-rank
    only in the Reproduce line: the Notes section says what the terminal said (estimate.json's notes),
    the configuration table the options given."""
    from typer.testing import CliRunner

    from lionsim.cli.app import app

    out = tmp_path / "est"
    done = CliRunner().invoke(app, ["estimate", "--model", "llama-7b", "-s", "adamw,diloco,powersgd",
                                    "--powersgd-rank", "8", *sweep, "--out", str(out)])
    assert done.exit_code == 0, done.output
    printed = " ".join(done.output.split())
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    notes = report.split("## Notes\n\n")[1].split("\n\n")[0].splitlines()
    assert any(n.startswith("- Does not fit on one h100") for n in notes)
    assert any(n.startswith("- H: lionsim's default") for n in notes)
    for note in notes:  # each as the terminal printed it
        assert " ".join(note.removeprefix("- ").split()) in printed
    config = report.split("## Configuration\n\n")[1].split("\n\n")[0]
    assert "| --powersgd-rank | 8 |" in config
