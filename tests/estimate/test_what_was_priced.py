"""What `estimate`'s tables say was priced, for "which method trains my model fastest on N GPUs over
Ethernet": each local-step run's H and, where it took lionsim's short-bench default, its authors'
H and the option; the topology and the library that priced the rows (and --traits nccl where the
ideal library did); a --need reason several runs share said once; a --from-run proxy that did not
reach its target, or is far smaller than the priced model."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.cli.estimate_notes import IDEAL_HINT
from lionsim.strategies import STRATEGIES
from tests.estimate.test_from_run import REACHED, RUNS, bench_dir
from tests.helpers.cli import invoke_at

SMALL = ["estimate", "--model", "gpt2-124m", "--tokens-per-worker", "1024", "--workers", "16"]
"""A small model on 16 workers: every table below is priced in well under a second."""


def words(text: str) -> str:
    """Output with its line breaks and padding folded to single spaces (a table wraps where it likes)."""
    return " ".join(text.split())


def lines_fit(text: str, width: int = 80) -> bool:
    return max(map(len, text.splitlines())) <= width


# --- 1. local steps: H shown, the short-bench default named with the authors' H

def test_each_local_step_run_shows_its_h_and_a_short_bench_h_names_the_authors_once(monkeypatch):
    done = invoke_at(80, [*SMALL, "--network", "10gbe", "-s", "adamw@bf16-allreduce", "-s", "diloco", "-s",
                          "localsgd", "-s", "streaming-diloco", "-s", "muloco"], monkeypatch)
    said = words(done.stdout)
    assert lines_fit(done.stdout)
    # H from each strategy's own default, read from its Options (not restated here)
    for name in ("diloco", "localsgd", "streaming-diloco", "muloco"):
        default = STRATEGIES.get(name).Options().local_steps
        assert f"{name} H={default}" in said, said
    assert "adamw* H=" not in said and "adamw* " in said  # no local steps: no H
    assert said.count("--local-steps H") == 1  # one note, under the table
    # the authors' H of every run that took the bench's, once each, with the citation the code holds
    assert said.count("diloco, localsgd H = 500 (DiLoCo, Douillard et al. 2023, arXiv 2311.08105)") == 1, said
    assert said.count("streaming-diloco H = 100 (Streaming DiLoCo, Douillard et al. 2025, arXiv 2501.18512)") == 1
    assert "muloco H = 30" not in said  # its default is its paper's: nothing to warn about


@pytest.mark.parametrize("given", [["--local-steps", "100"], ["--opt", "diloco.local_steps=2"]])
def test_a_given_h_is_shown_and_draws_no_note(monkeypatch, given):
    done = invoke_at(80, [*SMALL, "--network", "10gbe", "-s", "adamw@bf16-allreduce", "-s", "diloco", *given],
                     monkeypatch)
    said = words(done.stdout)
    h = given[-1].rsplit("=", 1)[-1]
    assert f"diloco H={h}" in said and "H = 500" not in said and "--local-steps H" not in said


@pytest.mark.parametrize("opt", ["DiLoCo.local_steps=100", " DILOCO.local_steps=100"])
def test_an_opt_naming_the_strategy_in_another_case_acts(monkeypatch, opt):
    """The registry takes `DiLoCo` for diloco, and --opt DiLoCo.local_steps=100 was accepted, then
    read by no run: H stayed 2 and the note said H was lionsim's default."""
    done = invoke_at(80, [*SMALL, "--network", "10gbe", "-s", "diloco", "--opt", opt], monkeypatch)
    said = words(done.stdout)
    assert done.exit_code == 0, done.output
    assert "diloco* H=100" in said and "--local-steps H" not in said, said


def test_the_csv_carries_no_note_and_its_local_steps_is_the_h_shown_the_note_on_stderr():
    done = CliRunner().invoke(app, [*SMALL, "-s", "diloco", "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert pd.read_csv(io.StringIO(done.stdout))["local_steps"].tolist() == [2] and "H = 500" not in done.stdout
    # a script reading the CSV is still told that H is the short bench's, once, on stderr
    assert words(done.stderr).count("diloco H = 500") == 1 and done.stderr.startswith("note: H:"), done.stderr
    given = CliRunner().invoke(app, [*SMALL, "-s", "diloco", "--local-steps", "500", "--format", "json"])
    assert given.exit_code == 0 and "H = 500" not in given.stderr


@pytest.mark.parametrize("network, hint", [(["10gbe"], True), (["10gbe", "--traits", "nccl"], False),
                                           (["h100x8-10gbe"], False)])
def test_under_csv_the_ideal_library_hint_is_on_stderr_where_the_table_would_show_it(network, hint):
    """(--overlap none: per bucket NCCL's step is the slower here, and stderr would say so too: test_bucket_note.)"""
    done = CliRunner().invoke(app, [*SMALL, "-s", "adamw@bf16-allreduce", "--network", *network, "--overlap", "none",
                                    "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert "Library ideal" not in done.stdout and pd.read_csv(io.StringIO(done.stdout))["library"].size == 1
    assert (words(done.stderr) == f"note: {words(IDEAL_HINT)}") == hint, done.stderr
    assert hint or done.stderr == ""


# --- 2. the topology and the library in the title; --traits nccl named where the ideal library priced

@pytest.mark.parametrize("network, topology, library, hint", [
    (["10gbe"], "16 nodes x 1 GPU", "library: ideal", True),
    (["10gbe", "--traits", "nccl"], "16 nodes x 1 GPU", "library: nccl over sockets", False),
    (["h100x8-10gbe"], "2 nodes x 8 GPUs", "library: nccl over sockets", False),
    (["10gbe", "--gpus-per-node", "8"], "2 nodes x 8 GPUs", "library: nccl over sockets", False),
    (["10gbe", "--gpus-per-node", "8", "--traits", "ideal"], "2 nodes x 8 GPUs", "library: ideal", False),
])
def test_the_title_says_the_topology_and_library_and_the_ideal_one_points_to_nccl(monkeypatch, network, topology,
                                                                                   library, hint):
    done = invoke_at(80, [*SMALL, "-s", "adamw@bf16-allreduce", "--network", *network], monkeypatch)
    said = words(done.stdout)
    assert lines_fit(done.stdout)
    assert f"({topology}, {library})" in said, said
    assert ("--traits nccl prices it, --gpus-per-node sets your nodes' GPUs" in said) == hint


USER_25GBE = ["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--gpus-per-node", "8",
              "--network", "25gbe", "--format", "csv"]
"""A new user's GPU cluster: 4 nodes of 8 GPUs on the 25gbe preset, --traits not given."""


def test_a_flat_preset_given_nodes_of_several_gpus_is_priced_as_nccl_unless_traits_says_otherwise():
    runs = {}
    for traits in ([], ["--traits", "nccl"], ["--traits", "ideal"]):
        done = CliRunner().invoke(app, [*USER_25GBE, *traits])
        assert done.exit_code == 0, done.output
        runs[" ".join(traits)] = (pd.read_csv(io.StringIO(done.stdout)), done.stderr)
    (plain, said), (nccl, _), (ideal, _) = runs.values()
    assert set(plain["library"]) == {"nccl"} and set(plain["fabric"]) == {"sockets"}
    pd.testing.assert_series_equal(plain["step_s"], nccl["step_s"])  # the same as asking for NCCL
    assert set(ideal["library"]) == {"ideal"} and (ideal["step_s"] < plain["step_s"]).all()  # no sockets cap
    assert "--gpus-per-node" not in said  # the option given is not suggested


def test_the_ideal_hint_on_nodes_of_several_gpus_does_not_suggest_gpus_per_node():
    from lionsim.cli.estimate_notes import IDEAL_CAPTION_HINT, library_hint

    row = {"workers": 32, "gpus_per_node": 8, "library": "ideal"}
    hint = library_hint(pd.DataFrame([row]), IDEAL_CAPTION_HINT)
    assert hint.startswith("GPUs run NCCL") and "--traits nccl prices it" in hint and "--gpus-per-node" not in hint
    assert "--gpus-per-node sets" in library_hint(pd.DataFrame([{**row, "gpus_per_node": 1}]), IDEAL_CAPTION_HINT)


def test_one_worker_is_one_worker_on_one_node_and_draws_no_library_line(monkeypatch):
    done = invoke_at(80, [*SMALL[:-1], "1", "-s", "adamw@bf16-allreduce", "--network", "10gbe"], monkeypatch)
    said = words(done.stdout)
    assert "1 worker on 10gbe (1 node x 1 GPU, library: ideal)" in said, said
    assert "--traits nccl" not in said  # nothing crosses a node


def test_networks_says_which_library_prices_each_preset_and_what_nccl_runs_over(monkeypatch):
    done = invoke_at(200, ["networks"], monkeypatch)  # each row on one line
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "(ideal library; NCCL: sockets)" in rows["10gbe"]
    assert "(NCCL over sockets)" in rows["h100x8-10gbe"]
    assert "(NCCL over ib)" in rows["dgx-h100"]
    assert "library:" not in done.stdout  # the old "(library: ideal; NCCL over sockets)"


# --- 3. a --need reason shared by several runs: said once, each run marked, on every network

def test_a_whole_note_or_a_reason_two_runs_share_is_footnoted_once():
    from lionsim.estimate.need import footnoted

    rows = [{"need_note": "above X: the cap"}, {"need_note": "above Y: the cap"}, {"need_note": ""},
            {"need_note": "unreachable: alone"}, {"need_note": "same"}, {"need_note": "same"}]
    cells, reasons = footnoted(rows)
    assert cells == ["above X [1]", "above Y [1]", "", "unreachable: alone", "[2]", "[2]"]
    assert reasons == ["the cap", "same"]


def test_the_uncapped_ideal_librarys_note_is_said_once_on_10gbe(monkeypatch):
    args = ["estimate", "--model", "gpt2-1.3b", "--tokens-per-worker", "8192", "--workers", "16", "--network",
            "10gbe", "--need", "utilisation=0.95", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo", "-s", "diloco"]
    done = invoke_at(80, args, monkeypatch)
    need = done.stdout[done.stdout.index("inter-node bandwidth"):]
    said = words(need)
    assert lines_fit(need)
    assert said.count("above NCCL's cap here [1]") == 3, said
    assert said.count("transport moves at most") == 1 and said.count("[1] NCCL's sockets transport") == 1
    csv = CliRunner().invoke(app, [*args, "--format", "csv"])
    notes = pd.read_csv(io.StringIO(csv.stdout))["need_note"]
    assert all("GB/s a node" in note for note in notes)  # each row keeps its whole text


# --- 4. --from-run: a way forward where runs did not reach; a proxy far smaller than the priced model

def proxy(tmp_path, reached: dict, params: int = 11_018):
    """A bench run of `reached` whose summary records its model's size and each run's final loss."""
    out = bench_dir(tmp_path, reached)
    summary = pd.read_csv(out / "summary.csv")
    summary["params"] = params
    summary["final_loss"] = [0.5, 0.93, 1.2, 0.7][:len(summary)]
    summary.to_csv(out / "summary.csv", index=False)
    return out


def test_runs_that_did_not_reach_get_one_hint_that_names_no_target_the_worst_run_set(tmp_path, monkeypatch):
    """The hint said "rerun it with bench --target-loss 1.2 (its runs' highest final loss)": the worst run's
    loss as the target, the rule docs/time-model.md says made every speedup meaningless."""
    missed = {**REACHED, RUNS[1]: math.nan, RUNS[2]: math.nan}
    args = ["estimate", "--model", "gpt2-1.3b", "--tokens-per-worker", "8192", "--workers", "16",
            "--from-run", str(proxy(tmp_path, missed)), "--tokens", "2.6e10", "-s", RUNS[0], "-s", RUNS[1],
            "-s", RUNS[2]]
    done = invoke_at(80, args, monkeypatch)
    hints = [line for line in done.stderr.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1 and "2 of 3 runs priced did not reach" in hints[0]
    assert "1.2" not in hints[0] and "bench --target-loss" not in hints[0]  # 1.2: the worst run's final loss
    assert "train them longer (bench --steps)" in hints[0] and "give --target-loss L here" in hints[0]
    said = words(done.stdout)
    assert said.count("not reached") == 2
    # the caveat: both sizes, the ratio from them
    assert ("Its model is far smaller: mlp (11,018 params) against the priced gpt2-1.3b (1,315,723,264 params, "
            f"{1_315_723_264 / 11_018:,.0f}x)") in said, said


def test_a_model_sized_by_params_is_the_priced_model_in_the_caveat(tmp_path, monkeypatch):
    """--params names no model: the caveat says "the priced model", not "the priced params"."""
    args = ["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "16",
            "--from-run", str(proxy(tmp_path, {RUNS[0]: 80, RUNS[1]: 60})), "-s", RUNS[0], "-s", RUNS[1]]
    said = words(invoke_at(80, args, monkeypatch).stdout)
    assert ("Its model is far smaller: mlp (11,018 params) against the priced model (1,000,000,000 params, "
            f"{1_000_000_000 / 11_018:,.0f}x)") in said, said


def test_the_hint_leaves_a_diverged_runs_last_losses_out_of_the_target_it_names(tmp_path):
    from lionsim.estimate.from_run import _size_and_common_loss

    summary = pd.DataFrame({"params": [10, 10, 10], "final_loss": [0.5, 0.9, 7.0],
                            "diverged_at_step": [math.nan, math.nan, 40]})
    # 7.0: the run that diverged at step 40; a rerun to it would tell nothing. 0.9: the highest the others reached
    assert _size_and_common_loss(summary)["common_loss"] == 0.9
    assert _size_and_common_loss(summary.drop(columns="diverged_at_step"))["common_loss"] == 7.0  # an older summary


def test_a_proxy_that_reached_and_is_near_the_priced_size_draws_neither(tmp_path, monkeypatch):
    args = ["estimate", "--params", "1e5", "--tokens-per-worker", "1024", "--workers", "16",
            "--from-run", str(proxy(tmp_path, {RUNS[0]: 80, RUNS[1]: 60}, params=20_000)), "-s", RUNS[0], "-s", RUNS[1]]
    done = invoke_at(80, args, monkeypatch)
    assert "hint:" not in done.stderr and "far smaller" not in done.stdout


# --- 5. every name --device accepts is listed by `lionsim devices`

def test_devices_lists_every_accepted_name_aliases_beside_their_device(monkeypatch):
    from lionsim.compute import DEVICES

    done = CliRunner().invoke(app, ["devices", "--format", "csv"])
    frame = pd.read_csv(io.StringIO(done.stdout), keep_default_na=False)
    listed = set(frame["device"]) | {a for aliases in frame["aliases"] for a in aliases.split()}
    assert listed == set(DEVICES.names())
    assert frame.set_index("device").loc["a100-40gb", "aliases"] == "a100"
    assert "also a100" in invoke_at(80, ["devices"], monkeypatch).stdout
