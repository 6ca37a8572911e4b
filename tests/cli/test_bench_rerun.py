"""`bench --overwrite` replaces the run --out holds only when the new run completes: one that
fails (an error in the user's code) or is interrupted leaves every file of the old run byte for
byte, keeps its finished steps in --out's `.rerun/` and says so in its one line; `--resume` then
continues that rerun, and its result is the uninterrupted run's (the reference: the old run, of
the same configuration, every time modelled for a device). A `--resume` that replaces the
report.md `lionsim report` wrote says so on stderr, as a sweep does."""

from __future__ import annotations

import io
import json
import shutil
import signal
from pathlib import Path

import pandas as pd

from tests.helpers.cli import run_cli
from tests.training.test_signals import ctrl_c_at_step, own_handlers

WORKLOAD = '''
import os

import torch
from torch import nn
from torch.utils.data import TensorDataset

CALLS = {}


def loss(out, y):
    given = os.environ.get("FAIL_AFTER")  # "N:name": calls counted from the first under this setting
    if given:  # (lionsim builds a workload once a process: a count kept in make() would not restart)
        CALLS[given] = CALLS.get(given, 0) + 1
        if CALLS[given] > int(given.split(":")[0]):
            raise RuntimeError(f"boom after {CALLS[given] - 1} calls")
    return nn.functional.cross_entropy(out, y)


def make():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 4, generator=g)
    y = torch.randint(0, 3, (256,), generator=g)
    return nn.Linear(4, 3), TensorDataset(x, y), loss
'''
STEPS = 4
FAILING = "14:{}"
"""FAIL_AFTER for a bench that fails in its second run (the first takes 2 calls a step and 2
evaluations, after up to 4 calls that check and count the model)."""


def bench(tmp_path: Path) -> list[str]:
    """A two-run bench of the workload above, its times modelled (so two sessions agree exactly)."""
    (tmp_path / "wl.py").write_text(WORKLOAD)
    return ["bench", "-w", f"{tmp_path / 'wl.py'}:make", "-n", "2", "-b", "8", "--steps", str(STEPS),
            "--eval-every", "2", "--compute", "h100", "-s", "adamw", "-s", "lion", "--out", str(tmp_path / "o")]


def files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` but the kept rerun's, by relative path."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and ".rerun" not in p.relative_to(directory).parts}


def error_lines(err: str) -> list[str]:
    return [line for line in err.strip().splitlines() if not line.startswith("lionsim: ")]


def finished(tmp_path, capsys) -> tuple[list[str], Path, dict[str, bytes]]:
    argv = bench(tmp_path)
    out = tmp_path / "o"
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    old = files(out)
    assert {"steps.csv", "summary.csv", "run.json", "loss_vs_step.png"} <= set(old)
    return argv, out, old


def same_result(out: Path, old: dict[str, bytes]) -> None:
    """The CSVs of `out` are the uninterrupted run's (`old`), every column."""
    for name in ("steps.csv", "summary.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(io.BytesIO(old[name])))


def test_a_rerun_failed_by_the_users_code_keeps_the_old_run_and_resume_completes_it(tmp_path, capsys, monkeypatch):
    argv, out, old = finished(tmp_path, capsys)
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("users-code"))  # in the second run: the first is kept whole
    code, _, err = run_cli([*argv, "--overwrite"], capsys)
    rerun = out / ".rerun"
    assert code == 3 and files(out) == old  # every file of the old run, byte for byte
    assert len(error_lines(err)) == 1, err
    line = error_lines(err)[0]
    assert line.startswith("error: lion@fp32-allreduce at step ") and "the workload raised RuntimeError: boom" in line
    assert line.endswith(f"finished steps kept in {rerun} ({out} still holds its previous results: only a run that "
                         "completes replaces them); once it is fixed, the same command with --resume in place of "
                         "--overwrite trains the runs that did not finish"), line
    meta = json.loads((rerun / "run.json").read_text())
    assert meta["status"] == "failed" and meta["config"]["out"] == str(out)
    kept = pd.read_csv(rerun / "steps.csv")
    assert kept.groupby("strategy").step.max().to_dict()["adamw"] == STEPS and len(kept) < 2 * STEPS
    assert not list(tmp_path.glob(".o*"))  # nothing staged is left beside --out
    # fixed: --resume continues the rerun (not the old run, which is complete) and replaces --out
    monkeypatch.delenv("FAIL_AFTER")
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert not rerun.exists() and json.loads((out / "run.json").read_text())["resumed"][0]["kept_runs"] == [
        "adamw@fp32-allreduce"]
    same_result(out, old)


def test_an_interrupted_rerun_keeps_the_old_run_and_resume_continues_it_exactly(tmp_path, capsys):
    argv, out, old = finished(tmp_path, capsys)
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        code, _, err = run_cli([*argv, "--overwrite"], capsys)
    rerun = out / ".rerun"
    assert code == 2 and got == [signal.SIGINT] and files(out) == old
    assert error_lines(err) == [
        f"error: interrupted (SIGINT): 2 finished steps kept in {rerun} ({out} still holds its previous results: "
        "only a run that completes replaces them); the same command with --resume in place of --overwrite "
        "continues adamw@fp32-allreduce from step 3"], err
    assert (rerun / ".resume" / "rank0.pt").is_file() and len(pd.read_csv(rerun / "steps.csv")) == 2
    # another interrupt, of the resume: --out is still the old run, the rerun goes on in .rerun
    with own_handlers() as (mine, got), ctrl_c_at_step(STEPS):  # the last step of the first run
        code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 2 and error_lines(err)[-1].endswith("the same command with --resume continues "
                                                       "lion@fp32-allreduce from step 1"), err
    assert files(out) == old and len(pd.read_csv(rerun / "steps.csv")) == STEPS
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert not rerun.exists()
    same_result(out, old)


def test_a_rerun_that_completes_replaces_the_old_run_and_the_kept_rerun(tmp_path, capsys, monkeypatch):
    argv, out, old = finished(tmp_path, capsys)
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("completes"))
    assert run_cli([*argv, "--overwrite"], capsys)[0] == 3 and (out / ".rerun").is_dir()
    monkeypatch.delenv("FAIL_AFTER")
    other = [*argv[:argv.index("-s")], "-s", "sgdm", "--out", str(out), "--overwrite"]
    code, _, err = run_cli(other, capsys)
    assert code == 0, err
    assert not (out / ".rerun").exists()
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and [r["run"] for r in meta["runs"]] == ["sgdm@fp32-allreduce"]
    assert pd.read_csv(out / "steps.csv").strategy.unique().tolist() == ["sgdm"]


def test_a_finished_run_beside_a_kept_rerun_names_it_when_refusing(tmp_path, capsys, monkeypatch):
    argv, out, old = finished(tmp_path, capsys)
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("refusing"))
    assert run_cli([*argv, "--overwrite"], capsys)[0] == 3
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and error_lines(err) == [
        f"error: {out} holds a complete bench run ({tmp_path / 'wl.py'}:make, 2 runs, {STEPS} steps); an unfinished "
        f"rerun is kept in {out / '.rerun'}: pass --resume to continue it (same options), --overwrite to start "
        "another, or choose another --out"], err
    assert files(out) == old


def test_a_resume_that_replaces_the_report_says_so(tmp_path, capsys):
    """An interrupted run, then `lionsim report` on it, then --resume: the report (of the run before
    the resume) goes, in one line on stderr, as a sweep says it."""
    argv = bench(tmp_path)
    out = tmp_path / "o"
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        assert run_cli(argv, capsys)[0] == 2
    assert run_cli(["report", str(out)], capsys)[0] == 0 and (out / "report.md").is_file()
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert not (out / "report.md").exists()
    assert error_lines(err)[0] == (f"removed {out / 'report.md'}: it described the run before this resume; "
                                   f"`lionsim report {out}` writes it again"), err


def test_a_launchers_rank_stopped_in_a_rerun_says_what_continues_it_in_one_clause(tmp_path, capsys, monkeypatch):
    """Under torchrun, a rank stopped at a step boundary (RunStopped, its state kept) says where the
    steps are kept and what continues them as the simulator's line does, `; ... continues LABEL from
    step N`, not a second parenthetical after the kept line's own."""
    import types

    import lionsim.launch
    from lionsim.training.loop import RunStopped

    argv, out, old = finished(tmp_path, capsys)
    checkpoint = types.SimpleNamespace(label="adamw@fp32-allreduce", step=2)

    def stopped(*args, **kwargs):
        raise RunStopped(checkpoint)

    monkeypatch.setattr(lionsim.launch, "run_rank", stopped)
    for name, value in {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": "29999"}.items():
        monkeypatch.setenv(name, value)
    code, _, err = run_cli([*argv, "--backend", "gloo", "--overwrite"], capsys)
    assert code == 2 and files(out) == old
    assert error_lines(err) == [
        f"error: rank 0: interrupted after step 2 of adamw@fp32-allreduce; finished steps kept in {out / '.rerun'} "
        f"({out} still holds its previous results: only a run that completes replaces them); the same command with "
        "--resume in place of --overwrite continues adamw@fp32-allreduce from step 3"], err


def test_a_resumed_rerun_that_replaces_the_report_says_it_described_the_replaced_run(tmp_path, capsys, monkeypatch):
    """A finished run, `lionsim report` on it, an --overwrite that fails (kept in .rerun), then --resume:
    the report goes with the run the rerun replaces, and the line says so (not 'the run before this
    resume': the resume continued the rerun, which the report never described)."""
    argv, out, old = finished(tmp_path, capsys)
    assert run_cli(["report", str(out)], capsys)[0] == 0 and (out / "report.md").is_file()
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("report"))
    assert run_cli([*argv, "--overwrite"], capsys)[0] == 3 and (out / "report.md").is_file()
    monkeypatch.delenv("FAIL_AFTER")
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert not (out / "report.md").exists() and not (out / ".rerun").exists()
    assert error_lines(err)[0] == (f"removed {out / 'report.md'}: it described the run this one replaced; "
                                   f"`lionsim report {out}` writes it again"), err


def test_overwrite_from_a_config_file_gives_advice_that_works(tmp_path, capsys, monkeypatch):
    """`overwrite = true` from a --config file: the stopped rerun's line says the same command with
    --resume (the user typed no --overwrite to put it in place of), and that command, the file's
    overwrite and a typed --resume, continues the rerun: the typed flag wins over the file's."""
    argv, out, old = finished(tmp_path, capsys)
    (tmp_path / "cfg.toml").write_text("overwrite = true\n")
    filed = [*argv, "--config", str(tmp_path / "cfg.toml")]
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("filed"))
    code, _, err = run_cli(filed, capsys)
    assert code == 3 and files(out) == old and len(error_lines(err)) == 1, err
    assert error_lines(err)[0].endswith(f"finished steps kept in {out / '.rerun'} ({out} still holds its previous "
                                        "results: only a run that completes replaces them); once it is fixed, the "
                                        "same command with --resume trains the runs that did not finish"), err
    monkeypatch.delenv("FAIL_AFTER")
    code, _, err = run_cli([*filed, "--resume"], capsys)
    assert code == 0, err
    assert not (out / ".rerun").exists() and json.loads((out / "run.json").read_text())["resumed"][0]["kept_runs"] == [
        "adamw@fp32-allreduce"]
    same_result(out, old)
    # a file's resume and a typed --overwrite: the typed one replaces the finished run
    (tmp_path / "resume.toml").write_text("resume = true\n")
    code, _, err = run_cli([*argv, "--config", str(tmp_path / "resume.toml"), "--overwrite"], capsys)
    assert code == 0 and "resumed" not in json.loads((out / "run.json").read_text()), err
    same_result(out, old)
    # both typed: which was meant is not guessed
    code, _, err = run_cli([*argv, "--overwrite", "--resume"], capsys)
    assert code == 2 and error_lines(err) == [
        "error: --resume continues the run in --out and --overwrite replaces it: pass one of them"], err


def test_resume_beside_a_rerun_of_another_configuration_says_how_to_get_back_to_the_earlier_run(tmp_path, capsys,
                                                                                                 monkeypatch):
    """--out holds an interrupted run A; an --overwrite with other options (B) fails, kept in .rerun,
    which --resume continues first. --resume with A's options is refused naming what differs from B,
    and says that A matches and how to get back to it (remove .rerun); done, --resume completes A as an
    uninterrupted run. Other options again: the refusal says how to continue either run."""
    argv = bench(tmp_path)
    out, rerun = tmp_path / "o", tmp_path / "o" / ".rerun"
    reference = tmp_path / "ref"
    assert run_cli([*argv[:-1], str(reference)], capsys)[0] == 0
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        assert run_cli(argv, capsys)[0] == 2
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("other"))
    assert run_cli([*argv, "--seed", "1", "--overwrite"], capsys)[0] == 3 and rerun.is_dir()
    monkeypatch.delenv("FAIL_AFTER")
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 2 and error_lines(err) == [
        f"error: --resume: {rerun}, the unfinished rerun an --overwrite left (--resume continues it first), was run "
        f"with another configuration (--seed 1 -> 0); the interrupted run {out} itself holds matches this command: "
        f"remove {rerun} (its finished steps go) and run it again to continue that one, or resume the rerun with its "
        f"own options (`lionsim bench --config {rerun}/run.json --resume`)"], err
    code, _, err = run_cli([*argv, "--seed", "2", "--resume"], capsys)
    assert code == 2 and error_lines(err)[0].endswith(
        f"to continue the interrupted run {out} itself holds instead, remove {rerun} (its finished steps go) and "
        f"resume with that run's options (`lionsim bench --config {out}/run.json --resume`)"), err
    shutil.rmtree(rerun)
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    same_result(out, files(reference))


def test_a_rerun_set_aside_by_a_stopped_publish_is_put_back_and_resumed(tmp_path, capsys, monkeypatch):
    """A publish into .rerun killed between its two renames leaves the previous rerun only in
    .o.rerun.old beside --out (and its own files in the staging folder): the next command moves it
    back, says so, and --resume continues it; it used to find nothing to continue, and the next
    publish removed it."""
    argv, out, old = finished(tmp_path, capsys)
    monkeypatch.setenv("FAIL_AFTER", FAILING.format("aside"))
    assert run_cli([*argv, "--overwrite"], capsys)[0] == 3
    monkeypatch.delenv("FAIL_AFTER")
    left = tmp_path / ".o.rerun.old"
    (out / ".rerun").rename(left)  # the kill: the first rename done, the second not
    (tmp_path / ".o.partial").mkdir()
    (tmp_path / ".o.partial" / "steps.csv").write_text("what the killed publish staged\n")
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert error_lines(err)[0] == (f"note: moved {left} back to {out / '.rerun'}: a publish stopped between its two "
                                   "renames had set it aside (the files it was publishing are not kept)"), err
    assert not left.exists() and not (out / ".rerun").exists()
    assert json.loads((out / "run.json").read_text())["resumed"][0]["kept_runs"] == ["adamw@fp32-allreduce"]
    same_result(out, old)


def test_an_out_set_aside_by_a_stopped_publish_is_put_back_and_resumed(tmp_path, capsys):
    """The same for --out itself: a publish over it killed between its two renames leaves it only in
    .o.old; the next --resume moves it back and continues the interrupted run it holds."""
    argv = bench(tmp_path)
    out, reference = tmp_path / "o", tmp_path / "ref"
    assert run_cli([*argv[:-1], str(reference)], capsys)[0] == 0
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        assert run_cli(argv, capsys)[0] == 2
    left = tmp_path / ".o.old"
    out.rename(left)
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 0, err
    assert error_lines(err)[0].startswith(f"note: moved {left} back to {out}: "), err
    assert not left.exists()
    same_result(out, files(reference))


def test_an_interrupt_before_any_new_step_says_what_out_still_holds(tmp_path, capsys, monkeypatch):
    """Ctrl-C while a --resume started up (before its runner was built) said only "no results were
    written", though --out held its finished steps and the next --resume carried on; an
    --overwrite stopped there likewise, though --out still held the old run. The reference: the
    rows of steps.csv on disk, and --out's files byte for byte."""
    import lionsim.training.runner

    argv = bench(tmp_path)
    out = tmp_path / "o"
    with own_handlers(), ctrl_c_at_step(2):
        assert run_cli(argv, capsys)[0] == 2
    old, kept = files(out), len(pd.read_csv(out / "steps.csv"))

    def starting(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(lionsim.training.runner, "Runner", starting)
    code, _, err = run_cli([*argv, "--resume"], capsys)
    assert code == 2 and error_lines(err) == [
        f"error: interrupted before any new step: {out} is as it was ({kept} finished steps kept); the same "
        "command with --resume trains the runs that did not finish"], err
    assert files(out) == old
    code, _, err = run_cli([*argv, "--overwrite"], capsys)
    assert code == 2 and error_lines(err) == [
        f"error: interrupted: no results were written; {out} still holds its previous results"], err
    assert files(out) == old


def test_a_launched_rank_reads_out_once_rank_0_has_put_it_back(tmp_path, capsys, monkeypatch):
    """Under torchrun only rank 0 (the lock's holder) moves back what a stopped publish set aside;
    the other ranks read --out at once, so one that read before the move kept or resumed the run
    elsewhere than rank 0. Here this process is rank 1 of 2, and rank 0's move comes 0.5 s late
    (a thread). The reference: where rank 0 resumes once the rerun is back, --out's .rerun/."""
    import threading
    import time

    import lionsim.launch
    from lionsim.reports.outdir import resumed_from
    from lionsim.reports.publish import put_back

    argv, out, _ = finished(tmp_path, capsys)
    left = tmp_path / ".o.rerun.old"  # a rerun a publish set aside, killed before it moved the new one in
    left.mkdir()
    (left / "run.json").write_text("{}")
    homes = []
    monkeypatch.setattr(lionsim.launch, "run_rank", lambda *args, keeping, **kwargs: homes.append(keeping.home))
    for name, value in {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}.items():
        monkeypatch.setenv(name, value)
    rank_0 = threading.Thread(target=lambda: (time.sleep(0.5), put_back(out)))
    rank_0.start()
    try:
        code, _, err = run_cli([*argv, "--backend", "gloo", "--resume"], capsys)
    finally:
        rank_0.join()
    assert code == 0, err
    assert homes == [resumed_from(out)] == [out / ".rerun"]
