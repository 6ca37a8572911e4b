"""Two emulated hosts (tools/emulated-link.sh: network namespaces joined by a veth pair shaped to
1 Gbit/s by tc tbf) and lionsim across them under torchrun --nnodes 2: `comm` measures between
the hosts and writes a fitted profile, `bench --calibrate` trains across them. Needs root, ip
and tc: skipped elsewhere. The namespaces are taken down whatever happens. Asserts what was
written, never how fast."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lionsim.launch import free_port
from lionsim.network import load_network

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "emulated-link.sh"
pytestmark = pytest.mark.skipif(
    not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("ip") and shutil.which("tc")),
    reason="two emulated hosts need root, ip and tc (iproute2)")


@pytest.fixture(scope="module")
def hosts():
    name = f"lt{os.getpid() % 10**8}"  # this run's own: never another's namespaces
    up = subprocess.run([str(SCRIPT), "up", "1gbit", name], capture_output=True, text=True)
    try:
        assert up.returncode == 0, up.stderr
        yield name
    finally:
        subprocess.run([str(SCRIPT), "down", name], capture_output=True)
        assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def across(name: str, args: list[str], timeout: float = 300) -> tuple[subprocess.CompletedProcess, ...]:
    """`lionsim ARGS --iface` on both hosts under torchrun --nnodes 2 (one rank each); node 0 first."""
    port = free_port()
    procs = []
    for rank, host in ((0, "a"), (1, "b")):
        command = ["ip", "netns", "exec", f"{name}-{host}", sys.executable, "-m", "torch.distributed.run", "--nnodes",
                   "2", "--node-rank", str(rank), "--nproc-per-node", "1", "--master-addr", "10.213.0.1",
                   "--master-port", str(port), "-m", "lionsim", *args, "--iface", f"{name}-{host}"]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "OMP_NUM_THREADS": "1"}))
    outs = [p.communicate(timeout=timeout) for p in procs]
    return tuple(subprocess.CompletedProcess(p.args, p.returncode, o, e) for p, (o, e) in zip(procs, outs))


def test_the_script_refuses_bad_input_and_a_second_up(hosts):
    for args, message in ((["up", "fast"], "bad RATE 'fast'"), (["up", "1gbit", "Bad-Name"], "bad NAME"),
                          (["up", "1gbit", hosts], f"{hosts} is already up"), (["exec", "c", hosts, "--", "true"],
                                                                               "bad host 'c'")):
        done = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True)
        assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    status = subprocess.run([str(SCRIPT), "status", hosts], capture_output=True, text=True).stdout
    assert "10.213.0.1/30" in status and "10.213.0.2/30" in status and status.count("rate 1Gbit") == 2


@pytest.mark.slow
def test_comm_across_two_hosts_writes_a_measured_table_and_a_profile(hosts, tmp_path):
    fit, out = tmp_path / "fit.toml", tmp_path / "out"
    node0, node1 = across(hosts, ["comm", "--backend", "gloo", "--network", "1gbe", "--sizes", "1B:1MiB:x16",
                                  "--warmup", "1", "--iters", "4", "--collective", "all_reduce", "--collective",
                                  "all_to_all", "--dtype", "float32,uint8", "--fit", str(fit), "--out", str(out)])
    assert node0.returncode == 0 and node1.returncode == 0, node0.stderr + node1.stderr
    text = " ".join(node0.stdout.split())  # the tables fit 80 columns: lines wrap
    assert "measuring all_reduce (float32, uint8), all_to_all on 2 gloo ranks (the launcher's group)" in text
    assert "measured on 2 gloo ranks" in text and "fitted profile" in text and "median / worst |error|" in text
    assert node1.stdout == ""
    net = load_network(fit)
    record = net.measured
    assert record["interfaces"] == [f"{hosts}-a", f"{hosts}-b"] and record["addresses"] == ["10.213.0.1", "10.213.0.2"]
    assert record["ranks"] == 2 and record["hosts"] == 1  # two namespaces of one machine: one boot id
    assert net.traits.backend == "gloo" and {op for op, _ in net.traits.ops} >= {"all_reduce", "all_to_all"}
    frame = pd.read_csv(out / "comm.csv")
    assert set(frame.source) == {"model", "measured"} and set(frame[frame.source == "model"].network) == {"1gbe", "fit"}


@pytest.mark.slow
def test_bench_trains_across_two_hosts_calibrated(hosts, tmp_path):
    out = tmp_path / "run"
    node0, node1 = across(hosts, ["bench", "--backend", "gloo", "-w", "mlp", "--model-size", "tiny", "--workers", "2",
                                  "--steps", "5", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--eval-every", "100",
                                  "--calibrate", "--out", str(out)])
    assert node0.returncode == 0 and node1.returncode == 0, node0.stderr + node1.stderr
    assert "calibration.toml" in " ".join(node0.stdout.split())  # the model check names what priced it
    meta = json.loads((out / "run.json").read_text())
    machine = meta["hosts"]["machines"][0]
    assert machine["ifaces"] == [f"{hosts}-a", f"{hosts}-b"] and machine["ranks"] == [0, 1]
    assert meta["config"]["calibrate"] is True and meta["comm_model"].startswith("calibration.toml")
    calibration = pd.read_csv(out / "calibration.csv")
    calls = pd.read_csv(out / "calls.csv")
    planned = set(map(tuple, calls[["collective", "bytes", "dtype"]].drop_duplicates().values))
    assert planned <= set(map(tuple, calibration[["collective", "bytes", "dtype"]].values))  # every call measured
    assert load_network(out / "calibration.toml").traits.backend == "gloo"
