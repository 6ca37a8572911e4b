"""The uneven-workers table's `slowest` for a local-step run is the round's slowest worker per step
(estimate.csv's compute_max_s: whom the sync waits for), as its wait, p50 and p99 are the round's:
its caption says so, and only where a local-step run is in the table."""

from __future__ import annotations

from tests.helpers.cli import run_cli

ARGS = ["estimate", "--model", "gpt2-124m", "--workers", "8", "--network", "10gbe", "--compute-spread", "slow:1:1.5"]
CLAUSE = "its slowest, wait, p50 and p99 are the round's over H (slowest: the round's slowest worker, whom the sync waits for)"


def test_local_step_caption_says_slowest_is_the_rounds(capsys):
    code, out, _ = run_cli([*ARGS, "-s", "adamw", "-s", "diloco", "--local-steps", "10"], capsys)
    assert code == 0 and CLAUSE in " ".join(out.split())
    assert "one step's slowest" not in " ".join(out.split())


def test_no_local_step_run_no_clause(capsys):
    code, out, _ = run_cli([*ARGS, "-s", "adamw"], capsys)
    assert code == 0 and "uneven workers" in out and "the round's" not in " ".join(out.split())
