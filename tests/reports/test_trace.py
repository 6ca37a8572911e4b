"""`--trace`: trace.json in the Chrome trace-event format (lionsim.reports.trace), the modelled
step laid out in time (lionsim.steptime.lanes) and the measured one per gloo rank
(lionsim.training.spans).

The format is checked against the trace-event spec written out here (complete events "X" with
numeric ts/dur in microseconds and integer pid/tid, "M" metadata naming every process and
thread); the modelled timeline against the closed form of lionsim.steptime.stragglers and
against steps.csv's step_s; the measured one against calls.csv (one span per collective)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lionsim.aggregators.votes import MajorityVote
from lionsim.cli.app import main
from lionsim.network import CollectiveCall, load_network
from lionsim.steptime.lanes import COMM, COMPUTE, WAIT_WORKER, modelled_lanes
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.stragglers import step_seconds
from lionsim.steptime.timeline import StepWork, price_step
from lionsim.transports import TRANSPORTS, PayloadSpec


def run_cli(args: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0


def check_format(trace: dict) -> dict[int, dict]:
    """The trace-event format's rules as Perfetto and chrome://tracing read them; returns, per
    pid, its name and its threads' names."""
    assert set(trace) >= {"traceEvents", "displayTimeUnit"} and trace["displayTimeUnit"] in ("ms", "ns")
    names: dict[int, dict] = {}
    spans = []
    for e in trace["traceEvents"]:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str)
        if e["ph"] == "M":
            entry = names.setdefault(e["pid"], {"threads": {}})
            if e["name"] == "process_name":
                entry["name"] = e["args"]["name"]
            elif e["name"] == "thread_name":
                entry["threads"][e["tid"]] = e["args"]["name"]
            else:
                assert e["name"] in ("process_sort_index", "thread_sort_index") and isinstance(e["args"]["sort_index"], int)
        else:
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)), e
            assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e.get("args", {}), dict)
            spans.append(e)
    assert spans
    for e in spans:  # every span's process and thread is named
        assert "name" in names[e["pid"]] and e["tid"] in names[e["pid"]]["threads"]
    return names


def events(trace: dict, pid: int, thread: str, names: dict) -> list[dict]:
    tid = {v: k for k, v in names[pid]["threads"].items()}[thread]
    return sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and e["tid"] == tid),
                  key=lambda e: e["ts"])


def test_sim_trace_is_the_booked_steps():
    """sim: one process per worker of each run; its step spans last steps.csv's step_s and follow
    one another (sim_time_s), its lanes never overlap, the collectives are named by op, size
    and algorithm, and uneven workers wait for the slowest."""
    from lionsim.bench import BenchConfig, run_bench

    cfg = BenchConfig(workload="mlp", workers=3, steps=4, strategies=["dlion-mavo@a2a-1bit", "adamw"],
                      compute_spread=["slow:1:2"], trace=True)
    result = run_bench(cfg)  # the files `bench --trace` writes, without drawing the plots
    trace = json.loads(result.files["trace.json"])
    names = check_format(trace)
    assert [v["name"] for v in names.values()] == [f"{run} · worker {i}" for run in
                                                   ("dlion-mavo@a2a-1bit", "adamw@fp32-allreduce") for i in range(3)]
    even = json.loads(run_bench(BenchConfig(workload="mlp", workers=3, steps=2, strategies=["adamw"], trace=True))
                      .files["trace.json"])
    assert [v["name"] for v in check_format(even).values()] == ["adamw@fp32-allreduce · every worker (3 alike)"]
    steps = result.steps
    for pid, v in names.items():
        label = v["name"].split(" · ")[0]
        booked = steps[steps.strategy == label.split("@")[0]]
        marks = events(trace, pid, "step", names)
        assert [e["name"] for e in marks] == [f"step {s}" for s in booked.step]
        np.testing.assert_allclose([e["dur"] for e in marks], booked.step_s * 1e6, rtol=1e-9, atol=2e-3)
        np.testing.assert_allclose([e["ts"] + e["dur"] for e in marks], booked.sim_time_s * 1e6, rtol=1e-9, atol=5e-3)
        for lane in ("compute", "comm"):
            spans = events(trace, pid, lane, names)
            assert all(a["ts"] + a["dur"] <= b["ts"] + 2e-3 for a, b in zip(spans, spans[1:])), (v["name"], lane)
        comm = events(trace, pid, "comm", names)
        assert comm and all(e["name"] == f"{e['args']['op']} {e['name'].split(' ', 1)[1].rsplit(' ', 1)[0]} "
                            f"{e['args']['algorithm']}" for e in comm)
    for first in (1, 4):  # slow:1:2: one worker computes twice as long; the other two wait for it every step
        backward = {pid: events(trace, pid, "compute", names)[1]["dur"] for pid in range(first, first + 3)}
        waits = {pid: sum(e["name"] == WAIT_WORKER for e in events(trace, pid, "compute", names)) for pid in backward}
        slow = max(backward, key=backward.get)
        assert backward[slow] == pytest.approx(2 * min(backward.values()))
        assert waits == {pid: 0 if pid == slow else 4 for pid in backward}


@pytest.mark.parametrize("factors", [[1.0, 1.0], [1.0, 1.7, 1.2]])
@pytest.mark.parametrize("transport,bucket_mb", [("fp32-allreduce", 0.01), ("fp32-allreduce", 25.0), ("a2a-1bit", 25.0)])
def test_modelled_step_matches_the_closed_form(factors, transport, bucket_mb):
    """The step laid out bucket by bucket (Lindley's recursion written as spans) ends where the
    step model's closed form (three candidates, stragglers.step_seconds) says, on every worker;
    its collectives sum to comm_s; a bucket never starts before the slowest worker has it."""
    network = load_network("1gbe")
    spec = (PayloadSpec(kind="dense", numel=25_000) if transport == "fp32-allreduce" else
            PayloadSpec(kind="votes", numel=25_000, rule=MajorityVote()))
    tr = TRANSPORTS.get(transport)()
    work = StepWork(forward_s=1e-3, backward_s=2e-3, encode_s=3e-4, decode_s=1e-4, update_s=5e-5)
    extra = (CollectiveCall("all_reduce", 4000, label="momenta"),)
    overlap = OverlapConfig(bucket_mb=bucket_mb)
    kw = dict(transport=tr, spec=spec, workers=len(factors), network=network, overlap=overlap, extra_calls=extra)
    lanes = modelled_lanes(work=work, factors=factors, **{k: v for k, v in kw.items() if k != "workers"})
    priced = price_step(**kw)
    expected = float(step_seconds(priced, work, max(factors)))
    for spans in lanes:
        assert max(s.end_s for s in spans) == pytest.approx(expected, rel=1e-12)
        comm = [s for s in spans if s.lane == COMM]
        assert sum(s.dur_s for s in comm) == pytest.approx(priced.comm.time_s + priced.extra.time_s, rel=1e-12)
        assert {s.lane for s in spans} == {COMPUTE, COMM}
    if bucket_mb < 1:
        assert len({s.args.get("bucket") for s in lanes[0] if s.lane == COMM}) > 2  # several buckets drawn
        first = min(s.start_s for s in lanes[0] if s.lane == COMM)
        assert first < max(factors) * (work.forward_s + work.backward_s)  # overlaps backward


def test_sim_trace_with_measured_compute_says_only_the_network_is_modelled():
    from lionsim.bench import BenchConfig, run_bench

    def about(compute: str) -> dict:
        cfg = BenchConfig(workload="mlp", workers=2, steps=1, strategies=["adamw"], compute=compute, trace=True)
        return json.loads(run_bench(cfg).files["trace.json"])["otherData"]

    measured = about("measured")
    assert measured["times"].startswith("compute measured on this machine, the network modelled")
    assert measured["network"] == "1gbe"
    assert about("h100")["times"] == "modelled (the network model and the booked work)"


@pytest.mark.slow
def test_gloo_trace_has_every_rank_and_call(tmp_path):
    """gloo: one process per rank, each collective of calls.csv a comm span on every rank (named
    by op and size), the ranks' sections on the compute lane, and the trace's spans inside
    each rank's step spans."""
    out = tmp_path / "gloo"
    run_cli(["bench", "-w", "mlp", "--workers", "4", "--ranks", "2", "--backend", "gloo", "--steps", "3",
             "-s", "dlion-mavo@a2a-1bit", "--trace", "--out", str(out)])
    trace = json.loads((out / "trace.json").read_text())
    names = check_format(trace)
    assert [v["name"] for v in names.values()] == [f"dlion-mavo@a2a-1bit · rank {r} (workers {2 * r}-{2 * r + 1})"
                                                   for r in range(2)]
    calls = pd.read_csv(out / "calls.csv")
    for pid in names:
        comm = [e for e in events(trace, pid, "comm", names) if "op" in e["args"]]
        assert [(e["args"]["op"], e["args"]["bytes"]) for e in comm] == list(zip(calls.collective, calls["bytes"]))
        compute = {e["name"] for e in events(trace, pid, "compute", names)}
        assert {"compute", "encode", "update"} <= compute
        marks = events(trace, pid, "step", names)
        assert [e["name"] for e in marks] == ["step 1", "step 2", "step 3"]
        assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(marks, marks[1:]))
    assert trace["otherData"]["network"] == "loopback, measured"  # the link measured (the table's words), not 1gbe


def test_estimate_trace_is_each_runs_step(tmp_path, capsys):
    """estimate: one process per run; its step span lasts estimate.csv's step_s (a local-step
    strategy: its sync step and a local step, whose mean over a round of H is step_s), its
    collectives sum to comm_s; without --out, --trace is one line and exit 2."""
    out = tmp_path / "est"
    run_cli(["estimate", "--model", "gpt2-124m", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "-s", "diloco",
             "--local-steps", "4", "--trace", "--out", str(out)])
    trace = json.loads((out / "trace.json").read_text())
    names = check_format(trace)
    rows = pd.read_csv(out / "estimate.csv")
    assert [v["name"] for v in names.values()] == [f"{s}@{t} · every worker (8 alike)"
                                                   for s, t in zip(rows.strategy, rows.transport)]
    for pid, row in zip(names, rows.itertuples()):
        marks = [e["dur"] / 1e6 for e in events(trace, pid, "step", names)]
        comm = sum(e["dur"] for e in events(trace, pid, "comm", names)) / 1e6
        h = row.local_steps
        assert len(marks) == (2 if h > 1 else 1)
        assert (marks[0] + (h - 1) * marks[-1]) / h == pytest.approx(row.step_s, rel=1e-6) if h > 1 else \
            marks[0] == pytest.approx(row.step_s, rel=1e-6)
        assert comm / h == pytest.approx(row.comm_s, rel=1e-6)
        if h > 1:  # the local step's rule is its inner optimizer step: named so, never "encode"
            steps = events(trace, pid, "step", names)
            local = [e["name"] for e in events(trace, pid, "compute", names) if e["ts"] >= steps[-1]["ts"]]
            assert "inner step" in local and "encode" not in local, local
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--trace"])
    assert done.value.code == 2 and "--trace writes DIR/trace.json" in capsys.readouterr().err


def test_estimate_trace_draws_a_momentum_sync_every_k_steps(tmp_path):
    """--momentum-sync every:4: a step without the sync and the step with it, whose mean over 4
    steps is estimate.csv's step_s; every:1: only the step with it."""
    for k, expected in ((4, ["step", "momentum-sync step"]), (1, ["momentum-sync step"])):
        out = tmp_path / f"every{k}"
        run_cli(["estimate", "--model", "gpt2-124m", "-s", "dlion-mavo", "--momentum-sync", f"every:{k}", "--trace",
                 "--out", str(out)])
        trace = json.loads((out / "trace.json").read_text())
        names = check_format(trace)
        row = pd.read_csv(out / "estimate.csv").iloc[0]
        marks = events(trace, next(iter(names)), "step", names)
        assert [e["name"] for e in marks] == expected
        durations = [e["dur"] / 1e6 for e in marks]
        assert ((k - 1) * durations[0] + durations[-1]) / k == pytest.approx(row.step_s, rel=1e-6)


def test_ranks_clocks_are_aligned_by_the_median_call_offset():
    """A rank whose clock reads 5 s ahead, its first call's barrier exit skewed by 3 ms: the
    trace lays its calls where the reference rank's are (to the other calls' skew)."""
    import torch

    from lionsim.training.spans import _CALL, _offset

    starts = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64)
    reference = torch.stack([torch.arange(5.0), torch.full((5,), float(_CALL)), torch.zeros(5), starts, starts + 0.1], 1)
    ahead = reference.clone()
    ahead[:, 3:] += 5.0
    ahead[0, 3:] += 0.003
    assert _offset(ahead, reference) == pytest.approx(5.0, abs=1e-12)


@pytest.mark.slow
@pytest.mark.plots  # checks the PNG it renders
def test_the_docs_picture_is_drawn_from_a_trace(tmp_path, monkeypatch):
    """tools/trace_png.py (the docs' pictures) draws a trace.json lionsim wrote into a PNG."""
    import runpy
    import sys
    from pathlib import Path

    from lionsim.bench import BenchConfig, run_bench

    trace = tmp_path / "trace.json"
    trace.write_text(run_bench(BenchConfig(workload="mlp", workers=2, steps=2, strategies=["adamw"], trace=True,
                                       bucket_mb=0.01)).files["trace.json"])
    script = Path(__file__).resolve().parents[2] / "tools" / "trace_png.py"
    monkeypatch.setattr(sys, "argv", [str(script), str(trace), str(tmp_path / "trace.png"), "--steps", "2"])
    runpy.run_path(str(script), run_name="__main__")
    assert (tmp_path / "trace.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
