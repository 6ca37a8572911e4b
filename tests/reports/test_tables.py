"""The summary and model-check tables (lionsim.reports.tables): what their titles and captions say,
where run labels fold, how a diverged run and a measured link are shown."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from lionsim.reports import SummaryRule, summarize
from lionsim.reports.tables import model_check_table, summary_table
from tests.helpers.cli import table_text
from tests.helpers.frames import frame, rows


def test_run_labels_break_at_the_at_sign_and_after_a_dash_only_where_the_table_is_too_wide():
    """A name is whole on its line while the table fits (`@packed-` / `allreduce` read as two
    words); in a column fit() narrows it breaks after a '-', never inside a word."""
    from lionsim.reports.tables import fold_run, run_width
    from lionsim.reports.widths import wrap_name

    assert str(fold_run("dgc*", "sparse-allgather")) == "dgc*\n@sparse-allgather"
    assert run_width([("lion*", "fp32-allreduce"), ("lioncub-ternary", "packed-allreduce")], 15) == 17
    assert wrap_name("@compressed-allreduce", 21) == ["@compressed-allreduce"]
    assert wrap_name("@compressed-allreduce", 19) == ["@compressed-", "allreduce"]
    assert wrap_name("@a-b-c-d", 5) == ["@a-b-", "c-d"]
    assert wrap_name("@compressed", 4) == ["@compressed"]  # no '-': the cell folds it (RunName), never cuts


@pytest.mark.parametrize("width", [11, 14, 19, 20, 33, 80])
def test_a_name_list_wraps_between_whole_names_and_breaks_a_name_only_before_its_transport(width):
    """NameList (regress --list's strategies): greedy lines of whole names; a name wider than the
    column alone goes on two lines, strategy then @transport, as a run label does."""
    from lionsim.reports.widths import NameList

    names = ["adamw", "sgdm", "dlion-mavo", "dlion-mavo@a2a-1bit", "lioncub-l1"]
    lines = [line.rstrip() for line in table_text(NameList(names), width).splitlines()]
    assert all(len(line) <= width for line in lines), lines
    assert " ".join(lines).replace(" @", "@") == ", ".join(names)  # every name, in order, nothing cut
    broken = [i for i, line in enumerate(lines) if line.startswith("@")]
    assert broken == ([] if width >= len("dlion-mavo@a2a-1bit,") else [lines.index("@a2a-1bit,")])
    for line, after in zip(lines, lines[1:]):  # greedy: the next line's first name did not fit here
        first = after.split()[0] if not after.startswith("@") else None
        assert first is None or len(f"{line} {first}") > width, (line, after)


@pytest.mark.parametrize("width", [10, 15, 16, 26, 40])
def test_phrases_break_only_between_phrases_greedily(width):
    """Phrases (estimate's run phases): whole phrases a line, as many as fit; one wider than the
    column alone folds rather than being lost."""
    from lionsim.reports.widths import Phrases

    text = "warm-up 15; compressed 985; sync 1"
    lines = [line.rstrip() for line in table_text(Phrases(text), width).splitlines()]
    expected = {10: ["warm-up", "15;", "compressed", "985;", "sync 1"],  # wider than 10: folded at 10
                15: ["warm-up 15;", "compressed 985;", "sync 1"], 16: ["warm-up 15;", "compressed 985;", "sync 1"],
                26: ["warm-up 15;", "compressed 985; sync 1"], 40: [text]}[width]
    assert lines == expected


def _long_named_runs():
    """A bench of a plug-in strategy over a long transport (randomk-ef@sparse-allgather), evaluated."""
    import math

    runs = []
    for strategy, transport in (("randomk-ef", "sparse-allgather"), ("adamw", "fp32-allreduce"),
                                ("onebit-adam", "compressed-allreduce")):
        run = rows(strategy, 5)
        for k, r in enumerate(run):
            r.update(transport=transport, eval_loss=2.5 - 0.1 * k, eval_acc=0.118 + 0.1 * k,
                     wire_bytes=30_900 if strategy == "randomk-ef" else 77_100,
                     bits_per_param_up=3.2 if strategy == "randomk-ef" else 32.0,
                     bits_per_param_down=22.4 if strategy == "randomk-ef" else 32.0)
        runs.append(run)
    assert not math.isnan(runs[0][-1]["eval_acc"])
    return summarize(frame(*runs))


def test_bench_summary_fits_80_columns_in_a_pipe_and_keeps_every_number_whole(capsys):
    """Before, `lionsim bench --plugin examples/plugins/randomk_ef.py ... | cat` printed 84 columns:
    the run column widened to `@compressed-allreduce` and the table went with it. Now the name
    breaks after its '-'; every number of the unsqueezed table is there whole."""
    from lionsim.cli.output import emit

    summary = _long_named_runs()
    emit(summary, "table", lambda: summary_table(summary, {"config": {"steps": 5}}), whole=True)  # bench's print
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80 and "…" not in out
    wide = table_text(summary_table(summary, {"config": {"steps": 5}}), width=400)  # the reference: nothing squeezed
    number = re.compile(r"^[-+]?[\d.,/%]+(x|kB|MB|GB|B)?$")
    for line in wide.splitlines():
        name = line.split()[:1]
        if name and name[0].rstrip("*") in ("randomk-ef", "adamw", "onebit-adam"):
            shown = next(l for l in out.splitlines() if l.split()[:1] == name)
            assert [w for w in line.split() if number.match(w)] == [w for w in shown.split() if number.match(w)]
            assert len([w for w in shown.split() if number.match(w)]) >= 10, shown
    assert "\n@compressed-\nallreduce\n" in "\n".join(line.strip() for line in out.splitlines())


def test_a_terminal_wider_than_80_columns_keeps_run_names_whole_and_a_pipe_keeps_80(monkeypatch):
    """At COLUMNS=120 the bench table stayed 80 wide and broke `@compressed-allreduce` after its
    '-'. On a terminal wider than 80 the table takes its width, each name on one line where it
    fits, every number whole (a narrower one too: the run column narrows to it); a pipe (and an
    unknown width) keeps 80 columns."""
    from io import StringIO

    from rich.console import Console

    from lionsim.reports.widths import table_width

    assert table_width(Console(file=StringIO(), force_terminal=True, width=120)) == 120
    assert table_width(Console(file=StringIO(), force_terminal=True, width=60)) == 60  # rich would cut numbers to 60
    assert table_width(Console(file=StringIO(), force_terminal=False, width=120)) == 80
    summary = _long_named_runs()
    piped = table_text(summary_table(summary, {"config": {"steps": 5}}), width=120)
    assert "\n@compressed-\nallreduce\n" in "\n".join(line.strip() for line in piped.splitlines())
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # stdout as rich sees a terminal, COLUMNS wide
    monkeypatch.setenv("COLUMNS", "120")
    shown = table_text(summary_table(summary, {"config": {"steps": 5}}), width=120)
    lines = [line.strip() for line in shown.splitlines()]
    assert "@compressed-allreduce" in lines and "@compressed-" not in lines
    assert max(map(len, shown.rstrip().splitlines())) <= 120
    wide = table_text(summary_table(summary, {"config": {"steps": 5}}), width=400)  # nothing squeezed
    assert [line.split() for line in wide.splitlines() if line.strip()][2:] == \
        [line.split() for line in shown.splitlines() if line.strip()][2:]


def test_a_diverged_run_is_marked_and_the_title_counts_the_steps_asked_for():
    steps = frame(rows("adamw", 5, diverged_at=5), rows("lion", 5, diverged_at=5))
    shown = table_text(summary_table(summarize(steps), {"config": {"steps": 20}}))
    assert "20 steps" in shown and "5 steps" not in shown
    assert shown.count("diverged at 5") == 2 and "at step N a loss or gradient went non-finite" in " ".join(shown.split())  # each run; the caption says what
    shown_one = table_text(summary_table(summarize(frame(rows("adamw", 1))), {"config": {"steps": 1}}))
    assert "1 step" in shown_one and "1 steps" not in shown_one


def test_the_title_names_a_workload_file_by_its_short_name_and_one_worker_in_the_singular():
    steps = frame(rows("adamw", 2)).assign(workload="/home/user/some/long/path/cnn_workload.py:make", workers=1)
    title = table_text(summary_table(summarize(steps), {"config": {"steps": 2}})).splitlines()[0]
    assert "lionsim: cnn_workload.make, 1 worker, 1gbe, 2 steps" in title and "/home" not in title


def test_the_caption_says_how_each_step_time_was_obtained_from_run_json():
    """The caption said "run.json says how each was obtained", the default table named no device,
    and --compute measured put "compute measured" in the title while comm stayed modelled. The
    caption now says, from run.json's timing notes, what was measured (median of how many, warm-up
    dropped) and what modelled (on what, by what)."""
    from tests.helpers.timing import run_record

    summary = summarize(frame(rows("adamw", 2)))

    def said(meta):
        return " ".join(table_text(summary_table(summary, meta)).split())

    modelled = said(run_record(compute="h100", traits=None))
    assert ("step times modelled: comp on h100 (FLOPs at peak x mfu), enc/upd (memory passes at h100's "
            "bandwidth, at least 10 us a kernel), comm on 1gbe (alpha-beta).") in modelled
    assert "comm on 10gbe (nccl traits)" in said(run_record(network="10gbe", traits="nccl"))
    here = said(run_record(compute="measured", steps=5, warmup=2))
    assert ("step times: comp measured (median of 10 passes, 3 warm-up dropped); enc/upd measured (median of "
            "3 steps, 2 warm-up dropped); comm modelled on 1gbe (alpha-beta).") in here
    assert "compute measured" not in here.split("step times")[0]  # the title claims no part alone
    gloo = said({**run_record(compute="h100", backend="gloo", steps=20, warmup=5), "ranks_on_one_host": True})
    assert "comm measured on loopback (median of 15 steps, 5 warm-up dropped)" in gloo
    assert "run.json says how each was obtained" in said({"config": {"steps": 2}})  # no notes: no claim


def test_a_diverged_runs_bytes_per_step_are_the_mean_of_the_steps_before():
    """The diverged step ran no exchange: booked with no times and 0 bytes, it is not averaged in
    (before, a run that diverged at step 2 showed half the bytes it sent each step)."""
    import math

    diverged = rows("sgdm", 2, diverged_at=2)
    diverged[-1].update(wire_bytes=0, compute_s=math.nan, comm_s=math.nan, update_s=math.nan, step_s=math.nan,
                        bits_per_param_up=math.nan, bits_per_param_down=math.nan)
    summary = summarize(frame(rows("adamw", 2), diverged)).set_index("strategy")
    assert summary.loc["sgdm", "wire_bytes"] == summary.loc["adamw", "wire_bytes"] == 4000
    assert summary.loc["sgdm", "bits_per_param_up"] == 32.0 and summary.loc["sgdm", "step_s"] == 0.01
    shown = table_text(summary_table(summarize(frame(rows("adamw", 2), diverged)), {"config": {"steps": 2}}))
    assert shown.count("4.00kB") == 2 and "times and bytes are over the steps before" in " ".join(shown.split())


def test_a_gloo_table_names_the_link_measured_on_and_links_comm_to_the_model_check():
    steps = frame(rows("adamw", 8, backend="gloo", comm=0.0003, measured=0.0015))
    summary = summarize(steps)
    meta = {"config": {"steps": 8}, "ranks_on_one_host": True}
    title = table_text(summary_table(summary, meta)).splitlines()[0]
    assert "loopback, measured (model: 1gbe)" in title
    check = table_text(model_check_table(summary, "1gbe + gloo traits"))
    header = next(line for line in check.splitlines() if "measured" in line and "booked" in line).split()
    values = next(line for line in check.splitlines() if line.strip().startswith("adamw")).split()
    assert header[:4] == ["run", "booked", "measured", "model"]
    assert values[1:3] == ["0.30", "1.50"]  # booked: the main table's comm (0.3 ms); measured: the mean
    assert "the comm column above" in check


def test_bits_are_plain_numbers_never_an_exponent():
    """A hier: bf16 all-reduce's 58/390.6 bits printed as 58/3.9e+02 under '.2g'."""
    steps = frame(rows("adamw", 4), rows("muon-dist", 4))
    for col, value in (("bits_per_param_up", 58.0), ("bits_per_param_down", 390.6)):
        steps.loc[steps["strategy"] == "muon-dist", col] = value
    steps.loc[steps["strategy"] == "adamw", "bits_per_param_up"] = 0.03125
    shown = table_text(summary_table(summarize(steps), {"config": {"steps": 4}}))
    assert "58/391" in shown and "0.0312/" in shown
    assert "e+" not in shown and "e-0" not in shown


def test_a_measured_run_without_network_leaves_the_model_out_and_says_how_to_get_one():
    """--network left at its default on gloo: the 1gbe preset is not the loopback the calls
    crossed, so no "(model: 1gbe)" in the title and no model or error column (they read +366%),
    and one line says why and how to get a comparison (--calibrate, or comm --fit then --network)."""
    from lionsim.reports.plots.titles import subtitle
    from lionsim.reports.tables import model_check

    steps = frame(rows("adamw", 8, backend="gloo", comm=0.0003, measured=0.0015))
    summary = summarize(steps)
    meta = {"config": {"steps": 8, "backend": "gloo", "network": "1gbe", "calibrate": False},
            "network": {"name": "1gbe"}, "ranks_on_one_host": True, "network_given": False,
            "comm_model": "1gbe + gloo traits (--network's default, not the link measured)"}
    title = table_text(summary_table(summary, meta)).splitlines()[0]
    assert "loopback, measured," in title and "model" not in title
    assert "(model" not in subtitle(steps, meta)
    table, why = model_check(summary, meta)
    shown = table_text(table)
    header = next(line for line in shown.splitlines() if "booked" in line).split()
    assert header == ["run", "booked", "measured", "wait"] and "error" not in shown and "vs the model" not in shown
    assert why.startswith("model and error left out: --network was not given, and its default (1gbe) is not the "
                          "link measured (loopback)")
    assert "--calibrate" in why and "`lionsim comm --backend gloo --fit PROFILE.toml`" in why
    assert "--network PROFILE.toml" in why and "\n" not in why

    for kept in ({**meta, "network_given": True}, {**meta, "config": {**meta["config"], "calibrate": True}},
                 {k: v for k, v in meta.items() if k != "network_given"}):  # given, calibrated, an older run.json
        table, why = model_check(summary, kept)
        assert why is None and "error" in table_text(table)
        assert "(model: 1gbe)" in table_text(summary_table(summary, kept)).splitlines()[0]


def test_the_caption_says_the_step_includes_the_wait_only_when_a_spread_made_one():
    """With --compute-spread the step column holds the wait for the slowest worker, which has no
    column (it would widen the table past 80): the caption says so, and only then."""
    waited = rows("adamw", 3)
    for r in waited:
        r.update(wait_s=0.002, step_s=0.01)  # 5 + 0 + 2 + 1 = 8 ms of parts, 2 ms of wait
    shown = " ".join(table_text(summary_table(summarize(frame(waited)), {"config": {"steps": 3}})).split())
    assert "step includes the wait for the slowest worker (--compute-spread" in shown
    even = " ".join(table_text(summary_table(summarize(frame(rows("adamw", 3))), {"config": {"steps": 3}})).split())
    assert "slowest worker" not in even


@pytest.mark.parametrize("workload", ["/home/me/proj/cnn_workload.py:make", r"C:\proj\cnn_workload.py:make"])
def test_a_plugin_workloads_table_title_and_plot_title_name_it_alike(workload):
    """bench's table title said "cnn_workload.make" and its plots "cnn_workload.py:make" (three
    functions shortened the name): one (reports.columns.workload_text) names it everywhere, as the
    sweep's cells do."""
    from lionsim.reports.plots.titles import subtitle

    steps = frame(rows("adamw", 3), rows("lion", 3)).assign(workload=workload)
    title = " ".join(summary_table(summarize(steps), {"config": {"steps": 3}}).title.split())
    named = subtitle(steps, {"config": {}}).split(" · ")[0]
    assert named == "cnn_workload.make"
    assert title.startswith(f"lionsim: {named}, 4 workers"), title


def test_an_explicit_columns_sets_the_table_width_in_a_pipe_too(monkeypatch):
    """COLUMNS=120 in a pipe left the bench table 80 wide (`@compressed-` / `allreduce` broken)
    while the listings followed it. An explicit COLUMNS is honoured off a terminal; without it a
    pipe keeps TABLE_WIDTH."""
    from io import StringIO

    from rich.console import Console

    from lionsim.reports.widths import TABLE_WIDTH, table_width

    piped = Console(file=StringIO(), force_terminal=False)
    assert table_width(piped) == TABLE_WIDTH
    monkeypatch.setenv("COLUMNS", "120")
    assert table_width(Console(file=StringIO(), force_terminal=False)) == 120
    shown = table_text(summary_table(_long_named_runs(), {"config": {"steps": 5}}), width=120)
    lines = [line.strip() for line in shown.splitlines()]
    assert "@compressed-allreduce" in lines and "@compressed-" not in lines
    monkeypatch.setenv("COLUMNS", "")  # set but empty: as unset
    assert table_width(Console(file=StringIO(), force_terminal=False)) == TABLE_WIDTH


def test_the_caption_names_a_baseline_taken_from_the_first_s_and_how_to_pick_another():
    """A plug-in listed first is every run's baseline: the caption names it and --baseline where it
    was taken implicitly; a --baseline given keeps the plain star; a lone run has none (nothing to
    compare it with)."""
    steps = frame(rows("randomk-ef", 4), rows("adamw", 4))
    summary = summarize(steps)
    implicit = summary_table(summary, {"config": {"baseline": None}}).caption
    assert "* baseline: randomk-ef@fp32-allreduce, the first run (--baseline RUN picks another)." in implicit
    given = summary_table(summarize(steps, SummaryRule(baseline="adamw")), {"config": {"baseline": "adamw"}}).caption
    assert "* baseline. " in given and "the first run" not in given
    lone = summary_table(summarize(frame(rows("adamw", 4))), None).caption
    assert "baseline" not in lone and "the first run" not in lone


def test_a_compressing_run_slower_than_its_baseline_is_explained_from_its_own_columns():
    """Fewer bytes, a slower step: the caption says its encode + decode add more than its comm saves,
    with both figures worked out from the two runs' columns; a faster run, or one slowed by something
    else, gets no such line."""
    base = rows("adamw", 4, step_s=[0.008] * 4)
    fp8 = rows("adamw", 4, comm=0.0012, step_s=[0.0082] * 4)
    fast = rows("lion", 4, comm=0.0012, step_s=[0.0070] * 4)
    other = rows("sgdm", 4, comm=0.0012, step_s=[0.0090] * 4)  # its codec costs less than it saves
    for r in fp8:
        r.update(transport="fp8-allreduce", encode_s=0.0006, decode_s=0.0004, wire_bytes=1000)
    for r in fast + other:
        r.update(transport="fp8-allreduce", encode_s=0.0002, decode_s=0.0001, wire_bytes=1000)
    summary = summarize(frame(base, fp8, fast, other))
    codec, saved = (0.0006 + 0.0004) * 1e3, (0.002 - 0.0012) * 1e3
    caption = summary_table(summary).caption
    assert (f"adamw@fp8-allreduce sends 4x fewer bytes yet steps slower: its enc adds {codec:.2f} ms a step, "
            f"more than the {saved:.2f} ms its comm saves.") in caption
    assert "lion@" not in caption and "sgdm@" not in caption


def _baseline(comm: float, exposed: float, step_s: float) -> list[dict]:
    """4 steps of adamw@fp32-allreduce (sending 4,000 bytes), `exposed` seconds of its comm not hidden."""
    out = rows("adamw", 4, comm=comm, step_s=[step_s] * 4)
    for r in out:
        r["comm_exposed_s"] = exposed
    return out


def _compressing(comm: float, exposed: float, codec: float, step_s: float) -> list[dict]:
    """4 steps of adamw@fp8-allreduce sending 1,000 bytes (the baseline's rows send 4,000), encode
    and decode `codec` seconds in all."""
    out = rows("adamw", 4, comm=comm, step_s=[step_s] * 4)
    for r in out:
        r.update(transport="fp8-allreduce", encode_s=codec * 0.3, decode_s=codec * 0.7, wire_bytes=1000,
                 comm_exposed_s=exposed)
    return out


def test_a_compressing_run_whose_comm_saves_nothing_is_still_explained():
    """bench -s adamw -s adamw@fp8-allreduce --overlap buckets --network 100gbe: 4x fewer bytes,
    comm 0.227 against 0.224 ms (latency-bound), encode + decode 0.36 ms: the codec is the whole
    cause, so the caption says so (it was silent where comm saved nothing)."""
    base = _baseline(0.000224, 0.000224, 0.00147)
    summary = summarize(frame(base, _compressing(0.000227, 0.000227, 0.00036, 0.00183)))
    assert ("adamw@fp8-allreduce sends 4x fewer bytes yet steps slower: its enc adds 0.36 ms a step, and its "
            "comm is no faster.") in summary_table(summary).caption


def test_a_compressing_run_whose_comm_is_slower_says_by_how_much():
    """A new user's a2a-1bit run on a 16K-parameter model: 35.8x fewer bytes, comm 0.33 against
    the baseline's 0.14 ms: "no faster" understated it; the caption gives the difference."""
    base = _baseline(0.00014, 0.00014, 0.00147)
    summary = summarize(frame(base, _compressing(0.00033, 0.00033, 0.00058, 0.0025)))
    assert ("adamw@fp8-allreduce sends 4x fewer bytes yet steps slower: its enc adds 0.58 ms a step, and its "
            "comm is 0.19 ms slower (fewer bytes, but latency-bound).") in summary_table(summary).caption


def test_the_comm_a_compressing_run_saves_is_the_exposed_comm_its_step_adds_up():
    """With overlap step_s adds comm_exposed_s, not comm_s: a run whose comm_s is 1.5 ms less but
    whose exposed comm is only 1.0 ms less saves 1.0 ms a step, so a 1.2 ms codec outweighs it
    (comm_s's 1.5 ms said it did not); where the exposed saving beats the codec, no note."""
    base = _baseline(0.002, 0.0015, 0.008)
    slower = summarize(frame(base, _compressing(0.0005, 0.0005, 0.0012, 0.0082)))
    assert ("adamw@fp8-allreduce sends 4x fewer bytes yet steps slower: its enc adds 1.20 ms a step, more than "
            "the 1.00 ms its comm saves where not hidden under backward.") in summary_table(slower).caption
    cheap = summarize(frame(base, _compressing(0.0005, 0.0005, 0.0009, 0.0081)))
    assert "fewer bytes yet" not in summary_table(cheap).caption


@pytest.mark.parametrize(("per_node", "backend", "says"), [
    (8, "sim", True),  # 4 workers on a node of 8: the Ethernet between nodes carried nothing
    (4, "sim", True),  # exactly one node full
    (2, "sim", False),  # 4 workers on nodes of 2 cross between nodes
    (1, "sim", False),  # a worker a node: every exchange crosses
    (8, "gloo", False),  # measured: the link is the one the ranks crossed
])
def test_a_run_whose_workers_all_sit_on_one_node_says_its_inter_link_carried_nothing(per_node, backend, says):
    summary = summarize(frame(rows("adamw", 4, backend=backend), rows("lion", 4, backend=backend)))
    meta = {"network": {"name": "team-25g", "workers_per_node": per_node}}
    line = ("All 4 workers sit on one node of team-25g (%d a node): only its intra-node link is priced; "
            "--workers %d or more crosses the link between nodes." % (per_node, 2 * per_node))
    assert (line in " ".join(summary_table(summary, meta).caption.split())) == says


def test_a_run_stopped_before_its_steps_says_how_many_it_ran_and_why():
    """`lionsim plot` on a 100,000-step bench interrupted at 1,135 titled its table "100000 steps"
    (the steps asked for). The reference: each run's rows, against run.json's steps and status."""
    from lionsim.reports.plots.titles import subtitle

    one = frame(rows("adamw", 1135))
    meta = {"status": "interrupted", "config": {"steps": 100000}}
    assert summary_table(summarize(one), meta).title.endswith(", 1,135 of 100,000 steps, interrupted")
    assert subtitle(one, meta) == "mlp · 4 workers · 1gbe · 1,135 of 100,000 steps, interrupted"
    two = frame(rows("adamw", 30), rows("lion", 2))
    failed = {"status": "failed", "config": {"steps": 30}}
    assert summary_table(summarize(two), failed).title.endswith(", 2 to 30 of 30 steps a run, failed")
    assert subtitle(two, failed).endswith(" · 2 to 30 of 30 steps a run, failed")
    done = {"status": "complete", "config": {"steps": 1135}}  # a finished run: as before
    assert summary_table(summarize(one), done).title.endswith(", 1135 steps")
    assert subtitle(one, done) == "mlp · 4 workers · 1gbe"


def test_a_single_run_shows_no_speedup_columns_and_two_runs_keep_them():
    """A bench of `-s lion` alone showed speedup 1.00x and to tgt 1.00x: its baseline is itself, so
    the numbers say nothing. As a sweep of one run does, it shows neither column, no baseline star,
    and the caption says why."""
    shown = table_text(summary_table(summarize(frame(rows("lion", 5))), {"config": {"steps": 5}}))
    header = next(line.split() for line in shown.splitlines() if line.startswith("run"))
    assert header == ["run", "loss", "eval", "comp", "enc", "comm", "upd", "step", "sent", "bits"]
    one = " ".join(shown.split())
    assert "1.00x" not in one and "to tgt" not in one and "lion*" not in one and "* baseline" not in one
    assert "no speedup columns: one run, nothing to compare it with" in one
    two = " ".join(table_text(summary_table(summarize(frame(rows("adamw", 5), rows("lion", 5))),
                                            {"config": {"steps": 5}})).split())
    assert "speed to" in two and "1.00x" in two and "adamw*" in two and "speedup: baseline step / step" in two


def test_a_diverged_runs_step_time_ratio_is_not_shown_as_a_speedup():
    """A run that diverged at step 5, stepping in half the baseline's time before it failed, showed
    a 2.00x speedup in the table, a win. Its speedup cell is "-" (summary.csv keeps the ratio)."""
    steps = frame(rows("adamw", 5), rows("lion", 5, diverged_at=5, step_s=[0.005] * 5))
    summary = summarize(steps)
    assert summary.set_index("strategy").speedup["lion"] == pytest.approx(0.01 / 0.005)  # the CSV's ratio
    shown = table_text(summary_table(summary, {"config": {"steps": 5}}))
    lion = next(line.split() for line in shown.splitlines() if line.startswith("lion"))
    assert "2.00x" not in shown and lion[-2] == "-", lion  # speed up "-", then "not reached" over two lines
    assert "diverged run's speedup shows \"-\"" in " ".join(shown.split())


def test_a_target_every_run_reaches_at_once_says_to_tgt_is_the_step_speedup():
    """`bench --target-loss 150` on a loss that starts at 2.3: every run "reached" it at step 1 and to
    tgt repeated the step speedup without a word."""
    import pandas as pd

    from lionsim.reports.tables import _target_note

    summary = pd.DataFrame({"target_loss": [150.0, 150.0], "target_rule": ["--target-loss"] * 2,
                            "steps_to_target": [1, 1]})
    assert "every run reached it at its first step" in _target_note(summary)
    assert "first step" not in _target_note(summary.assign(steps_to_target=[1, 7]))


def test_a_measured_speedup_within_what_its_comm_can_move_is_not_a_ranking():
    """Two identical gloo benches over shaped namespaces (a new user's) booked adamw's comm at 2.65 and
    0.83 ms (medians of steps some of whose calls took a slow path) and read dlion-mavo@a2a-1bit 1.03x,
    then 0.94x. A run whose step is within twice the two comms' median-to-mean gaps of the baseline's
    is said not to be a ranking; one clear of it is left alone. Reference: the gaps by hand."""
    from lionsim.reports.tables import unsettled_note

    rows = [("adamw", "fp32-allreduce", 2.652, 2.762, 27.070), ("dlion-mavo", "a2a-1bit", 1.389, 2.758, 26.237),
            ("lioncub-l1", "int8-allreduce", 0.851, 1.865, 25.749),
            ("lioncub-ternary", "packed-allreduce", 2.564, 2.501, 27.708)]
    summary = pd.DataFrame([{"strategy": s, "transport": t, "comm_s": c / 1e3, "comm_measured_s": m / 1e3,
                             "step_s": step / 1e3, "baseline": "adamw@fp32-allreduce"} for s, t, c, m, step in rows])
    base = 2 * abs(2.762 - 2.652)
    assert abs(26.237 - 27.070) < base + 2 * abs(2.758 - 1.389)  # 0.83 ms < 2.96: not a ranking
    assert abs(27.708 - 27.070) > base + 2 * abs(2.501 - 2.564)  # 0.64 ms > 0.35: a ranking
    said = unsettled_note(summary)
    assert said.startswith("Not a ranking: dlion-mavo@a2a-1bit (within 2.96 ms), lioncub-l1@int8-allreduce "
                           "(within 2.25 ms) step within") and "ternary" not in said
    assert unsettled_note(summary.drop(columns="comm_measured_s")) == ""  # on sim nothing was measured
