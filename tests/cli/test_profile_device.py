"""bench on a network whose profile states a device: its compute stays bench's default (so a sweep
over networks compares the networks alone) and it says so before training, with the --compute that
models the profile's GPUs (a new user describing a 4090 cluster once read bench's "comp on h100"
beside estimate's rtx4090 with no word)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

PROFILE = Path(__file__).parents[2] / "examples" / "clusters" / "g4dn-8xl-tcp.toml"  # device = "t4"
BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "-s", "adamw",
         "--network", str(PROFILE)]
LINE = ("lionsim: compute is modelled on h100, bench's default: the network's profile states t4, which estimate "
        "takes and bench does not; --compute t4 models it here")


def test_the_profiles_device_is_named_where_bench_models_another(tmp_path, capsys):
    code, out, err = run_cli([*BENCH, "--out", tmp_path / "a"], capsys)
    assert code == 0, err
    assert LINE in " ".join(err.split()) and "comp on h100" in " ".join(out.split())


@pytest.mark.parametrize("compute", ["t4", "a100"])
def test_a_given_compute_is_the_users_choice_and_says_nothing(tmp_path, capsys, compute):
    code, out, err = run_cli([*BENCH, "--compute", compute, "--out", tmp_path / compute], capsys)
    assert code == 0, err
    assert "the network's profile states" not in err and f"comp on {compute}" in " ".join(out.split())


def test_a_preset_states_no_profile_device_and_says_nothing(tmp_path, capsys):
    code, _, err = run_cli(["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "-s", "adamw",
                            "--network", "1gbe", "--out", tmp_path / "p"], capsys)
    assert code == 0 and "the network's profile states" not in err
