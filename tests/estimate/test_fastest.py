"""The line under estimate's step table naming the fastest step priced, the caption's hierarchical
forms included: against a brute force that prices every run and every hier: form as rows of one
table and takes the least step."""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.defaults import DEFAULT_STRATEGIES
from lionsim.cli.estimate_notes import footnotes
from lionsim.numbers import TIE, ms_text, speedup_text
from lionsim.runs import parse_runs
from tests.helpers.cli import run_cli

NODES = dict(model="llama-7b", workers=32, network="25gbe", gpus_per_node=8)


def every_form(frame) -> list[str]:
    """Each run of `frame` and each of its hier: forms a node can combine, spelled out."""
    runs = [f"{r.strategy}@{r.transport}" for r in frame.itertuples(index=False)]
    forms = []
    for run in runs:
        strategy, transport = run.split("@")
        try:
            parse_runs([f"{strategy}@hier:{transport}"])
        except LionsimError:
            continue
        forms.append(f"{strategy}@hier:{transport}")
    return runs + forms


def test_the_fastest_step_on_nodes_of_8_is_a_hier_form_the_table_leaves_to_its_caption():
    frame = estimate(EstimateConfig(**NODES))
    brute = estimate(EstimateConfig(**NODES, strategies=every_form(frame), baseline=DEFAULT_STRATEGIES[0]))
    best = brute.loc[brute["step_s"].idxmin()]
    run = f"{best['strategy']}@{best['transport']}"
    assert run.startswith("dlion-mavo@hier:")  # not a row of the default table: the case the line is for
    assert run not in set(frame["strategy"] + "@" + frame["transport"])
    assert frame.attrs["fastest_line"] == (
        f"Fastest step: {run}, {ms_text(best['step_s'] * 1e3)} ms, {speedup_text(best['speedup'])} "
        "(a step time, not time to target; priced in the note on hierarchical forms, not a row).")


def test_on_one_gpu_a_node_the_fastest_is_the_tables_least_step():
    cfg = EstimateConfig(model="gpt2-124m", workers=16, network="10gbe")
    frame = estimate(cfg)
    best = frame.loc[frame["step_s"].idxmin()]
    assert frame.attrs["fastest_line"] == (
        f"Fastest step: {best['strategy']}@{best['transport']}, {ms_text(best['step_s'] * 1e3)} ms, "
        f"{speedup_text(best['speedup'])} (a step time, not time to target).")


def test_no_line_for_a_lone_run_with_nothing_to_compare():
    frame = estimate(EstimateConfig(model="gpt2-124m", workers=16, network="10gbe", strategies=["adamw"]))
    assert frame.attrs["fastest_line"] == ""


def test_the_terminal_prints_it_under_the_table_before_the_captions_terms(capsys):
    code, out, _ = run_cli(["estimate", "--model", "llama-7b", "--workers", "32", "--network", "25gbe",
                            "--gpus-per-node", "8"], capsys)
    assert code == 0
    caption = out[out.index("\n\n", out.index("───")):].strip()  # what follows the table's rows
    said = " ".join(caption.split())
    # under the rows: after the one note before it (llama-7b's AdamW does not fit), before the terms
    assert caption.startswith("Does not fit on one h100"), caption
    assert said.index("Does not fit") < said.index("Fastest step: dlion-mavo@hier:a2a-1bit, ") \
        < said.index("ms per step, one worker"), said


def label(row) -> str:
    return f"{row['strategy']}@{row['transport']}"


H100 = dict(model="llama-7b", workers=32, network="100gbe", gpus_per_node=8, device="h100")


def test_the_line_names_the_fastest_run_that_fits_and_says_a_faster_one_does_not():
    # llama-7b on one h100 (80 GiB): AdamW's two moments (108 GB) and DiLoCo's replica do not fit; Lion's one does.
    # DiLoCo's hier: form is the fastest of all: a caption's form whose memory the line must check too
    runs = ["adamw@bf16-allreduce", "lion@bf16-allreduce", "diloco@fp8-allreduce", "dlion-mavo@int8-allreduce"]
    frame = estimate(EstimateConfig(**H100, strategies=runs, options={"local_steps": 20}))
    brute = estimate(EstimateConfig(**H100, strategies=every_form(frame), baseline="adamw@bf16-allreduce",
                                    options={"local_steps": 20}))
    # the reference: every run and hier: form priced as a row, and its own memory figure
    need = brute["memory_bytes"] <= brute["device_memory_bytes"]
    assert list(need) == list(brute["memory_fits"])
    ok, best_all = brute[need].loc[brute[need]["step_s"].idxmin()], brute.loc[brute["step_s"].idxmin()]
    assert not need[brute["step_s"].idxmin()] and label(best_all) not in runs  # a hier: form that does not fit
    assert label(ok) not in runs  # the fastest that fits is a hier: form too (dlion-mavo's)
    line = frame.attrs["fastest_line"]
    assert line.startswith(f"Fastest step: {label(ok)}, {ms_text(ok['step_s'] * 1e3)} ms, "
                           f"{speedup_text(ok['speedup'])} (a step time, not time to target; priced in the note "
                           "on hierarchical forms, not a row"), line
    assert line.endswith(f"; {label(best_all)} steps faster ({ms_text(best_all['step_s'] * 1e3)} ms, "
                         f"{speedup_text(best_all['speedup'])}) but does not fit on one h100)."), line


def test_where_no_run_fits_the_line_says_so():
    cfg = dict(model="llama-7b", workers=32, network="100gbe", gpus_per_node=8, device="a100-40gb")
    frame = estimate(EstimateConfig(**cfg))
    brute = estimate(EstimateConfig(**cfg, strategies=every_form(frame), baseline=DEFAULT_STRATEGIES[0]))
    assert (brute["memory_bytes"] > 40 * 2**30).all()  # 6.7e9 params x 12 bytes and up, hier: forms too
    best = brute.loc[brute["step_s"].idxmin()]
    assert frame.attrs["fastest_line"] == (
        f"Fastest step: {label(best)}, {ms_text(best['step_s'] * 1e3)} ms, {speedup_text(best['speedup'])} "
        "(a step time, not time to target; priced in the note on hierarchical forms, not a row; "
        "no run fits on one a100-40gb unsharded).")


def test_where_only_a_run_that_does_not_fit_beats_the_baseline_the_line_says_that():
    frame = estimate(EstimateConfig(**H100, strategies=["lion@bf16-allreduce", "diloco", "ef-signsgd"]))
    rows = {label(r): r for r in frame.to_dict("records")}
    diloco = rows["diloco@fp32-allreduce"]
    assert not diloco["memory_fits"] and diloco["step_s"] < rows["lion@bf16-allreduce"]["step_s"] * (1 - TIE)
    assert rows["ef-signsgd@allgather-1bit"]["step_s"] > rows["lion@bf16-allreduce"]["step_s"]
    assert frame.attrs["fastest_line"] == (
        "Fastest step: none that fits is faster than the baseline (lion@bf16-allreduce) by more than 0.5%; "
        f"diloco H=2@fp32-allreduce steps faster ({ms_text(diloco['step_s'] * 1e3)} ms, "
        f"{speedup_text(diloco['speedup'])}) but does not fit on one h100.")


TIED = dict(model="gpt2-124m", workers=16, network="10gbe")


def test_bit_identical_steps_are_named_together():
    frame = estimate(EstimateConfig(**TIED, strategies=["lion", "dlion-mavo@int8-allreduce",
                                                        "signum-mv@int8-allreduce"]))
    rows = {label(r): r for r in frame.to_dict("records")}
    step = rows["dlion-mavo@int8-allreduce"]["step_s"]
    assert rows["signum-mv@int8-allreduce"]["step_s"] == step  # the same bytes, the same kernels
    assert frame.attrs["fastest_line"] == (
        "Fastest step: dlion-mavo@int8-allreduce, signum-mv@int8-allreduce (tied within 0.5%), "
        f"{ms_text(step * 1e3)} ms, {speedup_text(rows['lion@fp32-allreduce']['step_s'] / step)} "
        "(a step time, not time to target).")


def test_a_lead_under_the_tie_margin_names_every_run_within_it():
    runs = ["lion", "dlion-mavo@int8-allreduce", "signum-mv@int8-allreduce", "signsgd@int8-allreduce"]
    frame = estimate(EstimateConfig(**TIED, strategies=runs))
    steps = {label(r): r["step_s"] for r in frame.to_dict("records")}
    least = min(steps.values())
    assert steps["signsgd@int8-allreduce"] == least < steps["dlion-mavo@int8-allreduce"] <= least * 1.005
    assert frame.attrs["fastest_line"].startswith(
        "Fastest step: dlion-mavo@int8-allreduce, signum-mv@int8-allreduce, signsgd@int8-allreduce "
        f"(tied within 0.5%), {ms_text(least * 1e3)} ms, ")


def test_no_crown_where_the_best_only_ties_the_baseline():
    frame = estimate(EstimateConfig(**TIED, strategies=["adamw@bf16-allreduce", "lion@bf16-allreduce"]))
    adamw, lion = frame["step_s"]
    assert lion <= adamw and adamw <= lion * 1.005  # level: within the margin
    assert frame.attrs["fastest_line"] == ""


def test_the_hier_clause_holds_where_the_line_is_printed_after_the_note_it_names():
    cfg = EstimateConfig(model="gpt2-124m", workers=32, gpus_per_node=8, network="100gbe",
                         strategies=["lion@bf16-allreduce", "dlion-mavo@a2a-1bit"])
    notes = footnotes(estimate(cfg))  # estimate.json's notes, report.md's list: the fastest line last
    (hier,) = [i for i, n in enumerate(notes) if "their hierarchical forms" in n]
    (fast,) = [i for i, n in enumerate(notes) if n.startswith("Fastest step: dlion-mavo@hier:a2a-1bit")]
    assert hier < fast
    assert "below" not in notes[fast] and "the note on hierarchical forms" in notes[fast], notes[fast]
