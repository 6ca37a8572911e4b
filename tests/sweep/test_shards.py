"""`lionsim sweep --shard I/N` and `lionsim sweep merge`: three shards run as concurrent processes
on one --out merge to exactly the unsharded sweep (every file but sweep.json's argv and start,
and run.json's wall-clock fields); a cell finished twice with the same result is kept once, with
different results it is refused naming it; missing cells are listed; bad input is one line.
A unit that fails in lionsim is recorded once in failed.json and the other units go on.

Shards are balanced by the grid alone (lionsim.sweep.shards): checked against a brute-force
search for the best split."""

import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.sweep.shards import Shard
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # several processes, or many trainings: pytest -m slow

CELLS = 8
GRID = ["--workload", "mlp", "--model-size", "tiny", "--workers", "2,4", "--network", "1gbe,10gbe", "--seed", "0",
        "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--strategy", "adamw", "--strategy", "dlion-mavo"]
WALL_CLOCK = ("argv", "started", "duration_s", "host")


def files(root: Path) -> dict[str, str]:
    """A sweep root's files as text (parts/ and plots left out); run.json without wall-clock fields."""
    texts = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == "parts" or not path.is_file() or path.suffix in (".png", ".svg"):
            continue
        text = path.read_text()
        if path.name in ("run.json", "sweep.json"):
            meta = json.loads(text)
            for key in (*WALL_CLOCK, "merged", "shards", "shard", "jobs", "executor"):
                meta.pop(key, None)
            meta.get("config", {}).pop("out", None)
            text = json.dumps(meta, sort_keys=True)
        texts[str(rel)] = text
    return texts


@pytest.fixture(autouse=True)
def no_plots(request, monkeypatch):
    """Plots cost seconds a sweep and are not what this file tests (test_plots.py is); one test keeps them."""
    if request.node.name != "test_three_concurrent_shards_merge_to_the_unsharded_sweep":
        monkeypatch.setattr("lionsim.cli.sweep_cmd.draw_plots", lambda out, summary, rounds: [])


@pytest.fixture(scope="session")
def unsharded(tmp_path_factory):
    from lionsim.plugins import LOADED

    # run.json records every registered strategy's flag: a plug-in an earlier test left loaded in
    # this process would add its flags here and not in the shards' fresh processes
    assert not LOADED, f"plug-ins an earlier test left loaded: {', '.join(LOADED)}"
    out = tmp_path_factory.mktemp("whole") / "s"
    with pytest.raises(SystemExit) as done:
        main(["sweep", *GRID, "--out", str(out)])
    assert done.value.code == 0
    return out


@pytest.fixture(scope="session")
def sharded(tmp_path_factory):
    """Shards 1/3, 2/3, 3/3 as three processes at once on one --out, as a Slurm array runs them."""
    out = tmp_path_factory.mktemp("shards") / "s"
    procs = [subprocess.Popen([sys.executable, "-m", "lionsim", "sweep", *GRID, "--shard", f"{i}/3", "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (1, 2, 3)]
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr
    return out


def test_three_concurrent_shards_merge_to_the_unsharded_sweep(sharded, unsharded, tmp_path, capsys):
    parts = sorted(p.name for p in (sharded / "parts").iterdir())
    assert parts == ["shard-1-of-3", "shard-2-of-3", "shard-3-of-3"]
    assert not (sharded / "cells").exists()  # shards write their parts only
    cells = [sorted(p.name for p in (sharded / "parts" / part / "cells").iterdir()) for part in parts]
    assert sorted(itertools.chain(*cells)) == sorted(p.name for p in (unsharded / "cells").iterdir())  # each once
    merged = tmp_path / "m"
    shutil.copytree(sharded, merged)
    code, out, err = run_cli(["sweep", "merge", str(merged)], capsys)
    assert code == 0, err
    assert f"{CELLS} of {CELLS} cells ({CELLS} new)" in " ".join(out.split())
    assert files(merged) == files(unsharded)
    assert (merged / "speedup_vs_bandwidth.png").is_file()
    record = json.loads((merged / "cells" / cells[0][0] / "run.json").read_text())
    assert record["config"]["out"] == str(merged / "cells" / cells[0][0])  # where the cell now lives
    # merging again changes nothing; a plain sweep on the merged root trains nothing
    code, out, err = run_cli(["sweep", "merge", str(merged)], capsys)
    assert code == 0 and "(0 new)" in " ".join(out.split()) and files(merged) == files(unsharded)
    code, out, err = run_cli(["sweep", *GRID, "--out", str(merged)], capsys)
    assert code == 0 and "every cell was already finished" in " ".join(out.split())


def test_a_plain_sweep_takes_in_the_parts_and_trains_only_the_missing(sharded, unsharded, tmp_path, capsys):
    root = tmp_path / "r"
    shutil.copytree(sharded, root)
    shutil.rmtree(root / "parts" / "shard-2-of-3")  # that array task never ran
    code, out, err = run_cli(["sweep", "merge", str(root)], capsys)
    lost = len(list((sharded / "parts" / "shard-2-of-3" / "cells").iterdir()))
    assert code == 1 and err.startswith(f"error: missing: {lost} cells") and len(err.splitlines()) == 1, err
    assert len(pd.read_csv(root / "sweep_summary.csv")) == CELLS - lost  # the merged part is written
    code, out, err = run_cli(["sweep", *GRID, "--out", str(root)], capsys)
    assert code == 0, err
    assert f"{lost // 2} training{'s' if lost > 2 else ''} this run; {CELLS - lost} cells were already finished" \
        in " ".join(out.split())
    assert files(root) == files(unsharded)


def test_report_on_a_sharded_root_merges_it_first(sharded, unsharded, tmp_path, capsys):
    root = tmp_path / "rep"
    shutil.copytree(sharded, root)
    code, out, err = run_cli(["report", str(root)], capsys)
    assert code == 0, err
    assert f"{CELLS} of {CELLS} cells ({CELLS} new)" in " ".join(err.split()) and (root / "report.md").is_file()
    assert {k: v for k, v in files(root).items() if k != "report.md"} == files(unsharded)
    # Reproduce: each shard's command, the merge, the report (not the report's command as the sweep's)
    reproduce = (root / "report.md").read_text().split("## Reproduce")[1].split("\n## ")[0]
    commands = [line.strip() for line in reproduce.splitlines() if line.startswith("    ")]
    assert [c.split(" --shard ")[1].split()[0] for c in commands[:3]] == ["1/3", "2/3", "3/3"]
    assert commands[3:] == [f"lionsim sweep merge {root}", f"lionsim report {root}"], commands


def test_duplicates_same_kept_once_different_refused(sharded, unsharded, tmp_path, capsys):
    root = tmp_path / "d"
    shutil.copytree(sharded, root)
    # the same split run again as 1/2, 2/2 next to 1/3..3/3: every cell twice, same results
    one = root / "parts" / "shard-1-of-2"
    shutil.copytree(unsharded, one, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    record = json.loads((one / "sweep.json").read_text())
    (one / "sweep.json").write_text(json.dumps({**record, "shard": "1/2"}))
    code, out, err = run_cli(["sweep", "merge", str(root)], capsys)
    assert code == 0, err
    assert files(root) == files(unsharded)
    # one copy's loss differs in the last digit: refused, naming the cell and both copies, nothing written
    root2 = tmp_path / "d2"
    shutil.copytree(sharded, root2)
    shutil.copytree(one, root2 / "parts" / "shard-1-of-2")
    cell = sorted(p.name for p in (root2 / "parts" / "shard-3-of-3" / "cells").iterdir())[0]
    steps = root2 / "parts" / "shard-1-of-2" / "cells" / cell / "steps.csv"
    frame = pd.read_csv(steps)
    frame.loc[1, "loss"] = frame.loc[1, "loss"] * (1 + 1e-12)
    frame.to_csv(steps, index=False)
    before = sorted(p.relative_to(root2) for p in root2.rglob("*"))
    code, out, err = run_cli(["sweep", "merge", str(root2)], capsys)
    assert code == 2 and f"cell {cell} was finished twice with different results" in err, err
    assert "shard-1-of-2" in err and len(err.splitlines()) == 1
    assert sorted(p.relative_to(root2) for p in root2.rglob("*")) == before


@pytest.mark.parametrize("shard, says", [("0/3", "shard 0 of 3 does not exist"), ("4/3", "shard 4 of 3 does not exist"),
                                         ("a/b", "bad --shard 'a/b'"), ("3", "bad --shard '3'")])
def test_bad_shard_is_one_line_and_writes_nothing(shard, says, tmp_path, capsys):
    code, out, err = run_cli(["sweep", *GRID, "--shard", shard, "--out", str(tmp_path / "s")], capsys)
    assert code == 2 and says in err and "accepted: I/N" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "s").exists()


def test_merge_without_parts_is_one_line_and_writes_nothing(unsharded, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for root in (tmp_path / "empty", tmp_path / "absent"):
        code, out, err = run_cli(["sweep", "merge", str(root)], capsys)
        assert code == 2 and "no shard parts" in err and len(err.strip().splitlines()) == 1, err
    assert list((tmp_path / "empty").iterdir()) == [] and not (tmp_path / "absent").exists()
    before = files(unsharded)
    code, out, err = run_cli(["sweep", "merge", str(unsharded)], capsys)  # a plain sweep root: nothing to merge
    assert code == 2 and "no shard parts" in err and files(unsharded) == before
    (tmp_path / "file").write_text("x\n")  # a file is no sweep folder: said so, not "no parts in FILE/parts/"
    code, out, err = run_cli(["sweep", "merge", str(tmp_path / "file")], capsys)
    assert code == 2 and err.startswith(f"error: {tmp_path / 'file'} is a file, not a sweep folder; accepted: ") and \
        len(err.strip().splitlines()) == 1 and (tmp_path / "file").read_text() == "x\n", err


def test_a_unit_failing_in_lionsim_is_recorded_once_and_the_others_go_on(tmp_path, capsys, monkeypatch):
    import lionsim.sweep.train as train

    real = train.Runner.run
    calls = []

    def fails_for_lion(self, *a, **k):
        calls.append(self.plan.choices.strategies[0])
        if self.plan.choices.strategies[0].startswith("lion"):
            raise train.LionsimError("the payload does not fit (a made-up failure)")
        return real(self, *a, **k)

    monkeypatch.setattr(train.Runner, "run", fails_for_lion)
    out = tmp_path / "f"
    args = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--network", "1gbe,10gbe",
            "--steps", "3", "--strategy", "adamw", "--strategy", "lion", "--strategy", "sgdm", "--out", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert calls == ["adamw@fp32-allreduce", "lion@fp32-allreduce", "sgdm@fp32-allreduce"]  # tried once, then on
    assert code == 1 and "failed: 2 cells" in err and "a made-up failure" in err
    assert json.loads((out / "failed.json").read_text()) == {
        f"mlp-w2-{net}-s0-lion@fp32-allreduce": "the payload does not fit (a made-up failure)" for net in ("1gbe", "10gbe")}
    assert sorted(pd.read_csv(out / "sweep_summary.csv").run.unique()) == ["adamw@fp32-allreduce", "sgdm@fp32-allreduce"]
    monkeypatch.setattr(train.Runner, "run", real)
    code, stdout, err = run_cli(args, capsys)  # a rerun retries the failed cells, and failed.json goes
    assert code == 0, err
    assert not (out / "failed.json").exists() and len(pd.read_csv(out / "sweep_summary.csv")) == 6


def test_failed_json_keeps_each_record_until_its_cell_finishes(tmp_path, capsys, monkeypatch):
    """A rerun retries the failed cells: a record goes when its cell finishes (here, or in a shard's
    part that a merge takes in), is replaced when it fails again, and stays while it has not been
    retried (a rerun stopped first); a record of a cell the grid no longer holds goes with it."""
    import lionsim.sweep.train as train

    real = train.Runner.run
    raises: dict[str, BaseException] = {}  # strategy -> what its training raises this run

    def run(self, *a, **k):
        if (error := raises.get(self.plan.choices.strategies[0].split("@")[0])) is not None:
            raise error
        return real(self, *a, **k)

    monkeypatch.setattr(train.Runner, "run", run)
    out = tmp_path / "f"
    grid = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--network", "1gbe",
            "--steps", "3"]
    args = [*grid, "--strategy", "adamw", "--strategy", "lion", "--strategy", "sgdm", "--out", str(out)]

    def failed() -> dict[str, str]:
        return json.loads((out / "failed.json").read_text()) if (out / "failed.json").exists() else {}

    def cell(strategy: str) -> str:
        return f"mlp-w2-1gbe-s0-{strategy}@fp32-allreduce"

    raises.update(lion=train.LionsimError("lion failed"), sgdm=train.LionsimError("sgdm failed"))
    assert run_cli(args, capsys)[0] == 1
    assert failed() == {cell("lion"): "lion failed", cell("sgdm"): "sgdm failed"}
    raises["lion"] = KeyboardInterrupt()  # Ctrl-C in the first retry: neither cell has been retried
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "interrupted" in err, err
    assert failed() == {cell("lion"): "lion failed", cell("sgdm"): "sgdm failed"}
    raises.clear()
    raises["lion"] = train.LionsimError("lion failed again")  # sgdm now trains: its record goes
    assert run_cli(args, capsys)[0] == 1
    assert failed() == {cell("lion"): "lion failed again"}
    raises.clear()  # a shard trains lion; the merge takes its cell in, and the record goes
    assert run_cli([*args[:-2], "--shard", "1/1", "--out", str(out)], capsys)[0] == 0
    assert failed() == {cell("lion"): "lion failed again"}  # the shard wrote its part alone
    assert run_cli(["sweep", "merge", str(out)], capsys)[0] == 0
    assert failed() == {} and len(pd.read_csv(out / "sweep_summary.csv")) == 3
    # a grid without a failed cell's value: the record goes with the cell
    other = tmp_path / "g"
    raises["lion"] = train.LionsimError("lion failed")
    assert run_cli([*args[:-1], str(other)], capsys)[0] == 1 and (other / "failed.json").exists()
    assert run_cli([*grid, "--strategy", "adamw", "--strategy", "sgdm", "--out", str(other)], capsys)[0] == 0
    assert not (other / "failed.json").exists()


def test_a_merge_after_the_grid_changed_lists_the_grid_its_cells_cover(tmp_path, capsys, monkeypatch):
    """Shards rerun with more (or fewer) --workers: the merged root is the plain sweep run with the
    shards' last grid, file for file; shards that ran two grids are refused in one line."""
    import lionsim.sweep.train as train

    real = train.Runner.run

    def one_worker_fails(self, *a, **k):
        if self.plan.workload.workers == 1:
            raise train.LionsimError("one worker is refused here (a made-up failure)")
        return real(self, *a, **k)

    monkeypatch.setattr(train.Runner, "run", one_worker_fails)
    root, plain = tmp_path / "r", tmp_path / "plain"
    grid = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--network", "1gbe", "--steps", "3",
            "--batch-size", "8", "--strategy", "adamw"]

    def shard(i: int, workers: str) -> int:
        return run_cli([*grid, "--workers", workers, "--shard", f"{i}/2", "--out", root], capsys)[0]

    def merge() -> tuple[int, str]:
        code, _, err = run_cli(["sweep", "merge", root], capsys)
        return code, err

    # units go to shards largest first: w4 to shard 1, then w2 (and w1) to shard 2
    assert shard(1, "4") == 0 and shard(2, "4") == 0 and merge()[0] == 0
    assert shard(1, "2,4") == 0  # the grid grows in shard 1 alone, which has nothing new to train
    before = (root / "sweep.json").read_text()
    code, err = merge()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert ("shard-1-of-2/sweep.json has --workers 2, which" in err and "shard-2-of-2/sweep.json lacks" in err
            and "rerun --shard 2/2 with it" in err), err
    assert (root / "sweep.json").read_text() == before  # nothing written
    assert shard(2, "2,4") == 0 and merge()[0] == 0
    for workers in ("4", "2,4"):  # the reference: the plain sweep, grown the same way
        assert run_cli([*grid, "--workers", workers, "--out", plain], capsys)[0] == 0
    assert json.loads((root / "sweep.json").read_text())["grid"]["workers"] == [2, 4]
    assert files(root) == files(plain)
    # grown by a value whose cell fails, then dropped again: the merge forgets the value
    assert shard(1, "1,2,4") == 0 and shard(2, "1,2,4") == 1
    code, err = merge()
    assert code == 1 and "missing: 1 cells (mlp-w1-1gbe-s0-adamw@fp32-allreduce)" in err, err
    assert shard(1, "2,4") == 0 and shard(2, "2,4") == 0
    code, err = merge()
    assert code == 0, err
    assert json.loads((root / "sweep.json").read_text())["grid"]["workers"] == [2, 4]
    assert files(root) == files(plain)


def best_split(costs: list[int], n: int) -> int:
    """The smallest largest-shard cost over every assignment (brute force)."""
    return min(max(sum(c for c, s in zip(costs, pick) if s == i) for i in range(n))
               for pick in itertools.product(range(n), repeat=len(costs)))


@pytest.mark.parametrize("workers, n", [([2, 4], 3), ([2, 4, 8], 2), ([1, 2, 3, 5, 8], 3), ([4, 4, 4, 4, 4], 2)])
def test_shards_cover_the_grid_once_and_are_balanced(workers, n):
    units = [(f"u{i}-w{w}", w) for i, w in enumerate(workers * 2)]
    picked = [Shard(i, n).select(units) for i in range(1, n + 1)]
    assert sorted(itertools.chain(*picked)) == sorted(k for k, _ in units)  # each unit in exactly one shard
    loads = [sum(c for k, c in units if k in p) for p in picked]
    # greedy largest-first is within 4/3 of the best split (Graham's bound), and here usually equal
    assert max(loads) <= 4 / 3 * best_split([c for _, c in units], n)
    assert picked == [Shard(i, n).select(list(reversed(units))) for i in range(1, n + 1)]  # order-free


def test_a_merge_keeps_the_report_until_it_takes_in_a_cell_then_says_it_removed_it(sharded, tmp_path, capsys):
    root = tmp_path / "m"
    shutil.copytree(sharded, root)
    code, _, err = run_cli(["report", str(root)], capsys)  # merges the parts first
    assert code == 0 and (root / "report.md").is_file(), err
    code, _, err = run_cli(["sweep", "merge", str(root)], capsys)
    assert code == 0 and (root / "report.md").is_file() and "report.md" not in err, err
    shutil.rmtree(next((root / "cells").iterdir()))  # a part holds it: the merge takes it in again
    code, _, err = run_cli(["sweep", "merge", str(root)], capsys)
    assert code == 0 and not (root / "report.md").exists(), err
    assert f"removed {root}/report.md: it described the sweep before this run" in err, err
