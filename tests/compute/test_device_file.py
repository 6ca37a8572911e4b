"""A device of one's own: a TOML file of datasheet figures prices as a preset with those figures does."""

from __future__ import annotations

import json

import pytest
from lionsim.compute import DEVICES
from lionsim.compute.device_file import get_device
from lionsim.compute.kernel_table import KERNELS, default_table
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from tests.helpers.cli import one_line_exit_2, run_cli

L40S_FILE = """name = "my-l40s"
source = "typed from the NVIDIA L40S datasheet"
memory_TBps = 0.864
memory_GB = 48
[tflops]
bfloat16 = 362.0
float16 = 362.0
float8_e4m3fn = 733.0
tf32 = 183.0
float32 = 91.6
"""
"""The l40s preset's figures: every row of its kernel table is derived, so a file with its figures
must get the same rows by the same rule."""


def _write(tmp_path, text: str, name: str = "gpu.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _priced(device: str, **kw) -> dict:
    cfg = EstimateConfig(params=10**8, tokens_per_worker=1000, workers=8, network="10gbe", device=device,
                         strategies=["adamw@bf16-allreduce", "dlion-mavo@a2a-1bit", "dgc"],
                         overlap="none", **kw)
    return {r["strategy"] + "@" + r["transport"]: r for r in estimate(cfg).to_dict("records")}


def test_a_file_with_a_preset_s_figures_is_that_preset_under_its_own_name(tmp_path):
    own, preset = get_device(str(_write(tmp_path, L40S_FILE))), DEVICES.get("l40s")
    assert own.name == "my-l40s" and "my-l40s" not in DEVICES  # carried, never registered
    for field in ("peak_flops", "memory_bandwidth_Bps", "memory_bytes", "mfu", "memory_efficiency", "kernel_s",
                  "dtype_tflops", "intra_link"):
        assert getattr(own, field) == getattr(preset, field), field


def test_its_kernel_rows_are_derived_as_the_shipped_table_derives_an_unmeasured_gpu_s(tmp_path):
    """The l40s rows shipped in kernels.csv were written by `perf kernels`; estimate derives a file's
    rows on the fly by the same rule, so they agree row by row, and so do the priced parts."""
    path = str(_write(tmp_path, L40S_FILE))
    from lionsim.compute.derived_kernels import with_device

    rows = with_device(default_table(), get_device(path)).for_device("my-l40s")
    shipped = default_table().for_device("l40s")
    assert set(rows) == set(KERNELS)
    for kernel in KERNELS:
        assert rows[kernel].GBps == pytest.approx(shipped[kernel].GBps, rel=1e-3), kernel
        assert rows[kernel].method == "derived"
    own, preset = _priced(path), _priced("l40s")
    for key in own:
        for part in ("compute_s", "encode_s", "decode_s", "update_s", "comm_s", "step_s", "memory_bytes",
                         "device_memory_bytes"):
            assert own[key][part] == pytest.approx(preset[key][part], rel=1e-3), (key, part)
        assert own[key]["device"] == "my-l40s"
        assert own[key]["kernels"].startswith("derived table (my-l40s, ")


def test_the_optional_keys_act(tmp_path):
    text = L40S_FILE.replace('memory_GB = 48\n', 'memory_GB = 48\nmfu = 0.2\nmemory_efficiency = 0.5\n'
                                                  'kernel_us = 20\nnvlink_GBps = 100\n')
    device = get_device(str(_write(tmp_path, text)))
    assert (device.mfu, device.memory_efficiency, device.kernel_s) == (0.2, 0.5, 20e-6)
    assert device.intra_link.bandwidth_Bps == pytest.approx(100e9 * 380 / 450)  # NVLink's achieved share
    half = _priced(str(_write(tmp_path, text.replace("mfu = 0.2", "mfu = 0.4"), "b.toml")))
    quarter = _priced(str(tmp_path / "gpu.toml"))
    key = "adamw@bf16-allreduce"
    assert quarter[key]["compute_s"] == pytest.approx(2 * half[key]["compute_s"])


def test_without_a_name_the_file_s_stem_names_it(tmp_path):
    text = L40S_FILE.replace('name = "my-l40s"\n', "")
    assert get_device(str(_write(tmp_path, text, "RTX-A6000.toml"))).name == "rtx-a6000"


@pytest.mark.parametrize(("text", "says"), [
    (L40S_FILE.replace('"my-l40s"', '"H100"'), "name 'h100' is a preset's"),
    (L40S_FILE.replace("bfloat16 = 362.0\nfloat16 = 362.0\n", ""), "[tflops] needs bfloat16 or float16"),
    (L40S_FILE.replace("memory_TBps = 0.864", "memory_TBps = -1"), "'memory_TBps' = -1 is out of range"),
    (L40S_FILE.replace("memory_TBps", "memory_tbps"), "did you mean 'memory_TBps'"),
    (L40S_FILE.replace("tf32", "fp8"), "unknown key 'tflops.fp8'"),
    (L40S_FILE.replace('source = "typed from the NVIDIA L40S datasheet"\n', ""), "missing key 'source'"),
    (L40S_FILE.split("[tflops]")[0], "missing table [tflops]"),
    ("name = [1\n", "not valid TOML"),
    ("", "it holds no keys"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path, text, says):
    path = _write(tmp_path, text)
    with pytest.raises(LionsimError) as e:
        get_device(str(path))
    assert says in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_estimate_and_bench_refuse_a_bad_file_in_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "none.toml"
    for option, args in (("--device", ["estimate", "--device", missing, "--params", "1e8", "--tokens-per-worker",
                                       "1000"]),
                         ("--compute", ["bench", "--compute", missing, "--out", tmp_path / "run"])):
        err = one_line_exit_2(args, capsys, f"device file not found: {missing}")
        assert err.startswith(f"error: bad {option}: "), err  # the option that named it, as --network's
    assert not (tmp_path / "run").exists()
    one_line_exit_2(["estimate", "--device", "a6000", "--params", "1e8", "--tokens-per-worker", "1000"], capsys,
                    "or a device file FILE.toml")


def test_a_bench_records_the_file_and_its_notes_name_the_device(tmp_path, monkeypatch, capsys):
    """bench --compute FILE (a relative path) records the absolute path, as a plug-in's, so the run's
    plan is made again from run.json elsewhere; its notes name the device, not the file."""
    _write(tmp_path, L40S_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["bench", "--compute", "gpu.toml", "--steps", "3", "-s", "lion", "--workers", "2",
                              "--out", "run"], capsys)
    assert code == 0, err
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert config["compute"] == str(tmp_path / "gpu.toml")
    assert "comp on my-l40s" in " ".join(out.split())
    from lionsim.config.bench import BenchConfig
    from lionsim.config.planning import plan
    from lionsim.plan import BenchPlan

    made = plan(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=3, strategies=["lion"],
                            compute="gpu.toml"))
    monkeypatch.chdir(tmp_path / "run")  # a rank, or a resume, rebuilds the plan from its record elsewhere
    rebuilt = BenchPlan.from_record(made.record())
    assert rebuilt.compute.device == made.compute.device and rebuilt.compute.device.name == "my-l40s"


def test_a_profile_names_a_device_file_beside_it(tmp_path, capsys):
    """A profile's `device` may be a device file, a path from the profile's folder: estimate runs on
    it where --device is not given (as on a preset the profile names); a missing one is refused in
    one line naming the profile."""
    (tmp_path / "gpus").mkdir()
    _write(tmp_path / "gpus", L40S_FILE)
    profile = _write(tmp_path, '''device = "gpus/gpu.toml"\nworkers_per_node = 2\n[inter]\nalpha_us = 50\n'''
                               '''bandwidth_GBps = 1.17\n[intra]\nalpha_us = 2\nbandwidth_GBps = 50\n''', "cluster.toml")
    cfg = dict(params=10**8, tokens_per_worker=1000, workers=4, network=str(profile), strategies=["adamw"])
    row = estimate(EstimateConfig(**cfg)).to_dict("records")[0]
    assert row["device"] == "my-l40s"
    assert row["compute_s"] == estimate(EstimateConfig(**cfg, device="l40s")).to_dict("records")[0]["compute_s"]
    profile.write_text(profile.read_text().replace("gpus/gpu.toml", "gpus/none.toml"))
    one_line_exit_2(["estimate", "--network", profile, "--params", "1e8", "--tokens-per-worker", "1000"], capsys,
                    f"bad --network {profile}: its device file: device file not found: {tmp_path / 'gpus' / 'none.toml'}")


def test_a_number_past_python_s_digit_limit_is_one_line(tmp_path):
    """An int of 5,000 digits: tomllib raises a bare ValueError (no decode error), refused as a
    profile's is (lionsim.text_formats.read_parsed)."""
    path = _write(tmp_path, L40S_FILE.replace("memory_GB = 48", "memory_GB = 1" + "0" * 5000))
    with pytest.raises(LionsimError, match=r"digits is out of range; accepted: a TOML file with source"):
        get_device(str(path))
