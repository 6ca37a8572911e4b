"""Issue 12, part A: bad input is one line and exit 2, names in any case, regress from any
directory, estimate's defaults and floors, profile [intra], .gitignore.

Everything here fails before any training (or runs estimate, which trains nothing).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import lionsim.cli  # noqa: F401  (registers every command)
from lionsim.cli import options
from lionsim.cli.app import main
from lionsim.compute import DEVICES
from lionsim.config.bench import BenchConfig
from lionsim.errors import LionsimError
from lionsim.estimate import DEFAULT_STRATEGIES, EstimateConfig, estimate
from lionsim.network import load_network
from lionsim.regress import load_baseline
from lionsim.regress.baseline import default_baseline_dir
from lionsim.regress.fingerprint import SPREAD, STRICT, choose_mode, fingerprint
from lionsim.runs import parse_runs
from lionsim.strategies import STRATEGIES

REPO = Path(__file__).resolve().parents[1]


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def one_line_exit_2(args: list[str], capsys, message: str = "") -> str:
    code, out, err = run_cli(args, capsys)
    assert code == 2, (args, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert message in err, err
    return err


# ---- item 1: --config that is not a readable file ------------------------------------------


@pytest.fixture
def bad_configs(tmp_path):
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "dir.toml").mkdir()
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")  # ELOOP on open (was a traceback)
    (tmp_path / "loop.toml").symlink_to(tmp_path / "loop.toml")
    (tmp_path / "binary.toml").write_bytes(bytes(range(256)))
    (tmp_path / "binary.json").write_bytes(bytes(range(256)))
    return tmp_path


@pytest.mark.parametrize("command", ["bench", "estimate", "comm", "sweep", "regress"])
@pytest.mark.parametrize("name, message", [
    ("{tmp}", "it is a directory"),
    ("{tmp}/dir.json", "it is a directory"),
    ("{tmp}/dir.toml", "it is a directory"),
    ("{tmp}/loop.json", "cannot read config file"),
    ("{tmp}/loop.toml", "cannot read config file"),
    ("{tmp}/binary.toml", "malformed TOML"),
    ("{tmp}/binary.json", "malformed JSON"),
    ("{tmp}/missing.toml", "config file not found"),
])
def test_a_config_that_is_not_a_readable_file_is_one_line(bad_configs, capsys, command, name, message):
    before = sorted(bad_configs.iterdir())
    one_line_exit_2([command, "--config", name.format(tmp=bad_configs)], capsys, message)
    assert sorted(bad_configs.iterdir()) == before  # nothing written


# ---- item 6: regress finds its baselines from any directory --------------------------------


def test_regress_finds_the_checkout_baselines_from_another_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert default_baseline_dir() == REPO / "reports" / "baselines"
    assert load_baseline(default_baseline_dir()).cases  # was "reports/baselines/regress.json not found"
    err = one_line_exit_2(["regress", "--baselines", str(tmp_path / "none")], capsys, "point at it with --baseline-dir")
    assert str(tmp_path / "none") in err
    code, out, _ = run_cli(["regress", "--help"], capsys)
    assert code == 0 and "not the current directory" in " ".join(out.split())


# ---- item 7: bare `lionsim`, and readers that stop early -------------------------------------


def test_bare_lionsim_prints_help_and_exits_2(capsys):
    code, out, err = run_cli([], capsys)
    assert code == 2 and "Usage: lionsim" in err and "Commands" in err


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["strategies"], ["estimate", "--model", "gpt2-124m"]])
def test_a_reader_that_stops_early_is_exit_0(argv):
    done = subprocess.run(f"set -o pipefail; {sys.executable} -m lionsim {' '.join(argv)} | head -1", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr


# ---- item 12: estimate compares like with like ----------------------------------------------


def test_estimate_default_set_compares_like_with_like():
    runs = {r.strategy: r.transport for r in parse_runs(list(DEFAULT_STRATEGIES))}
    assert runs["adamw"] == runs["lion"] == "bf16-allreduce"  # was adamw@bf16 against lion@fp32
    frame = estimate(EstimateConfig(model="gpt2-124m"))
    adamw, lion = (frame[frame["strategy"] == s].iloc[0] for s in ("adamw", "lion"))
    assert adamw["wire_bytes"] == lion["wire_bytes"] and adamw["comm_s"] == lion["comm_s"]


# ---- item 14: a launch floor for device compute, no scientific notation in ms columns -------


def test_a_tiny_model_on_a_device_gets_a_launch_floor_and_plain_ms(capsys):
    frame = estimate(EstimateConfig(params=1000, tokens_per_worker=1, workers=2, network="nvlink4"))
    kernel_s = DEVICES.get("h100").kernel_s
    assert (frame["compute_s"] >= 3 * kernel_s).all()  # was 1.5e-11 s
    assert (frame["update_s"] >= kernel_s).all()
    code, out, _ = run_cli(["estimate", "--params", "1000", "--tokens-per-worker", "1", "-n", "2",
                            "--network", "nvlink4"], capsys)
    assert code == 0 and "e-0" not in out and "e+0" not in out


# ---- item 15: names in any case, the nearest on a typo, comma lists --------------------------


def test_names_take_any_case_and_comma_lists():
    runs = parse_runs(["AdamW,Lion@BF16-allreduce", "DLION-MAVO@A2A-1bit"], transport=None)
    assert [r.label for r in runs] == ["adamw@fp32-allreduce", "lion@bf16-allreduce", "dlion-mavo@a2a-1bit"]
    assert [r.label for r in parse_runs(["dlion-mavo"], transport="A2A-1BIT")] == ["dlion-mavo@a2a-1bit"]
    assert load_network("10GbE").name == "10gbe"
    assert STRATEGIES.canonical("OneBit-Adam") == "onebit-adam"
    workload = BenchConfig(workload="MLP", workers=2, steps=1, strategies=["adamw"])
    workload.validate()  # -w takes the name as given; the configuration spells it as listed
    assert workload.workload == "mlp"
    assert options._choice("--tie", ("zero", "alternate", "random"))("Zero") == "zero"
    assert options._lower("Dirichlet:0.5") == "dirichlet:0.5"
    frame = estimate(EstimateConfig(model="GPT2-124M", device="H100", strategies=["AdamW"]))
    assert frame["model"].iloc[0] == "gpt2-124m" and frame["device"].iloc[0] == "h100"


@pytest.mark.parametrize("args, message", [
    (["bench", "-s", "dlion-mavoo"], "did you mean 'dlion-mavo'?"),
    (["bench", "-s", "adamw@fp32-alreduce"], "did you mean 'fp32-allreduce'?"),
    (["bench", "--network", "10gbee"], "did you mean '10gbe'?"),
    (["bench", "-w", "mpl"], "did you mean 'mlp'?"),
    (["bench", "--tie", "zeroo"], "did you mean 'zero'?"),
    (["bench", "--backend", "glo"], "did you mean 'gloo'?"),
    (["bench", "--model-size", "smal"], "did you mean 'small'?"),
    (["estimate", "-m", "gpt2-125m"], "did you mean 'gpt2-124m'?"),
    (["estimate", "-m", "gpt2-124m", "--device", "h10"], "did you mean 'h100'?"),
    (["bench", "-s", "powersgd", "--opt", "powersgd.rnak=2"], "did you mean 'rank'?"),
    (["bench", "--format", "tabel"], "did you mean 'table'?"),
    (["estimate", "-m", "gpt2-124m", "--kernels", "tabel"], "did you mean 'table'?"),
    (["estimate", "-m", "gpt2-124m", "--optimizer", "fusd"], "did you mean 'fused'?"),
    (["estimate", "-m", "gpt2-124m", "--overlap", "aftr"], "did you mean 'after'?"),
    (["bench", "-s", "adamw,,lion"], "an empty name"),
    (["bench", "-s", "adamw,ADAMW"], "given twice"),
])
def test_a_typo_names_the_nearest_valid_name(args, message, capsys):
    one_line_exit_2(args, capsys, message)


def test_an_unknown_name_far_from_any_suggests_nothing():
    with pytest.raises(LionsimError) as info:
        STRATEGIES.get("zzzz")
    assert "did you mean" not in str(info.value) and "choose from: adamw" in str(info.value)


# ---- item 16: [intra] in a profile --------------------------------------------------------


def test_a_multi_worker_node_without_intra_says_what_to_add(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text("workers_per_node = 4\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n")
    with pytest.raises(LionsimError, match=r"needs an \[intra\] link table .*optional only in a flat profile"):
        load_network(str(path))
    flat = tmp_path / "flat.toml"
    flat.write_text("[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n")
    assert load_network(str(flat)).intra is None  # optional when flat
    docs = " ".join((REPO / "docs" / "backends.md").read_text().split())
    assert "`[intra]`, the link between workers of one node, is optional only in a flat profile" in docs


# ---- item 18: the mode a check runs in ----------------------------------------------------


def test_mode_is_strict_only_on_the_recording_platform():
    here = fingerprint()
    assert choose_mode("auto", here)[0] == STRICT
    mode, why = choose_mode("auto", {**here, "cpu": "another cpu"})
    assert mode == SPREAD and "cpu another cpu ->" in why
    assert choose_mode("auto", None)[0] == SPREAD
    assert choose_mode("strict", None)[0] == STRICT and choose_mode("spread", here)[0] == SPREAD


def test_the_committed_baseline_records_its_platform():
    baseline = load_baseline(REPO / "reports" / "baselines")
    assert baseline.fingerprint and set(baseline.fingerprint) == set(fingerprint())


# ---- item 17: .gitignore names only paths that exist ---------------------------------------


def test_gitignore_exceptions_name_existing_paths():
    for line in (REPO / ".gitignore").read_text().splitlines():
        if line.startswith("!"):
            assert (REPO / line[1:].rstrip("/")).exists(), line
