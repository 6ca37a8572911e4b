"""The accelerator presets against their datasheets, and the optimizer step they price."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.compute import DEVICES
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

# Typed from the datasheets (dense, no sparsity): (training-dtype TFLOP/s, memory TB/s, GB).
DATASHEETS = {
    "v100": (125.0, 0.9, 32), "a10g": (70.0, 0.6, 24), "l4": (121.0, 0.3, 24), "l40s": (362.0, 0.864, 48),
    "rtx4090": (165.2, 1.008, 24), "h200": (989.0, 4.8, 141), "b200": (2250.0, 8.0, 180),
    "mi300x": (1307.4, 5.3, 192),
}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_new_devices_carry_their_datasheet(name):
    device = DEVICES.get(name)
    tflops, tbps, gb = DATASHEETS[name]
    assert device.peak_flops == pytest.approx(tflops * 1e12)
    assert device.memory_bandwidth_Bps == pytest.approx(tbps * 1e12)
    assert device.memory_bytes == gb * 2**30  # GPU memory is binary: a datasheet's "80 GB" is 80 GiB
    assert device.source and device.kernel_s > 0
    dtype = "float16" if name == "v100" else "bfloat16"  # V100 has no bf16 tensor cores
    assert device.flops_for(dtype) == device.peak_flops


def test_a_missing_dtype_names_those_the_device_has():
    with pytest.raises(LionsimError, match="device 'v100' has no bfloat16 tensor figure; accepted: float16, float32"):
        DEVICES.get("v100").flops_for("bfloat16")


def test_devices_listing_and_estimate_help_name_every_device():
    runner = CliRunner()
    listed = runner.invoke(app, ["devices", "--format", "csv"])
    assert listed.exit_code == 0, listed.output
    frame = pd.read_csv(pd.io.common.StringIO(listed.output))
    assert set(DATASHEETS) <= set(frame["device"]) and frame["source"].str.len().min() > 10
    help_text = " ".join(runner.invoke(app, ["estimate", "--help"], env={"COLUMNS": "200"}).output.split())
    for name in DATASHEETS:
        assert name in help_text


def test_the_devices_table_names_each_source_and_csv_gives_it_whole():
    """The table names each datasheet (its figures and caveats are a paragraph: a listing of 119
    lines at 80 columns); --format csv keeps every source whole."""
    runner = CliRunner()
    table = runner.invoke(app, ["devices"], env={"COLUMNS": "80"}).output
    assert "datasheet" in table and "900 GB/s HBM2" in DEVICES.get("v100").source
    assert "HBM2" not in table and "float16" not in table and "fp16=125" in table
    assert len(table.splitlines()) < 2 * 4 * len(DATASHEETS)  # about four lines a device, not ten


def test_the_optimizer_step_is_priced_as_a_memory_pass():
    # AdamW on 3B parameters: the update reads p, m, v (fp32) and the bf16 aggregate, writes p, m, v:
    # 6 x 4 + 2 = 26 bytes per parameter at 0.8 of the H100's 3.35 TB/s: about 29 ms as one fused pass
    # (--kernels ideal; the default kernel table's eager kernels: tests/compute/test_kernel_table.py).
    row = estimate(EstimateConfig(params=3_000_000_000, tokens_per_worker=2048, workers=8, network="10gbe",
                                  strategies=["adamw@bf16-allreduce"], kernels="ideal")).iloc[0]
    assert row["update_s"] == pytest.approx(3e9 * 26 / (0.8 * 3.35e12), rel=1e-9)


def test_an_unknown_device_lists_every_name_sorted_with_an_alias_beside_its_target():
    import pytest

    from lionsim.compute.device_file import get_device
    from lionsim.compute.devices import DEVICES
    from lionsim.errors import LionsimError

    with pytest.raises(LionsimError) as e:
        get_device("tpu")
    listed = str(e.value).split("choose from: ", 1)[1].split(", or a device file")[0].split(", ")
    names = [item.split(" (")[0] for item in listed]
    assert names == sorted(DEVICES.names()) and "a100 (a100-40gb)" in listed


def test_devices_csv_gives_a_numeric_column_a_dtype_and_the_table_its_short_form():
    """--format csv wrote `float16 65, float32 8.1` in one text column where the table writes
    `fp16=65, fp32=8.1`: a CSV is for machines, so each dtype is a numeric column (fp16_TFLOPs),
    empty where the datasheet states none; the table keeps its short form."""
    runner = CliRunner()
    listed = runner.invoke(app, ["devices", "--format", "csv"])
    assert listed.exit_code == 0, listed.output
    frame = pd.read_csv(pd.io.common.StringIO(listed.output)).set_index("device")
    assert "dtype_TFLOPs" not in frame.columns and "float16" not in listed.output
    short = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8", "float32": "fp32", "tf32": "tf32"}
    for name, device in DEVICES.items():
        if name != device.name:
            continue
        stated = dict(device.dtype_tflops)
        for dtype, column in short.items():
            value = frame.loc[name, f"{column}_TFLOPs"]
            assert (value == stated[dtype]) if dtype in stated else pd.isna(value), (name, dtype, value)
    t4 = DEVICES.get("t4")
    table = runner.invoke(app, ["devices"], env={"COLUMNS": "80"}).output
    # fp16=65, fp32=8.1: each pair whole, the list broken only between pairs where the column is narrow
    assert all(f"{short[k]}={v:g}" in table.split() or f"{short[k]}={v:g}," in table.split() for k, v in t4.dtype_tflops)
