"""`lionsim.estimate`: the per-step breakdown against hand-computed values, and its input checks."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

from lionsim.compute import DEVICES, MODELS
from lionsim.errors import LionsimError
from lionsim.estimate import DEFAULT_STRATEGIES, ESTIMATE_COLUMNS, EstimateConfig, estimate, resolve
from lionsim.estimate.probe import probe
from lionsim.network import load_network
from lionsim.network.presets import NVLINK4
from lionsim.runs import parse_runs
from tests.helpers.cli import run_cli

A100_FLOPS = 312e12 * 0.4  # peak x default mfu
A100_BYTES = 1.555e12 * 0.8  # HBM x memory efficiency


@pytest.fixture
def gbps_link(tmp_path):
    """A flat network with no latency at 1 GB/s: a ring all-reduce of n bytes among 8 takes 1.75 n ns."""
    path = tmp_path / "one.toml"
    path.write_text('traits = "ideal"\n[inter]\nalpha_us = 0.0\nbandwidth_GBps = 1.0\n')  # the formulas alone
    return str(path)


def test_breakdown_by_hand(gbps_link):
    cfg = EstimateConfig(params=10**9, tokens_per_worker=1000, workers=8, network=gbps_link, device="a100",
                         strategies=["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"], overlap="none",
                         kernels="ideal")  # the fused-pass figures by hand (test_kernel_table: the table's)
    adamw, dlion = estimate(cfg).to_dict("records")
    compute = 6e12 / A100_FLOPS  # 6 N T
    assert adamw["compute_s"] == pytest.approx(compute) == dlion["compute_s"]
    # AdamW: 4e9 fp32 bytes, ring 2(N-1)/N n = 7e9 bytes at 1 GB/s; update 28 B/param
    assert adamw["comm_s"] == pytest.approx(7.0) == adamw["comm_exposed_s"]
    assert (adamw["encode_s"], adamw["decode_s"]) == (0.0, 0.0)
    assert adamw["update_s"] == pytest.approx(28e9 / A100_BYTES)
    assert adamw["step_s"] == pytest.approx(compute + 7.0 + 28e9 / A100_BYTES)
    assert adamw["wire_bytes"] == pytest.approx(7e9)
    # D-Lion: 1e9 int8 bytes -> 1.75 s; encode 13 B/param, update 9 B/param
    assert dlion["comm_s"] == pytest.approx(1.75)
    assert dlion["encode_s"] == pytest.approx(13e9 / A100_BYTES)
    assert dlion["update_s"] == pytest.approx(9e9 / A100_BYTES)
    assert dlion["step_s"] == pytest.approx(compute + 1.75 + 22e9 / A100_BYTES)
    assert dlion["speedup"] == pytest.approx(adamw["step_s"] / dlion["step_s"])
    assert adamw["speedup"] == 1.0 and dlion["baseline"] == "adamw@fp32-allreduce"


def test_ddp_buckets_by_hand(gbps_link):
    # 25 MB buckets of fp32 gradients: 6.25e6 params, 160 of them, 43.75 ms each. Backward
    # (4e12 FLOPs) hides all but the last bucket's share of the window:
    # exposed = 160 c - B (1 - 1/160).
    cfg = EstimateConfig(params=10**9, tokens_per_worker=1000, workers=8, network=gbps_link, device="a100",
                         strategies=["adamw@fp32-allreduce"])
    row = estimate(cfg).iloc[0]
    backward = 4e12 / A100_FLOPS
    assert row["buckets"] == 160 and row["overlap"] == "buckets"
    assert row["comm_s"] == pytest.approx(7.0)
    assert row["comm_exposed_s"] == pytest.approx(7.0 - backward * 159 / 160)


def test_columns_and_baseline(gbps_link):
    cfg = EstimateConfig(model="gpt2-124m", workers=8, network=gbps_link, device="h100",
                         strategies=["lion", "dlion-mavo@a2a-1bit"], baseline="dlion-mavo")
    frame = estimate(cfg)
    assert list(frame.columns[: len(ESTIMATE_COLUMNS)]) == ESTIMATE_COLUMNS
    assert frame["speedup"].tolist()[1] == 1.0
    assert frame["params"].tolist() == [MODELS.get("gpt2-124m").params] * 2
    assert frame["tokens_per_worker"].tolist() == [1024, 1024]  # one sample by default
    a2a = frame.iloc[1]
    assert a2a["overlap"] == "after" and a2a["comm_exposed_s"] == a2a["comm_s"]
    for row in frame.to_dict("records"):
        parts = row["compute_s"] + row["encode_s"] + row["comm_exposed_s"] + row["decode_s"] + row["update_s"]
        assert row["step_s"] == pytest.approx(parts)


def test_a_baseline_strategy_that_several_runs_share_is_refused(gbps_link):
    cfg = EstimateConfig(model="gpt2-124m", workers=8, network=gbps_link, device="h100",
                         strategies=["dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit"], baseline="dlion-mavo")
    with pytest.raises(LionsimError, match=r"ambiguous baseline 'dlion-mavo': 2 runs are dlion-mavo "
                                           r"\(dlion-mavo@int8-allreduce, dlion-mavo@a2a-1bit\)"):
        estimate(cfg)


def test_gpus_per_node_brings_the_devices_nvlink():
    r = resolve(EstimateConfig(model="gpt2-124m", workers=16, network="10gbe", device="h100", gpus_per_node=8))
    assert (r.network.workers_per_node, r.network.intra) == (8, NVLINK4)
    assert r.network.inter == load_network("10gbe").inter
    kept = resolve(EstimateConfig(model="gpt2-124m", workers=16, network="dgx-a100", device="h100", gpus_per_node=4))
    assert kept.network.intra == load_network("dgx-a100").intra and kept.network.workers_per_node == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give exactly one of --model"),
        ({"model": "gpt2-124m", "params": 10}, "give exactly one of --model"),
        ({"params": 10}, "--params needs --tokens-per-worker"),
        ({"params": 0, "tokens_per_worker": 5}, "bad --params 0"),
        ({"model": "gpt2-124m", "mfu": 1.5}, "bad --mfu 1.5"),
        ({"model": "gpt2-124m", "device": "tpu-v5"}, "unknown device 'tpu-v5'"),
        ({"model": "gpt2-124m", "network": "dgx-h100", "workers": 12}, "bad --workers 12: 12 workers do not fill whole nodes"),
        ({"model": "gpt2-124m", "gpus_per_node": 3, "workers": 8},  # the option typed, not the network's key
         "bad --gpus-per-node 3: 8 workers do not fill whole nodes of 3; accepted: a divisor of --workers (1, 2, 4) "
         "or at least 8 (one node)"),
        ({"model": "gpt2-124m", "strategies": ["lion@a2a-1bit"]}, "cannot use transport 'a2a-1bit'"),
        ({"model": "gpt2-124m", "overlap": "always"}, "bad --overlap always; accepted"),
        ({"model": "gpt2-124m", "algorithm": "magic"}, "unknown collective algorithm 'magic'"),
        ({"model": "gpt2-124m", "workers": 0}, "bad --workers 0"),
    ],
)
def test_bad_input_fails_with_one_line(kwargs, message):
    with pytest.raises(LionsimError, match=re.escape(message)):
        estimate(EstimateConfig(**kwargs))


def test_a_named_algorithm_prices_the_ops_it_implements(gbps_link):
    cfg = EstimateConfig(model="gpt2-124m", workers=8, network=gbps_link, overlap="none",
                         strategies=["lion", "dlion-mavo@a2a-1bit"], algorithm="recursive_doubling")
    lion, a2a = estimate(cfg).to_dict("records")
    n = 4 * MODELS.get("gpt2-124m").params
    assert lion["comm_s"] == pytest.approx(3 * n / 1e9)  # log2(8) rounds of n bytes at 1 GB/s, no latency
    auto = estimate(EstimateConfig(model="gpt2-124m", workers=8, network=gbps_link, overlap="none",
                                   strategies=["dlion-mavo@a2a-1bit"])).iloc[0]
    assert a2a["comm_s"] == pytest.approx(auto["comm_s"])  # its all-to-all takes the cheapest; the all-gather too


def test_wire_bytes_count_the_priced_algorithm(tmp_path):
    """At N = 4 with latency, recursive doubling prices a small all-reduce (log2 4 n = 2n bytes
    sent); wire_bytes counts those bytes, not a ring's 1.5n."""
    from lionsim.network import Link
    from lionsim.network.collectives.base import Group
    from lionsim.network.collectives.recursive_doubling import RecursiveDoubling

    path = tmp_path / "alpha.toml"
    path.write_text('traits = "ideal"\n[inter]\nalpha_us = 10.0\nbandwidth_GBps = 1.0\n')
    cfg = EstimateConfig(params=1000, tokens_per_worker=10, workers=4, network=str(path), device="a100",
                         strategies=["adamw@fp32-allreduce"], overlap="none")
    row = estimate(cfg).to_dict("records")[0]
    terms = RecursiveDoubling().all_reduce(4000.0, Group(ranks=4, link=Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0)))
    assert row["comm_s"] == pytest.approx(terms.time_s)
    assert row["wire_bytes"] == terms.sent_bytes == 8000


def test_estimate_default_set_compares_like_with_like():
    runs = {r.strategy: r.transport for r in parse_runs(list(DEFAULT_STRATEGIES))}
    assert runs["adamw"] == runs["lion"] == "bf16-allreduce"  # was adamw@bf16 against lion@fp32
    frame = estimate(EstimateConfig(model="gpt2-124m"))
    adamw, lion = (frame[frame["strategy"] == s].iloc[0] for s in ("adamw", "lion"))
    assert adamw["wire_bytes"] == lion["wire_bytes"] and adamw["comm_s"] == lion["comm_s"]


def test_a_tiny_model_on_a_device_gets_a_launch_floor_and_plain_ms(capsys):
    frame = estimate(EstimateConfig(params=1000, tokens_per_worker=1, workers=2, network="nvlink4"))
    kernel_s = DEVICES.get("h100").kernel_s
    assert (frame["compute_s"] >= 3 * kernel_s).all()  # was 1.5e-11 s
    assert (frame["update_s"] >= kernel_s).all()
    code, out, _ = run_cli(["estimate", "--params", "1000", "--tokens-per-worker", "1", "-n", "2",
                            "--network", "nvlink4"], capsys)
    assert code == 0 and "e-0" not in out and "e+0" not in out


def table_notes(frame) -> list[str]:
    """The caption's whole-table notes but the launch-bound line (its own test: test_launch_note),
    which a model at one sequence a worker on an H100 gets."""
    return [n for n in frame.attrs.get("caption_notes", []) if not n.startswith("compute is launch-bound")]


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_estimate_builds_no_per_worker_state(capsys):
    """10^8 workers of a 148-tensor stand-in once asked for 59 GB (a [W, T] buffer per state)."""
    before = rss_bytes()
    for label in ("dlion-mavo@a2a-1bit", "lioncub-l1", "onebit-adam", "terngrad", "qsgd"):
        probe(parse_runs([label])[0], params=124_439_808, tensors=148, workers=10**8)
    assert rss_bytes() - before < 200 * 2**20
    code, out, err = run_cli(["estimate", "-m", "gpt2-124m", "--workers", "100000000", "-s", "adamw,dlion-mavo@a2a-1bit"],
                         capsys)
    assert code == 0 and "dlion-mavo" in out, err


P4DN = "examples/clusters/p4dn.toml"
"""8 A100 40GB a node: its profile states device = "a100-40gb"."""


def test_the_networks_device_is_the_default_and_an_explicit_device_wins():
    """Without --device an estimate runs on the device the profile (or preset) states: the same rows
    as --device naming it; an explicit --device wins; a network naming none runs on h100."""
    from tests.helpers import REPO

    def csv(**kw):
        cfg = EstimateConfig(model="gpt2-124m", strategies=["adamw@bf16-allreduce"], workers=16, **kw)
        return estimate(cfg).to_csv(index=False)

    p4dn = str(REPO / P4DN)
    assert csv(network=p4dn) == csv(network=p4dn, device="a100-40gb") != csv(network=p4dn, device="h100")
    assert csv(network="dgx-a100") == csv(network="dgx-a100", device="a100-40gb")
    assert csv(network="10gbe") == csv(network="10gbe", device="h100")
    assert estimate(EstimateConfig(model="gpt2-124m", network=p4dn))["device"].iloc[0] == "a100-40gb"


@pytest.mark.parametrize("args, says", [
    (["--network", P4DN], "a100-40gb (the profile's) at mfu 0.4"),
    (["--network", "dgx-a100"], "a100-40gb (the preset's) at mfu 0.4"),
    (["--network", P4DN, "--device", "h100"], "h100 at mfu 0.4"),
    (["--network", P4DN, "--replica-gpus", "2"], "2 x a100-40gb (the profile's) a worker at mfu 0.4"),
])
def test_the_title_says_whose_device_it_is(args, says, capsys, monkeypatch):
    from tests.helpers import REPO

    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_cli(["estimate", "--model", "gpt2-124m", "-s", "adamw", *args], capsys)
    assert code == 0, err
    assert says in " ".join(out.split())


def test_a_profiles_unknown_device_is_one_line_where_estimate_reads_it(tmp_path, capsys):
    """Worded as the profile's other bad keys are (an unknown fabric: "bad --network FILE: unknown
    fabric 'roce'; accepted: ..."), not as a bare "FILE: ...; choose from"."""
    path = tmp_path / "p.toml"
    path.write_text('device = "a1000"\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n')
    code, out, err = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "2", "--network", str(path)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"error: bad --network {path}: unknown device 'a1000'; accepted: a100 (a100-40gb), a100-40gb")
    assert err.rstrip().endswith("; did you mean 'a100'?")
    (tmp_path / "f.toml").write_text('fabric = "roce"\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n')
    code, out, fabric = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "2", "--network",
                                 str(tmp_path / "f.toml")], capsys)
    assert code == 2 and fabric.startswith(f"error: bad --network {tmp_path / 'f.toml'}: unknown fabric 'roce'; accepted: ")
    code, out, err = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "2", "--network", str(path),
                              "--device", "h100"], capsys)
    assert code == 0, err  # an explicit --device wins: the profile's device is not read


def test_the_default_sets_caption_says_its_baseline_is_bf16_and_how_to_get_fp32(capsys):
    from lionsim.estimate.captioned import DEFAULT_BASELINE_NOTE

    argv = ["estimate", "--model", "gpt2-124m"]
    code, out, _ = run_cli(argv, capsys)
    said = " ".join(out.split())
    assert code == 0 and " ".join(DEFAULT_BASELINE_NOTE.split()) in said
    assert "bf16 gradients" in said and "-s adamw@fp32-allreduce" in said
    code, out, _ = run_cli([*argv, "-s", "adamw", "-s", "lion"], capsys)
    assert code == 0 and "bf16 gradients" not in " ".join(out.split())
    # the two baselines it tells apart: bf16's comm is half of fp32's on the same ring
    default = estimate(EstimateConfig(model="gpt2-124m"))
    bare = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw"]))
    assert default["baseline"].iloc[0] == "adamw@bf16-allreduce" and bare["baseline"].iloc[0] == "adamw@fp32-allreduce"
    assert table_notes(default) == [DEFAULT_BASELINE_NOTE]
    assert [n.split(":")[0] for n in table_notes(bare)] == ["fp32 gradients all-reduced"]  # says what it priced
    assert DEFAULT_BASELINE_NOTE not in default.attrs["notes"]  # the rows' transports' footnotes only


@pytest.mark.parametrize("traits, chosen, library", [
    ('traits = "ideal"\n', True, "ideal"),  # the profile names its library: the user's choice
    ("", False, "nccl"),  # none named: the device's (NCCL on a GPU), a default
])
def test_resolve_reads_a_profile_once_and_knows_whether_it_named_its_library(tmp_path, monkeypatch, traits, chosen,
                                                                               library):
    """One resolve parses --network's file once: the checks before torch, the network priced on and
    whether the library was chosen (the ideal library's hint is for a default) all read that parse
    (they read the file three to five times)."""
    import lionsim.network.profile as profile

    path = tmp_path / "two.toml"
    path.write_text(f'{traits}workers_per_node = 2\n[inter]\nalpha_us = 5.0\nbandwidth_GBps = 1.0\n'
                    '[intra]\nalpha_us = 1.0\nbandwidth_GBps = 100.0\n')
    reads = []
    read = profile._read
    monkeypatch.setattr(profile, "_read", lambda p: reads.append(p) or read(p))
    r = resolve(EstimateConfig(model="gpt2-124m", workers=4, network=str(path), strategies=["adamw"]))
    assert len(reads) == 1, reads
    assert r.library_chosen is chosen and r.network.traits.name == library
    assert resolve(EstimateConfig(model="gpt2-124m", workers=4, network=str(path), traits="gloo",
                                  strategies=["adamw"])).library_chosen  # --traits: chosen


def test_runs_that_all_reduce_different_floats_say_so_and_how_to_align_them():
    """`-s adamw@bf16-allreduce -s lion` priced lion's fp32 gradients against a bf16 baseline and said
    nothing (docs/time-to-target.md read lion 0.68x). A bare name stays its strategy's own transport
    (one rule for every strategy); the caption names the runs' precisions and NAME@TRANSPORT."""
    from lionsim.estimate.captioned import precision_note

    mixed = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw@bf16-allreduce", "lion"]))
    assert list(mixed["transport"]) == ["bf16-allreduce", "fp32-allreduce"]
    assert mixed["wire_bytes"].iloc[1] == 2 * mixed["wire_bytes"].iloc[0]  # the ring moves twice the bytes
    note = precision_note(mixed, {"lion@fp32-allreduce"})
    assert note in mixed.attrs["caption_notes"]
    assert "adamw@bf16-allreduce bf16, lion@fp32-allreduce fp32" in note and "NAME@TRANSPORT" in note
    alike = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw@bf16-allreduce", "lion@bf16-allreduce",
                                                                   "dlion-mavo"]))
    assert precision_note(alike) == "" and table_notes(alike) == []


def test_the_precision_note_names_the_bare_runs_of_this_table():
    """The note named "(adamw, lion: fp32-allreduce ...)" whatever ran: it names the runs a bare -s
    NAME resolved to a float all-reduce beside another precision, and says nothing where every
    transport was spelled out (the mix was asked for)."""
    mixed = estimate(EstimateConfig(model="gpt2-124m", strategies=["diloco", "adamw@bf16-allreduce"]))
    (note,) = [n for n in mixed.attrs["caption_notes"] if n.startswith("Mixed precisions")]
    assert "(diloco: fp32-allreduce, as bench trains it)" in note, note
    assert "adamw, lion" not in note and "adamw: " not in note, note
    spelled = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw@fp32-allreduce", "adamw@bf16-allreduce"]))
    assert not any(n.startswith("Mixed") for n in spelled.attrs.get("caption_notes", ())), spelled.attrs


def test_a_table_of_bare_fp32_runs_says_so_and_how_to_price_bf16():
    """A new user's -s adamw -s muon priced fp32 gradients without a word (the default set's baseline
    is adamw@bf16-allreduce): about 2x their bf16 step on a slow link."""
    bare = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw", "muon"]))
    (note,) = [n for n in bare.attrs["caption_notes"] if n.startswith("fp32 gradients")]
    assert "(adamw: fp32-allreduce, muon: fp32-allreduce, as bench trains them)" in note, note
    assert "-s adamw@bf16-allreduce prices that" in note, note
    spelled = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw@fp32-allreduce"]))
    assert not any(n.startswith("fp32") for n in spelled.attrs.get("caption_notes", ())), spelled.attrs


@pytest.mark.parametrize(("replica", "gpus_per_node", "says"), [
    (8, None, "holds 8 workers of 8 h100 each (64 devices a node): where its nodes are servers of 8 GPUs, give "
              "--gpus-per-node 1 (one replica a node)"),
    (4, None, "holds 8 workers of 4 h100 each (32 devices a node): where its nodes are servers of 8 GPUs, give "
              "--gpus-per-node 2 (replicas a node)"),
    (8, 1, None),  # one replica a node: the layout a server of 8 has
    (1, None, None),  # one device a worker
])
def test_a_node_of_several_replicas_says_how_many_devices_it_holds(replica, gpus_per_node, says):
    """16 workers of 8 on h100x8-100gbe sat on 2 "nodes" of 64 GPUs without a word: all a server's
    NIC would carry was priced inside the node (a 3.98 s step, 6.30 s with one replica a node)."""
    cfg = EstimateConfig(model="gpt2-124m", network="h100x8-100gbe", workers=16, replica_gpus=replica,
                         gpus_per_node=gpus_per_node, strategies=["adamw@bf16-allreduce"])
    notes = " ".join(estimate(cfg).attrs.get("caption_notes", []))
    assert (says in notes) if says else "devices a node" not in notes, notes


@pytest.mark.parametrize("column", ["step_s", "step_p99_s", "comm_s"])
def test_a_time_that_overflows_is_one_line_not_a_row(monkeypatch, capsys, column):
    """A time past float's range (inf, or nan from inf - inf) is refused where estimate builds its rows,
    whichever input escaped its range: --compute-spread lognormal:100 printed inf, nan and a 0.00x
    speedup with exit 0."""
    import lionsim.estimate.table as table
    from tests.helpers.cli import one_line_exit_2

    priced = table._priced

    def overflowing(r, run, *args, **kwargs):
        row = priced(r, run, *args, **kwargs)
        return row | {column: math.inf} if run.strategy == "adamw" else row

    monkeypatch.setattr(table, "_priced", overflowing)
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "-s", "dlion-mavo", "-s", "adamw"], capsys,
                          "error: cannot price adamw@")
    assert f"its {column} overflowed to inf; accepted: " in err, err
