"""The codec kernel table (lionsim.compute.kernel_table) and estimate's --kernels.

References: the shipped CSV read with the csv module, the datasheet figures, and pass times
worked out by hand from the table's throughputs."""

from __future__ import annotations

import csv

import pytest

from lionsim.compute import DEVICES
from lionsim.compute.kernel_table import KERNELS, default_path, default_table, read_table
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

P = 10**9


def _file_rows() -> dict[tuple[str, str], dict]:
    with open(default_path(), newline="", encoding="utf-8") as f:
        return {(r["device"], r["kernel"]): r for r in csv.DictReader(f)}


def test_lookup_returns_the_file_values():
    rows = _file_rows()
    table = default_table()
    for (device, kernel), r in rows.items():
        row = table.row(device, kernel)
        assert row.GBps == float(r["GBps"]) and row.launches == int(r["launches"])
        assert row.bytes_per_param == float(r["bytes_per_param"]) and row.source == r["source"]
        assert row.seconds(1e9) == pytest.approx(1.0 / float(r["GBps"]))


def test_every_device_has_every_kernel_with_its_source_and_date():
    rows = _file_rows()
    devices = {"cpu"} | {DEVICES.get(n).name for n in DEVICES.names()}
    assert {(d, k) for d in devices for k in KERNELS} <= set(rows)
    assert all(r["source"] and r["date"] and r["machine"] for r in rows.values())
    assert {r["method"] for (d, _), r in rows.items() if d == "cpu"} == {"measured"}


def test_a_derived_gpu_row_is_below_the_ideal_fused_pass():
    """Derived rows: datasheet bandwidth x efficiency x ideal / eager bytes, so never above the ideal."""
    for name in ("h100", "a100-40gb"):
        device = DEVICES.get(name)
        for kernel in KERNELS:
            row = default_table().row(name, kernel)
            assert 0 < row.GBps * 1e9 <= device.memory_bandwidth_Bps * device.memory_efficiency * (1 + 1e-9)


def _one(strategy: str, kernels: str, params: int = P, device: str = "h100") -> dict:
    cfg = EstimateConfig(params=params, tokens_per_worker=1000, workers=8, network="10gbe", device=device,
                         strategies=[strategy], overlap="none", kernels=kernels)
    return estimate(cfg).to_dict("records")[0]


def test_ideal_is_one_fused_pass_at_the_datasheet_bandwidth():
    # adamw over bf16: the pack reads the fp32 gradient and writes bf16 (6 B), nothing unpacked
    row = _one("adamw@bf16-allreduce", "ideal")
    h100 = DEVICES.get("h100")
    assert row["decode_s"] == 0.0
    assert row["kernels"] == "ideal fused passes"
    encode_ideal = _one("adamw@fp32-allreduce", "ideal")["encode_s"]
    assert row["encode_s"] - encode_ideal == pytest.approx(6 * P / (h100.memory_bandwidth_Bps * 0.8))


def test_table_encode_is_bytes_over_each_kernels_throughput():
    """dlion-mavo over a2a-1bit at N = 8: the pack moves 1 + 1/8 + (1 + 2/8) / 8 bytes per parameter
    (int8 votes -> bits; the chunk's int8 sums -> 2-bit codes of -1, 0, +1); the rest of encode is
    the rule."""
    rows = _file_rows()
    float_gbps = float(rows["h100", "float-pass"]["GBps"])
    pack_gbps = float(rows["h100", "pack-signs"]["GBps"])
    unpack_gbps = float(rows["h100", "unpack-signs"]["GBps"])
    ideal = _one("dlion-mavo@a2a-1bit", "ideal")
    table = _one("dlion-mavo@a2a-1bit", "table")
    h100 = DEVICES.get("h100")
    reach = h100.memory_bandwidth_Bps * 0.8
    encode_bytes = ideal["encode_s"] * reach / P  # the fused pass's bytes per parameter
    pack = 1 + 1 / 8 + (1 + 2 / 8) / 8
    assert table["encode_s"] == pytest.approx((encode_bytes - pack) * P / (float_gbps * 1e9)
                                              + pack * P / (pack_gbps * 1e9))
    unpack = 1 / 8 + 1 / 8 + 2 / 8 + 1  # N's bits of my chunk, its sums, every chunk's codes, int8 out
    assert table["decode_s"] == pytest.approx(unpack * P / (unpack_gbps * 1e9))
    assert table["kernels"] == f"derived table (h100, {rows['h100', 'float-pass']['date']})"


def test_table_floor_is_the_launches_times_the_kernel_floor():
    rows = _file_rows()
    launches = int(rows["h100", "float-pass"]["launches"]) + int(rows["h100", "pack-signs"]["launches"])
    assert _one("dlion-mavo@a2a-1bit", "table", params=1000)["encode_s"] == pytest.approx(launches * 10e-6)
    assert _one("dlion-mavo@a2a-1bit", "ideal", params=1000)["encode_s"] == pytest.approx(10e-6)


def test_another_devices_rows_price_the_codecs():
    rows = _file_rows()
    row = _one("dlion-mavo@a2a-1bit", "table:cpu")
    assert row["device"] == "h100" and row["kernels"] == f"measured table (cpu, {rows['cpu', 'float-pass']['date']})"
    assert row["compute_s"] == _one("dlion-mavo@a2a-1bit", "table")["compute_s"]  # compute stays the device's
    assert row["decode_s"] == pytest.approx((4 / 8 + 1) * P / (float(rows["cpu", "unpack-signs"]["GBps"]) * 1e9))


@pytest.mark.parametrize(("given", "named"), [("fused", "'fused'"), ("table:tpu", "'tpu'"), ("table:", "'table:'")])
def test_bad_kernels_is_one_line(given, named):
    with pytest.raises(LionsimError, match=named):
        _one("dlion-mavo@a2a-1bit", given)


@pytest.mark.parametrize(("text", "named"), [
    ("device,kernel\ncpu,cast\n", "columns"),
    ("device,kernel,bytes_per_param,GBps,launches,method,source,date,machine\ncpu,zip,1,1,1,measured,s,d,m\n", "'zip'"),
    ("device,kernel,bytes_per_param,GBps,launches,method,source,date,machine\ncpu,cast,6,-1,1,measured,s,d,m\n", "'-1'"),
    ("device,kernel,bytes_per_param,GBps,launches,method,source,date,machine\ncpu,cast,6,1,1,guessed,s,d,m\n", "'guessed'"),
])
def test_a_bad_table_file_is_one_line(tmp_path, text, named):
    path = tmp_path / "kernels.csv"
    path.write_text(text)
    with pytest.raises(LionsimError, match=named):
        read_table(path)


def test_the_eager_byte_count_of_a_cast_is_its_closed_form():
    """float32 -> bfloat16: one op reading 4 and writing 2 bytes per element."""
    from lionsim.perf.kernels import CASES, eager_cost

    cast = next(c for c in CASES if c.kernel == "cast")
    assert eager_cost(cast, 4096) == (6.0, 1)


def test_perf_kernels_writes_a_table_estimate_can_read(tmp_path, capsys):
    from lionsim.perf.__main__ import main

    path = tmp_path / "kernels.csv"
    main(["kernels", "--numel", "10000", "--repeats", "1", "--csv", str(tmp_path / "perf.csv"),
          "--kernel-table", str(path)])
    table = read_table(path)
    assert {r.method for r in table.rows if r.device == "cpu"} == {"measured"}
    assert set(table.for_device("cpu")) == set(KERNELS) == set(table.for_device("h100"))
    assert "wrote the kernel table" in capsys.readouterr().out


def test_perf_kernels_refuses_a_table_path_before_measuring(tmp_path, capsys):
    from lionsim.perf.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(["kernels", "--csv", str(tmp_path / "perf.csv"), "--kernel-table", str(tmp_path / "no" / "kernels.csv")])
    assert stop.value.code == 2 and "bad --kernel-table" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
