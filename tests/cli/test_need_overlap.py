"""--need's note on overlap: why a run that sends fewer bytes can need more bandwidth than one of
another schedule (its exchange waits after backward, where AdamW's buckets hide behind it). The runs
it names are checked against the priced step itself (a run whose exposed comm is all of its comm
waits after backward), and the pair it names against a brute force over the table's rows."""

from __future__ import annotations

import math

import pytest

from lionsim.estimate import EstimateConfig, estimate, resolve
from lionsim.estimate.need import Need, with_need
from tests.helpers.cli import run_cli

ROCE = """name = "roce-4x8"
fabric = "ib"
workers_per_node = 8
device = "h100"
[inter]
alpha_us = 25.0
bandwidth_GBps = 2.9
[intra]
alpha_us = 1.0
bandwidth_GBps = 380.0
"""
RUNS = ["adamw@bf16-allreduce", "dlion-mavo", "dlion-mavo@hier:a2a-1bit", "onebit-adam"]


@pytest.fixture
def roce(tmp_path):
    path = tmp_path / "roce.toml"
    path.write_text(ROCE)
    return str(path)


def need_frame(network: str, overlap: str = "auto"):
    cfg = EstimateConfig(model="llama-7b", tokens_per_worker=16384, workers=32, network=network, strategies=RUNS,
                         overlap=overlap)
    return with_need(estimate(cfg), resolve(cfg), Need(0.9))


def test_the_note_names_the_runs_that_wait_after_backward_and_a_pair_the_table_inverts(roce):
    from lionsim.cli.estimate_notes import need_overlap_note

    frame = need_frame(roce)
    label = frame["strategy"] + "@" + frame["transport"]
    waits = [run for run, comm, exposed in zip(label, frame["comm_s"], frame["comm_exposed_s"])
             if math.isclose(comm, exposed, rel_tol=1e-9)]  # all of its exchange exposed
    hides = [run for run in label if run not in waits]
    assert hides == ["adamw@bf16-allreduce"] and len(waits) == 3  # the case the note is for
    rows = frame.to_dict("records")
    inverted = [(a, b) for a, ra in zip(label, rows) for b, rb in zip(label, rows) if a in waits and b in hides
                and ra["inter_bytes"] < rb["inter_bytes"] and ra["bandwidth_needed_GBps"] > rb["bandwidth_needed_GBps"]]
    assert inverted[0] == ("dlion-mavo@int8-allreduce", "adamw@bf16-allreduce")
    assert need_overlap_note(frame) == (
        "Overlap: adamw@bf16-allreduce exchanges each bucket during backward, which hides part of the exchange "
        f"behind it; {', '.join(waits)} exchange once after backward, where all of it waits: between runs of these "
        "different schedules (only those), fewer bytes across can need more bandwidth "
        "(dlion-mavo@int8-allreduce sends fewer than adamw@bf16-allreduce yet needs more).")


def test_no_note_where_every_run_waits_alike(roce):
    """--overlap none: every exchange after backward, nothing to explain; the names are the same,
    so the note reads the frame's schedules, not the runs' names."""
    from lionsim.cli.estimate_notes import need_overlap_note

    assert set(need_frame(roce, overlap="none")["overlap"]) == {"after"}
    assert need_overlap_note(need_frame(roce, overlap="none")) == ""


def test_the_need_table_prints_it(roce, capsys):
    code, out, _ = run_cli(["estimate", "--model", "llama-7b", "--tokens-per-worker", "16384", "--workers", "32",
                            "--network", roce, *[f"-s{run}" for run in RUNS], "--need", "utilisation=0.9"], capsys)
    said = " ".join(out[out.index("inter-node bandwidth for compute"):].split())
    assert code == 0 and ("exchange once after backward, where all of it waits: between runs of these different "
                          "schedules (only those), fewer bytes across can need more bandwidth "
                          "(dlion-mavo@int8-allreduce sends fewer than adamw@bf16-allreduce yet needs more)."
                          ) in said, said


def test_an_inversion_within_one_schedule_is_not_claimed_for_overlap():
    """fp8 sends half of bf16's bytes yet needs more bandwidth, both per bucket: overlap is not why.
    The note claims inversions only between schedules, and names a pair whose schedules differ."""
    from lionsim.cli.estimate_notes import need_overlap_note

    cfg = EstimateConfig(model="gpt2-124m", workers=32, gpus_per_node=8, network="100gbe", traits="ideal",
                         tokens_per_worker=16384,
                         strategies=["lion@bf16-allreduce", "dlion-mavo@int8-allreduce", "lion@fp8-allreduce"])
    frame = with_need(estimate(cfg), resolve(cfg), Need(0.5))
    rows = {f"{r['strategy']}@{r['transport']}": r for r in frame.to_dict("records")}
    bf16, fp8 = rows["lion@bf16-allreduce"], rows["lion@fp8-allreduce"]
    assert bf16["overlap"] == fp8["overlap"]  # one schedule, and yet inverted: the case
    assert fp8["wire_bytes"] < bf16["wire_bytes"] and fp8["bandwidth_needed_GBps"] > bf16["bandwidth_needed_GBps"]
    note = need_overlap_note(frame)
    assert "between runs of these different schedules (only those)" in note, note
    assert "lion@fp8-allreduce sends fewer" not in note
    said = note[note.index("(") + 1:note.rindex(")")] if "sends fewer" in note else ""
    if said:  # the pair named: its two runs' schedules differ
        a, b = said.split(" sends fewer than ")[0], said.split(" than ")[1].split(" yet")[0]
        assert rows[a]["overlap"] != rows[b]["overlap"], note
