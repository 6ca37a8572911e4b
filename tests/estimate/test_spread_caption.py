"""The uneven-workers table's `slowest` for a local-step run is one step's slowest worker (as
estimate.csv's compute_max_s), which no one waits for: its caption says so, and only where a
local-step run is in the table."""

from __future__ import annotations

from tests.helpers.cli import run_cli

ARGS = ["estimate", "--model", "gpt2-124m", "--workers", "8", "--network", "10gbe", "--compute-spread", "slow:1:1.5"]
CLAUSE = "its slowest is still one step's slowest worker, whom no one waits for"


def test_local_step_caption_says_slowest_is_per_step(capsys):
    code, out, _ = run_cli([*ARGS, "-s", "adamw", "-s", "diloco", "--local-steps", "10"], capsys)
    assert code == 0 and CLAUSE in " ".join(out.split())


def test_no_local_step_run_no_clause(capsys):
    code, out, _ = run_cli([*ARGS, "-s", "adamw"], capsys)
    assert code == 0 and "uneven workers" in out and CLAUSE not in " ".join(out.split())
