"""lionsim.perf.sim's point: trained on one torch thread, the caller's count restored after."""

from __future__ import annotations

import torch

from lionsim.perf.sim import WARM_STEPS, sim_point


def test_a_sim_point_runs_on_one_thread_and_gives_the_callers_count_back(monkeypatch):
    seen = []
    import lionsim.training.loop as loop

    real = loop.train_run
    monkeypatch.setattr(loop, "train_run", lambda *a, **k: (seen.append(torch.get_num_threads()), real(*a, **k))[1])
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        point = sim_point("mlp", "tiny", 2, WARM_STEPS + 3, "adamw", "default")
        assert seen == [1] and torch.get_num_threads() == 2  # it left the whole process on one thread
    finally:
        torch.set_num_threads(before)
    assert point["workers"] == 2 and point["steps_counted"] == 2 and point["step_s"] > 0
