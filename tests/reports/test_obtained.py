"""What a caption says of how its step times were obtained (lionsim.reports.obtained), read from
run.json records lionsim wrote: the library that priced comm, and medians per step kind."""

from __future__ import annotations

import json

import pytest

from lionsim.reports.files import read_json
from lionsim.reports.obtained import run_times
from tests.helpers.cli import TINY_BENCH
from tests.helpers.timing import run_record


@pytest.fixture(scope="module")
def preset_run(tmp_path_factory):
    """A local-step bench (localsgd, H = 2: sync and local steps, two step kinds) on dgx-h100, a
    GPU-cluster preset NCCL's traits price, its compute measured here; no --traits typed. Its
    printed output and run.json."""
    from lionsim.cli.app import main

    out = tmp_path_factory.mktemp("preset") / "r"
    argv = [*TINY_BENCH, "--steps", "4", "-s", "localsgd", "--local-steps", "2", "--compute", "measured",
            "--warmup-steps", "1", "--network", "dgx-h100", "--out", str(out)]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    return out, read_json(out / "run.json")


def test_a_presets_nccl_traits_are_named_whether_or_not_traits_was_typed(preset_run):
    """The caption read config's --traits (None unless typed): a dgx-h100 run said
    "comm on dgx-h100 (alpha-beta)" while run.json's network.traits named nccl."""
    _, meta = preset_run
    assert meta["config"].get("traits") is None and meta["network"]["traits"]["name"] == "nccl"
    said = run_times(meta)
    assert "comm modelled on dgx-h100 (nccl traits)" in said, said
    one_rank_gloo = {**meta, "network": {"name": "10gbe", "traits": {"name": "gloo"}}}
    assert "comm modelled on 10gbe (gloo traits)" in run_times(one_rank_gloo)
    assert "(alpha-beta)" in run_times(run_record())  # the ideal library: the formulas alone


def test_medians_of_a_run_with_several_step_kinds_say_per_kind(preset_run):
    """Booking takes a median per step kind (training.booking.medians_by_kind): a local-step run's
    medians each cover fewer steps than "median of N steps" said."""
    _, meta = preset_run
    assert meta["timing"]["step_kinds"] == 2
    warm = meta["timing"]["warmup_steps"]
    assert f"enc/upd measured (median per step kind over {4 - warm} steps, {warm} warm-up dropped)" in run_times(meta)
    one_kind = {**meta, "timing": {**meta["timing"], "step_kinds": 1}}
    assert f"enc/upd measured (median of {4 - warm} steps, {warm} warm-up dropped)" in run_times(one_kind)


def test_sweep_captions_name_each_cells_library_and_a_gloo_cells_link(preset_run, tmp_path):
    """A sweep's caption read no library from its cells (alpha-beta for a dgx-h100 cell), and said
    "comm measured (median ...)" of a gloo sweep where bench says "comm measured on loopback"."""
    import pandas as pd

    from lionsim.cli.sweep_view import cells_times

    _, meta = preset_run

    def cells(records: dict) -> pd.DataFrame:
        for cell, record in records.items():
            (tmp_path / "cells" / cell).mkdir(parents=True, exist_ok=True)
            (tmp_path / "cells" / cell / "run.json").write_text(json.dumps(record))
        return pd.DataFrame([{"cell": cell, "network": record["network"]["name"]} for cell, record in records.items()])

    assert "comm modelled on dgx-h100 (nccl traits)" in cells_times(cells({"a": meta}), tmp_path)
    flat = {**meta, "network": {**meta["network"], "name": "1gbe", "traits": {"name": "ideal"}}}
    both = cells_times(cells({"a": meta, "b": flat}), tmp_path)
    assert "comm modelled on each row's network (each network's library)" in both, both
    gloo = run_record(backend="gloo", steps=5, warmup=2)
    said = cells_times(cells({"g": gloo}), tmp_path)
    assert "comm measured on loopback (median of 3 steps, 2 warm-up dropped)" in said, said


def test_the_wait_line_says_where_a_local_step_run_waits_by_backend():
    """On sim a local-step run waits once a round (lionsim.steptime.rounds); on gloo and nccl every step
    waits, as booking prices it (the ranks exchange their losses each step): the report says which."""
    from lionsim.reports.obtained import wait_note

    sim = wait_note({"compute_spread": ["slow:1:3"], "backend": "sim"}, local_steps=True)
    gloo = wait_note({"compute_spread": ["slow:1:3"], "backend": "gloo"}, local_steps=True)
    assert "waits once a round" in sim and "every step waits" not in sim
    assert "every step waits" in gloo and "once a round" not in gloo
    assert wait_note({"backend": "gloo"}, local_steps=True) is None  # no spread: nothing waits


@pytest.mark.parametrize("device", ["t4", "h100"])
@pytest.mark.parametrize("flops, bound", [(7.08e6, True), (1e15, False)], ids=["tiny-mlp", "large"])
def test_a_modelled_caption_names_the_launch_bound_where_it_binds(device, flops, bound):
    """bench's built-in workloads are launch-bound on every device, so --compute t4 and h100 give
    one compute time while the caption said "FLOPs at peak x mfu". Reference: 67 kernels x the
    device's 10 us floor = 670 us, against the FLOPs over the device's peak x its default mfu."""
    from lionsim.compute.devices import DEVICES

    d = DEVICES.get(device)
    assert (67 * 10e-6 > flops / (d.peak_flops * d.mfu)) is bound and d.kernel_s == 10e-6
    meta = run_record(compute=device)
    meta["timing"]["compute_counted"] = {"flops": flops, "kernels": 67}
    said = run_times(meta)
    if bound:
        assert f"comp on {device} (launch-bound: 67 kernels at 10 us each, not FLOPs), enc/upd" in said, said
    else:
        assert f"comp on {device} (FLOPs at peak x mfu), enc/upd" in said, said


@pytest.mark.parametrize("config_ranks,hosts_ranks,one", [(1, None, True), (None, 1, True), (None, 2, False),
                                                         (2, 2, False), (None, None, False)])
def test_a_run_of_one_rank_is_named_so_whether_or_not_ranks_was_typed(config_ranks, hosts_ranks, one):
    """`bench --backend nccl` on one GPU (--ranks left out: one per GPU) was titled "loopback, measured"
    while its caption said comm was modelled: the title read config's --ranks (None unless typed)."""
    from lionsim.reports.titles import named_network

    meta = {"config": {"backend": "nccl", "ranks": config_ranks}, "network_given": False,
            **({"hosts": {"ranks": hosts_ranks}} if hosts_ranks else {})}
    named = named_network("1gbe", meta, measured=True)
    assert (named == "1gbe (1 nccl rank: comm modelled)") == one, named
