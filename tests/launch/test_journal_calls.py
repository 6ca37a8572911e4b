"""An interrupted measured run publishes calls.csv for exactly the steps steps.csv holds: the
finished runs' calls as staged, the run under way's from rank 0's calls journal (lines of a
step whose row never reached the step journal, as a kill between the two leaves, dropped)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lionsim.bench import BenchConfig, plan
from lionsim.launch.journal import CALLS_JOURNAL, StepJournal, finalize
from lionsim.reports.files import META_FILE
from lionsim.reports.publish import RunDir
from lionsim.reports.writing import stage_result
from lionsim.training.loop import RunStopped
from lionsim.training.results import Results
from lionsim.training.stop import StopRequest
from tests.helpers.recorded import as_three_ranks

CFG = BenchConfig(workload="mlp", model_size="tiny", workers=3, batch_size=8, steps=6, eval_every=3,
                  strategies=["adamw", "lion"], compute="h100")


def test_an_interrupted_run_publishes_the_calls_of_every_step_it_keeps(tmp_path):
    whole = as_three_ranks(plan(CFG))
    whole.run()
    expected = Results(whole).result().calls
    out = tmp_path / "o"
    target = RunDir(out)
    runner = as_three_ranks(plan(CFG))
    results = Results(runner)
    journal = StepJournal(target)
    request = StopRequest()
    target.write(lambda d: [(d / META_FILE).write_text(json.dumps(results.record("running", None)))])

    def on_step(run, step, loss) -> None:  # as rank 0 does (lionsim.launch.rank)
        journal.add_step(results)
        if run.label == "lion@fp32-allreduce" and step == 4:
            request.ask()

    def after_run(done) -> None:
        stage_result(target, results.result(status="running"), plots=False)
        journal.reset()

    with pytest.raises(RunStopped):
        runner.run(on_step, after_run, stop=request)
    journal.close()
    cut = (target.stage / CALLS_JOURNAL).read_text().splitlines()[-1].replace(",4,", ",5,", 1)
    with open(target.stage / CALLS_JOURNAL, "a") as f:  # step 5's calls, its row never written
        f.write(cut + "\n")
    assert finalize(out, "interrupted", "interrupted") == 10
    steps, calls = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "calls.csv")
    assert set(zip(calls["strategy"], calls["step"])) == set(zip(steps["strategy"], steps["step"]))
    kept = expected[(expected["strategy"] == "adamw") | (expected["step"] <= 4)].reset_index(drop=True)
    billed = ["time_s", "wait_s"]  # the journal's are rank 0's own (no max over ranks at a step's end)
    pd.testing.assert_frame_equal(calls.drop(columns=billed), kept.drop(columns=billed), check_dtype=False)
    assert (calls["time_s"] == 0.002).all() and list(calls["wait_s"][-4:]) == [0.0005] * 4
