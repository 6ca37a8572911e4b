"""A reader that stops early (`| head -1`, a real pipe) is not an error: every command that
writes files writes them all (before it prints) and exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


TINY = "-w mlp --model-size tiny -n 2 -b 8 --steps 3 --eval-every 3"
COMMANDS = {
    "estimate --sweep": ("estimate -m gpt2-124m --sweep workers=2:64:6 --out {out}",
                         ["estimate.csv", "sweep.csv", "crossover.csv", "sweep.png", "sweep.svg"]),
    "sweep": (f"sweep {TINY} -s adamw,lion --out {{out}}",
              ["sweep.json", "sweep_steps.csv", "sweep_summary.csv", "loss_vs_step.png"]),
    "bench": (f"bench {TINY} -s adamw,lion --out {{out}}", ["steps.csv", "summary.csv", "run.json", "loss_vs_time.png"]),
    "bench --format csv": (f"bench {TINY} -s adamw --format csv --out {{out}}", ["steps.csv", "loss_vs_time.png"]),
    "comm": ("comm --sizes 1KB:1MB --out {out}", ["comm.csv", "comm_all_reduce.png"]),
    "regress --junit": ("regress --case mlp-n8-dir0.5 --junit {out}/junit.xml --report {out}/regress.md",
                        ["junit.xml", "regress.md"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", COMMANDS)
def test_a_closed_pipe_keeps_every_file(name, tmp_path):
    command, files = COMMANDS[name]
    out = tmp_path / "out"
    if name.startswith("regress"):
        out.mkdir()
    line = f"set -o pipefail; {sys.executable} -m lionsim {command.format(out=out)} | head -1"
    done = subprocess.run(line, shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr  # pipefail: lionsim's own status
    assert len(done.stdout.splitlines()) == 1
    assert not [x for x in done.stderr.splitlines() if x.startswith("error") or "Traceback" in x], done.stderr
    assert all((out / f).is_file() for f in files), sorted(p.name for p in Path(out).iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["strategies"], ["estimate", "--model", "gpt2-124m"]])
def test_a_reader_that_stops_early_is_exit_0(argv):
    done = subprocess.run(f"set -o pipefail; {sys.executable} -m lionsim {' '.join(argv)} | head -1", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr


def test_wrapped_prose_ends_no_line_with_a_blank_in_a_pipe():
    """Only tables lost their trailing blanks off a terminal: prose rich wrapped at a space kept it
    at the line's end (bench's "wrote 17 files to ..., " in a pipe)."""
    import io

    from lionsim.cli.app import _Console

    file = io.StringIO()
    shown = _Console(file=file, width=40, highlight=False, emoji=False)
    names = ", ".join(f"plot_{i}.png" for i in range(12))
    shown.print(f"wrote 12 files to /tmp/out/: {names}", markup=False)
    shown.print("[bold]model and error left out[/bold]: " + "word " * 20)
    lines = file.getvalue().splitlines()
    assert len(lines) > 4 and not [line for line in lines if line != line.rstrip()], lines
    assert " ".join(file.getvalue().split()) == f"wrote 12 files to /tmp/out/: {names} model and error left out: " + \
        " ".join(["word"] * 20)  # every word kept, markup rendered
