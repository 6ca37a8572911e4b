"""The time columns of measured gloo rows hold together as docs/time-model.md defines them:
step_s is the sum of its parts, wait_s (what waiting for the slowest adds) included; under
--compute-spread compute_s is the median worker's compute and wait_s the slowest's excess;
without one compute_s is the bench's one figure and the step adds no wait, the ranks' measured
spread staying in compute_median_s and compute_max_s. Checked on rows two real gloo ranks
booked, and on the same rows booked again from rank 0's journal (an interrupted run's)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lionsim.backends import ProcessGroupComm
from lionsim.bench import BenchConfig, plan
from lionsim.launch.journal import KIND, journal_rows
from lionsim.training.loop import Place
from lionsim.training.results import Results
from lionsim.training.runner import Runner

STEPS = 4
PARTS = ["compute_s", "wait_s", "encode_s", "comm_exposed_s", "decode_s", "update_s"]


def rank_rows(rank: int, spread: list[str]) -> pd.DataFrame | None:
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=2, batch_size=8, steps=STEPS, eval_every=STEPS,
                      strategies=["adamw"], backend="gloo", compute_spread=spread, warmup_steps=1)
    runner = Runner(plan(cfg), Place(ProcessGroupComm(None, local_workers=1)))
    runner.run()
    steps = Results(runner).result().steps  # every rank books (its collectives), rank 0's rows are the file's
    return steps if rank == 0 else None


@pytest.mark.parametrize("spread", [[], ["slow:1:3"]], ids=["even", "slow-rank"])
def test_a_measured_gloo_row_is_the_sum_of_its_parts(spread, gloo_group, tmp_path):
    rows = gloo_group(2).run(rank_rows, spread)[0]
    assert (rows["ranks"] == 2).all() and len(rows) == STEPS
    np.testing.assert_allclose(rows["step_s"], rows[PARTS].sum(axis=1), rtol=1e-12)
    assert (rows["step_s"] >= rows["wait_s"]).all() and (rows["wait_s"] >= 0).all()
    assert (rows["compute_max_s"] >= rows["compute_median_s"]).all()
    if spread:  # the slow rank sleeps: its excess is the wait, the median worker's compute is compute_s
        np.testing.assert_allclose(rows["compute_s"], rows["compute_median_s"], rtol=1e-12)
        np.testing.assert_allclose(rows["wait_s"], rows["compute_max_s"] - rows["compute_median_s"], rtol=1e-12)
        assert (rows["wait_s"] > 0).all()
    else:  # compute_s is the bench's one figure, the same on every step; nothing waits on top of it
        assert rows["compute_s"].nunique() == 1 and (rows["wait_s"] == 0).all()
    # rank 0's journal (what an interrupted run publishes) books the same sum
    journal = tmp_path / "journal.csv"
    rows.drop(columns=["sim_time_s"]).assign(**{KIND: "step"}).to_csv(journal, index=False)
    booked = journal_rows(journal, warmup=1)
    np.testing.assert_allclose(booked["step_s"], booked[PARTS].sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(booked["sim_time_s"], booked["step_s"].cumsum(), rtol=1e-12)



def device_rows(rank: int, backend: str) -> pd.DataFrame | None:
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=2, batch_size=2, steps=2, eval_every=2,
                      strategies=["adamw"], backend=backend, compute="h100", warmup_steps=0)
    comm = ProcessGroupComm(None, local_workers=1) if backend == "gloo" else None
    runner = Runner(plan(cfg), Place(comm) if comm else None)
    runner.run()
    steps = Results(runner).result().steps
    return steps if rank == 0 else None


def test_gloo_with_a_device_models_the_median_and_slowest_compute_as_sim_does(gloo_group):
    """--compute h100: compute_s is modelled for the device, so the median and slowest workers'
    compute are too (not this CPU's ranks' measured times, 10x the device's), as sim books them."""
    rows = gloo_group(2).run(device_rows, "gloo")[0]
    sim = device_rows(0, "sim")
    cols = ["compute_s", "compute_median_s", "compute_max_s", "wait_s"]
    np.testing.assert_allclose(rows[cols].to_numpy(), sim[cols].to_numpy(), rtol=1e-12)
    assert (rows["wait_s"] == 0).all()
    np.testing.assert_allclose(rows["compute_max_s"], rows["compute_s"], rtol=1e-12)
