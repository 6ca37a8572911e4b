"""estimate's per-worker memory check: weights, gradients and optimizer state against the device's
memory, each need against the closed form P x (4 + 4 + 4 x the strategy's state rows), and the
line under the table that names the runs that do not fit."""

from __future__ import annotations

import pytest

from lionsim.estimate import EstimateConfig, estimate
from tests.helpers.cli import run_cli

STATE_ROWS = {"adamw": 2, "lion": 1, "sgdm": 1, "signsgd": 0, "dlion-mavo": 1, "ef-signsgd": 1, "dgc": 2,
              "diloco": 4}
"""Rows of P floats each keeps beyond weights and gradients, counted by hand: AdamW m and v; Lion's,
SGD momentum's and Distributed Lion's momentum; signSGD none; EF-signSGD its error buffer; DGC its
momentum and its residual; DiLoCo its worker's replica, the inner AdamW's m and v and the outer
Nesterov momentum."""


def test_each_runs_need_is_params_times_its_bytes_per_parameter():
    frame = estimate(EstimateConfig(model="llama-7b", strategies=list(STATE_ROWS)))
    params = int(frame["params"].iloc[0])
    for row in frame.itertuples(index=False):
        assert row.memory_bytes == params * (4 + 4 + 4 * STATE_ROWS[row.strategy]), row.strategy
        assert row.device_memory_bytes == 80 * 2**30 and row.memory_fits == (row.memory_bytes <= 80 * 2**30)
    assert 100e9 < params * 16 < 110e9  # AdamW fp32 on llama-7b: about 108 GB, over an 80 GiB H100


def test_llama_7b_lion_fits_an_h100_and_adamw_does_not():
    """An H100's "80 GB" is 80 GiB (85.9e9 B): Lion's P x 12 B (80.9e9) fits, AdamW's P x 16 B does not."""
    frame = estimate(EstimateConfig(model="llama-7b", strategies=["lion", "adamw"])).set_index("strategy")
    params = int(frame["params"].iloc[0])
    assert params * 12 <= 80 * 2**30 < params * 16
    assert frame.loc["lion", "memory_fits"] and not frame.loc["adamw", "memory_fits"]


def test_a_worker_of_several_devices_holds_their_memory():
    frame = estimate(EstimateConfig(model="llama-7b", strategies=["adamw"], replica_gpus=2))
    assert frame["device_memory_bytes"].iloc[0] == 160 * 2**30 and frame["memory_fits"].iloc[0]


def test_the_runs_that_do_not_fit_are_named_under_the_table_with_need_and_memory(capsys):
    code, out, err = run_cli(["estimate", "--model", "llama-7b", "-s", "adamw", "-s", "signsgd"], capsys)
    said = " ".join(out.split())
    params = int(estimate(EstimateConfig(model="llama-7b", strategies=["adamw"]))["params"].iloc[0])
    assert code == 0 and (f"Does not fit on one h100 (80 GiB): adamw@fp32-allreduce needs {params * 16 / 2**30:.4g} GiB "
                          "a worker for weights, gradients and optimizer state (float32), before activations") in said
    assert "signsgd@" not in said.split("Does not fit")[1].split("pick a larger device")[0]  # 8 bytes a parameter: 50.2 GiB fits
    code, out, err = run_cli(["estimate", "--model", "llama-7b", "-s", "adamw", "--format", "csv"], capsys)
    assert code == 0 and "note: does not fit on one h100 (80 GiB)" in err and "memory_fits" in out.splitlines()[0]


@pytest.mark.parametrize("argv", [["--model", "llama-7b", "--device", "b200"], ["--model", "gpt2-124m"]])
def test_where_every_run_fits_the_caption_gives_the_largest_need(capsys, argv):
    """A user choosing a GPU reads the need without --format csv: the largest of the runs' (DiLoCo's
    24 bytes a parameter over AdamW's 16) beside the worker's memory; csv's stderr says nothing."""
    code, out, _ = run_cli(["estimate", *argv, "-s", "adamw", "-s", "diloco"], capsys)
    said = " ".join(out.split())
    frame = estimate(EstimateConfig(model=argv[1], strategies=["diloco"], device=argv[3] if len(argv) > 2 else None))
    need, held = frame["memory_bytes"].iloc[0], frame["device_memory_bytes"].iloc[0]
    assert code == 0 and "does not fit" not in said.lower()
    assert (f"Fits on one {frame['device'].iloc[0]} ({held / 2**30:.4g} GiB): at most {need / 2**30:.4g} GiB a worker "
            "(diloco@fp32-allreduce) for weights") in said
    assert need == int(frame["params"].iloc[0]) * 24
    code, _, err = run_cli(["estimate", *argv, "-s", "adamw", "--format", "csv"], capsys)
    assert code == 0 and "fits" not in err
