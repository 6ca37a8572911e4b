"""The progress display: lines on stderr off a terminal, and a bar with no loss before a run's
first step."""

from __future__ import annotations

import io
import os

from rich.console import Console

from lionsim.cli.progress import step_progress


def test_progress_lines_off_a_terminal_go_to_stderr(monkeypatch, capsys):
    from rich.console import Console

    from lionsim.cli import progress

    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)
    with progress.step_progress(Console(file=open(os.devnull, "w")), ["a@b"], 2) as update:
        update("a@b", 1, 1.5)
    out, err = capsys.readouterr()
    assert out == "" and "run 1/1 a@b step 1/2 loss 1.5000" in err


def test_a_progress_bar_shows_no_loss_before_a_step():
    console = Console(file=io.StringIO(), force_terminal=True, record=True, width=120)
    with step_progress(console, ["adamw@fp32-allreduce", "lion@fp32-allreduce"], 10) as update:
        update("adamw@fp32-allreduce", 1, 2.5)
    text = console.export_text()
    assert "nan" not in text.lower()
