"""The codec kernel table (lionsim.compute.kernel_table) and estimate's --kernels.

References: the shipped CSV read with the csv module, the datasheet figures, the published
figures' arithmetic, and part times worked out by hand from the declared ops and the rows."""

from __future__ import annotations

import csv

import pytest

from lionsim.compute import DEVICES
from lionsim.compute.kernel_table import COLUMNS, KERNELS, METHODS, default_path, default_table, read_table
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

P = 10**9


def _file_rows() -> dict[tuple[str, str], dict]:
    with open(default_path(), newline="", encoding="utf-8") as f:
        return {(r["device"], r["kernel"]): r for r in csv.DictReader(f)}


def _newest(device: str) -> str:
    """The date of `device`'s newest row: what an estimate names its table by."""
    return max(r["date"] for (d, _), r in _file_rows().items() if d == device)


def _gbps(device: str, kernel: str) -> float:
    return float(_file_rows()[device, kernel]["GBps"])


def test_lookup_returns_the_file_values():
    table = default_table()
    for (device, kernel), r in _file_rows().items():
        row = table.row(device, kernel)
        assert row.GBps == float(r["GBps"]) and row.bytes_per_param == float(r["bytes_per_param"])
        assert row.source == r["source"] and row.method == r["method"]
        assert row.seconds(1e9) == pytest.approx(1.0 / float(r["GBps"]))


def test_every_row_names_what_it_rests_on():
    rows = _file_rows()
    devices = {"cpu"} | {DEVICES.get(n).name for n in DEVICES.names()}
    assert {(d, k) for d in devices for k in KERNELS} <= set(rows)
    for r in rows.values():
        assert r["method"] in METHODS and r["source"].startswith(f"{r['method']}: ")
        assert r["date"][:2] == "20" and len(r["date"]) == 10 and r["machine"]
    assert {r["method"] for (d, _), r in rows.items() if d == "cpu"} == {"measured"}
    # a published row quotes its source, the GPU and the size measured
    published = [r for r in rows.values() if r["method"] == "published"]
    assert published and all(any(w in r["source"] for w in ("llama-2 7B", "2^26.5 elements", "GRACE's release"))
                             for r in published)


def test_a_framework_s_rows_are_its_device_s_but_the_kernels_it_was_timed_running():
    """v100-tf1.15: the V100's rows, but top-k at GRACE's TensorFlow 1.15 compressor cost: the rate at
    which the topk 0.01 runs' step difference (512 images over each run's img/s) is what lionsim's step
    rises by over its step without the sort (tests/published/test_grace_fit.py solves it again); a
    little below 4 bytes x ResNet-50's 25,557,032 gradients over that difference, as a sliver of the
    sort hides beside other tensors' exchanges."""
    from lionsim.published import grace

    rows = _file_rows()
    for kernel in KERNELS:
        if kernel not in ("topk", "orthogonalize"):
            assert rows["v100-tf1.15", kernel] == {**rows["v100", kernel], "device": "v100-tf1.15"}
    cost = {m.grace: m for m in grace.METHODS}["topk 0.01 (memory)"].cost_s()
    assert cost == pytest.approx(512 / 1457.3552 - 512 / 2427.4440, rel=1e-12)
    from lionsim.published.grace_fit import config, modes

    assert 0.95 < _gbps("v100-tf1.15", "topk") / (4 * 25_557_032 / cost / 1e9) < 1.0
    assert modes(config("dgc@grace-allgather")).increase_s == pytest.approx(cost, rel=1e-3)  # the row's pin
    assert rows["v100-tf1.15", "topk"]["method"] == "published"


def test_tf1_15_orthogonalize_prices_grace_s_powersgd_cost_for_the_bytes_lionsim_declares_for_it():
    """PowerSGD's QR runs on the host in TF 1.15: the row moves the orthogonalizations' declared bytes
    on resnet50-tf at rank 1, counted here from torch's rule by hand (a matrix [shape[0], rest]
    compressed where 2 (n + m) < n m) and the ops' 12 bytes a Q float and 20 a P float, at the rate
    at which lionsim's step rises by the powersgd rank-1 runs' step difference (test_grace_fit.py
    solves it): slower than those bytes over the difference, as lionsim runs the QRs beside other
    tensors' exchanges, which hide a third of them."""
    import math

    from lionsim.compute.models import MODELS
    from lionsim.published import grace

    p_floats = q_floats = 0
    for shape in MODELS.get("resnet50-tf").tensor_shapes:
        n = shape[0]
        m = math.prod(shape) // n
        if len(shape) > 1 and 2 * (n + m) < n * m:
            p_floats, q_floats = p_floats + n, q_floats + m
    assert (p_floats, q_floats) == (2_103, 3_774_760)
    cost = {m.grace: m for m in grace.METHODS}["powersgd rank 1 (memory)"].cost_s()
    assert cost == pytest.approx(512 / 1794.0928 - 512 / 2446.7928, rel=1e-12)
    from lionsim.published.grace_fit import config, modes

    declared = 12 * q_floats + 20 * p_floats
    row = _gbps("v100-tf1.15", "orthogonalize")
    assert 0.6 < row / (declared / cost / 1e9) < 0.8
    priced = modes(config("powersgd@lowrank-allreduce"))
    assert priced.increase_s == pytest.approx(cost, rel=1e-3)
    assert _file_rows()["v100-tf1.15", "orthogonalize"]["method"] == "published"
    # on a GPU the orthogonalization is lionsim's eager chain: the share of its stream the H200 measured
    assert _gbps("v100", "orthogonalize") == pytest.approx(
        _gbps("v100", "float-pass") * _gbps("h200", "orthogonalize") / 3840, rel=2e-3)


def test_the_published_rows_are_their_sources_arithmetic():
    """H100 fused AdamW: 14 bytes x 6.74e9 parameters in 49.935 ms (PyTorch PR #117872); the copy
    rates: the device-benchmarks README's GB/s as printed."""
    assert _gbps("h100", "fused-optimizer") == pytest.approx(14 * 6.74e9 / 49.935e-3 / 1e9, rel=1e-3)
    assert (_gbps("v100", "float-pass"), _gbps("a100-80gb", "cast"), _gbps("rtx4090", "float-pass")) == (766, 1490, 912)


@pytest.mark.parametrize("name", ["a100-40gb", "l4", "mi300x"])
def test_derived_rows_are_their_closed_forms(name):
    """No published figure: an eager op streams at bandwidth x efficiency, a fused optimizer at
    bandwidth x the H100's published share, and the kernels that are the same torch ops on every GPU
    (lionsim's packing chains, torch.topk, index_add_, Gram-Schmidt) at the stream x the share of its
    stream the measured H200 reached (its rows over 4.8 TB/s x 0.8)."""
    d = DEVICES.get(name)
    stream = d.memory_bandwidth_Bps * d.memory_efficiency / 1e9
    reach = (14 * 6.74e9 / 49.935e-3) / 3.35e12
    for kernel in ("float-pass", "cast"):
        assert _gbps(name, kernel) == pytest.approx(stream, rel=1e-3)
    assert _gbps(name, "fused-optimizer") == pytest.approx(d.memory_bandwidth_Bps * reach / 1e9, rel=1e-3)
    for kernel in ("pack-signs", "unpack-signs", "pack-codes", "unpack-codes", "scatter-add", "topk", "orthogonalize"):
        share = _gbps("h200", kernel) / (4.8e12 * 0.8 / 1e9)
        assert _gbps(name, kernel) == pytest.approx(stream * share, rel=2e-3)
    assert 0.03 < _gbps(name, "topk") / stream < 0.1  # the H200's torch.topk: well under the 5-read rule's 0.2


def test_deepspeed_s_one_bit_codec_is_priced_as_streams_not_lionsim_s_packing_chains():
    """DeepSpeed's compressed_allreduce packs with cupy (one streaming kernel) around elementwise ops:
    on the H200, whose lionsim unpacking chain runs at a third of its stream, 1-bit Adam's decode is
    its declared bytes at the measured float-pass rate, and shorter than on the H100 (a helper found
    it twice the H100's when priced with lionsim's chains)."""
    from lionsim.transports import TRANSPORTS

    from lionsim.transports import PayloadSpec

    ops = TRANSPORTS.get("compressed-allreduce")().wire_bytes(PayloadSpec(kind="onebit", numel=10**6), 16)
    assert {op.kernel for op in (*ops.pack_ops, *ops.unpack_ops)} == {"float-pass"}
    h100, h200 = (_one("onebit-adam", device=d, workers=16) for d in ("h100", "h200"))
    assert h200["decode_s"] < h100["decode_s"] and h200["encode_s"] < h100["encode_s"]


def test_the_measured_gpu_keeps_its_rows_when_the_table_is_made_again():
    """The H200's rows were timed on one (python -m lionsim.perf kernels --kernel-device cuda); making
    the GPU rows again from the shipped table's measured rows returns them unchanged, and the other
    GPUs' derived rows as shipped."""
    from lionsim.perf.kernels import gpu_rows

    shipped = {(r.device, r.kernel): r for r in default_table().rows}
    measured = {key: row for key, row in shipped.items() if row.method == "measured" and key[0] != "cpu"}
    assert {kernel for device, kernel in measured if device == "h200"} == set(KERNELS)
    assert all("H200" in shipped["h200", kernel].machine for kernel in KERNELS)
    rows, _ = gpu_rows(measured)
    assert all(shipped[r.device, r.kernel].GBps == pytest.approx(r.GBps, rel=1e-3) for r in rows)


def _one(strategy: str, kernels: str = "table", params: int = P, device: str = "h100", workers: int = 8,
         optimizer: str = "fused") -> dict:
    cfg = EstimateConfig(params=params, tokens_per_worker=1000, workers=workers, network="10gbe", device=device,
                         strategies=[strategy], overlap="none", kernels=kernels, optimizer=optimizer)
    return estimate(cfg).to_dict("records")[0]


def test_ideal_is_one_fused_pass_at_the_datasheet_bandwidth():
    # adamw over bf16: the pack reads the fp32 gradient and writes bf16 (6 B), nothing unpacked
    row = _one("adamw@bf16-allreduce", "ideal")
    h100 = DEVICES.get("h100")
    assert row["decode_s"] == 0.0
    assert row["kernels"] == "ideal fused passes" and row["optimizer"] == "fused"
    encode_ideal = _one("adamw@fp32-allreduce", "ideal")["encode_s"]
    assert row["encode_s"] - encode_ideal == pytest.approx(6 * P / (h100.memory_bandwidth_Bps * 0.8))


def test_table_parts_are_each_kernels_bytes_over_its_rate():
    """dlion-mavo over a2a-1bit at N = 8, fused: the rule is one fused kernel (reads g, m, writes m
    and the int8 vote: 13 B) at the fused-optimizer rate; the packing is lionsim.packing's GPU ops
    (7.125 B), then phase 2 on my eighth (the rule's codes: 44 B; 2-bit fields from int64: 88.25 B);
    the decode counts N bits per parameter (5.125 + 1 + 20/8 B), the tie-rule coordinates (24/8 B)
    and unpacks every chunk's 2-bit codes into float32 (84.25 + 28 B); the update reads p and the
    float32 result, writes p (12 B), fused."""
    rate = {kernel: _gbps("h100", kernel) * 1e9 for kernel in KERNELS}
    stream, fused = rate["float-pass"], rate["fused-optimizer"]
    row = _one("dlion-mavo@a2a-1bit")
    assert row["encode_s"] == pytest.approx(13 * P / fused + 7.125 * P / rate["pack-signs"]
                                            + (44 + 88.25) / 8 * P / rate["pack-codes"])
    assert row["decode_s"] == pytest.approx((5.125 + 1 + 20 / 8) * P / rate["unpack-signs"] + 24 / 8 * P / stream
                                            + (84.25 + 28) * P / rate["unpack-codes"])
    assert row["update_s"] == pytest.approx(12 * P / fused)
    assert row["kernels"] == f"published+derived table (h100, {_newest('h100')})"


def test_table_floor_is_the_kernels_launched_times_the_kernel_floor():
    """1000 parameters in one tensor: the fused rule is one launch; the packing launches 4 + 4 + 8
    kernels (the pad of 1000 votes to 64 is one more)."""
    row = _one("dlion-mavo@a2a-1bit", params=1000)
    assert row["encode_s"] == pytest.approx((1 + 1 + 4 + 4 + 8) * 10e-6)
    assert _one("dlion-mavo@a2a-1bit", "ideal", params=1000)["encode_s"] == pytest.approx(10e-6)


def test_another_devices_rows_price_the_codecs():
    rows = _file_rows()
    row = _one("adamw@bf16-allreduce", "table:cpu")
    assert row["device"] == "h100" and row["kernels"] == f"measured table (cpu, {_newest('cpu')})"
    assert row["compute_s"] == _one("adamw@bf16-allreduce")["compute_s"]  # compute stays the device's
    # the bf16 sum widened to float32 (6 B, a cast), then / N (8 B, a float pass)
    assert row["decode_s"] == pytest.approx(6 * P / (float(rows["cpu", "cast"]["GBps"]) * 1e9)
                                            + 8 * P / (float(rows["cpu", "float-pass"]["GBps"]) * 1e9))


@pytest.mark.parametrize(("given", "named"), [
    ("fused", "'fused'"), ("table:", "'table:'"),
    # the option and the table's devices, not the installed file's path
    ("table:tpu", "^bad --kernels table:tpu; accepted: table, ideal, or table:DEVICE with DEVICE one of: cpu, t4, ")])
def test_bad_kernels_is_one_line(given, named):
    with pytest.raises(LionsimError, match=named):
        _one("dlion-mavo@a2a-1bit", given)


HEADER = ",".join(COLUMNS) + "\n"


@pytest.mark.parametrize(("text", "named"), [
    ("device,kernel\ncpu,cast\n", "columns"),
    (HEADER + "cpu,zip,1,1,measured,s,d,m\n", "'zip'"),
    (HEADER + "cpu,cast,6,-1,measured,s,d,m\n", "'-1'"),
    (HEADER + "cpu,cast,6,1,guessed,s,d,m\n", "'guessed'"),
    (HEADER + "cpu,cast,6,1,measured,,d,m\n", "empty source on line 2"),
    (HEADER + "cpu,cast,6,1,measured,s\n", "line 2 .* has 6 fields"),
    (HEADER + "cpu,cast,6,1,measured,s,d,m,extra\n", "line 2 .* has 9 fields"),
    (HEADER + "cpu,cast,6,1,measured,s,d,m\ncpu,cast,6,1,measured,s,d,m\n", "line 3 .* appears twice"),
])
def test_a_bad_table_file_is_one_line(tmp_path, text, named):
    path = tmp_path / "kernels.csv"
    path.write_text(text)
    with pytest.raises(LionsimError, match=named) as error:
        read_table(path)
    assert "\n" not in str(error.value)


def test_perf_kernels_writes_a_table_estimate_can_read(tmp_path, capsys):
    from lionsim.perf.__main__ import main

    path = tmp_path / "kernels.csv"
    main(["kernels", "--numel", "10000", "--repeats", "1", "--csv", str(tmp_path / "perf.csv"),
          "--kernel-table", str(path)])
    table = read_table(path)
    assert {r.method for r in table.rows if r.device == "cpu"} == {"measured"}
    assert set(table.for_device("cpu")) == set(KERNELS) == set(table.for_device("h100"))
    assert table.row("h100", "fused-optimizer").method == "published"
    assert table.row("h200", "topk") == default_table().row("h200", "topk")  # a GPU measured once stays measured
    assert "wrote the kernel table" in capsys.readouterr().out


def test_perf_kernels_refuses_a_table_path_before_measuring(tmp_path, capsys):
    from lionsim.perf.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(["kernels", "--csv", str(tmp_path / "perf.csv"), "--kernel-table", str(tmp_path / "no" / "kernels.csv")])
    assert stop.value.code == 2 and "bad --kernel-table" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_perf_kernels_on_cuda_without_a_gpu_is_one_line_before_anything_runs(tmp_path, capsys, monkeypatch):
    import torch

    from lionsim.perf.__main__ import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:
        main(["imports", "kernels", "--kernel-device", "cuda", "--csv", str(tmp_path / "perf.csv")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "bad --kernel-device cuda" in err and "accepted: cpu" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("reported", "gib", "preset"), [
    ("NVIDIA H200", 139.8, "h200"), ("NVIDIA A100-SXM4-80GB", 79.2, "a100-80gb"),
    ("NVIDIA A100-SXM4-40GB", 39.4, "a100-40gb"), ("NVIDIA GeForce RTX 4090", 23.6, "rtx4090"),
    ("Tesla V100-SXM2-32GB", 31.7, "v100"), ("NVIDIA H100 80GB HBM3", 79.1, "h100"),
    ("NVIDIA L4", 22.0, "l4"), ("NVIDIA L40S", 44.4, "l40s"), ("NVIDIA GeForce GTX 1080", 8.0, None)])
def test_a_gpu_is_the_preset_its_reported_name_and_memory_say(reported, gib, preset):
    from lionsim.compute.which_gpu import preset_for

    assert preset_for(reported, gib * 2**30) == preset
