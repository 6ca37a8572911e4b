"""lionsim as one job under a launcher, across hosts: `comm` measures on the launcher's group,
the interface is named with --iface, and what goes wrong between hosts (an unknown interface,
an unreachable rendezvous, ranks running different lionsim or options, a profile of another
backend) is one line and exit 2.

Ranks here are real processes given a launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) on this host; tests/launch/test_emulated_link.py runs them on two emulated hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from lionsim.launch import free_port
from lionsim.network import Link, Network, Traits, load_network
from lionsim.network.toml_out import profile_toml

LIONSIM = [sys.executable, "-m", "lionsim"]
COMM = LIONSIM + ["comm", "--backend", "gloo", "--sizes", "1B,4KB,64KB", "--iters", "3", "--warmup", "1",
                  "--timeout", "20", "--collective", "all_reduce", "--collective", "all_to_all"]


def error_lines(text: str) -> list[str]:
    return [line for line in text.strip().splitlines() if not line.startswith(("lionsim: ", "warning: "))
            and "socket.cpp" not in line]


def launched(rank: int, world: int, port: int, addr: str = "127.0.0.1") -> dict:
    return {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
            "MASTER_ADDR": addr, "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1"}


def job(per_rank: list[list[str]], timeout: float = 180) -> list[subprocess.CompletedProcess]:
    """One process per rank, each with its own argv, as a launcher would start them."""
    port = free_port()
    procs = [subprocess.Popen(argv, env=launched(r, len(per_rank), port), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r, argv in enumerate(per_rank)]
    outs = [p.communicate(timeout=timeout) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, o, e) for p, (o, e) in zip(procs, outs)]


def one_line(done: subprocess.CompletedProcess, message: str) -> None:
    lines = error_lines(done.stderr)
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_comm_measures_on_the_launchers_group(tmp_path):
    out, fit = tmp_path / "out", tmp_path / "fit.toml"
    rank0, rank1 = job([COMM + ["--out", str(out), "--fit", str(fit)], COMM + ["--out", str(out), "--fit", str(fit)]])
    assert rank0.returncode == 0 and rank1.returncode == 0, rank0.stderr + rank1.stderr
    text = " ".join(rank0.stdout.split())  # tables fit 80 columns: lines wrap
    assert "the launcher's group" in text and "measured on 2 gloo ranks" in text
    assert "fitted profile" in text and "med|err|" in text
    assert rank1.stdout == ""  # rank 0 reports; the other ranks stay silent
    frame = pd.read_csv(out / "comm.csv")
    measured = frame[frame.source == "measured"]
    assert set(measured.collective) == {"all_reduce", "all_to_all"} and set(measured.workers) == {2}
    reduce = measured[measured.collective == "all_reduce"]
    assert set(reduce.dtype) == {"float32", "int8", "int32", "uint8", "bfloat16"}  # --fit's: what lionsim sums
    assert sorted(reduce[reduce.dtype == "float32"].bytes) == [4, 4000, 64000]  # whole float32 elements
    assert sorted(reduce[reduce.dtype == "uint8"].bytes) == [1, 4000, 64000]  # the abstention flag's 1 byte
    net = load_network(fit)
    assert net.traits.backend == "gloo" and net.measured["ranks"] == 2 and net.measured["hosts"] == 1


@pytest.mark.slow
def test_an_unknown_interface_is_one_line():
    rank0, rank1 = job([COMM + ["--iface", "nosuch0"]] * 2, timeout=60)
    for done in (rank0, rank1):
        one_line(done, "unknown --iface 'nosuch0'")
        assert "this host has: " in done.stderr and "lo" in done.stderr


@pytest.mark.slow
def test_an_unreachable_rendezvous_names_the_address_and_who_set_it():
    port = free_port()  # nobody listens: rank 1 waits for a rank 0 that never comes
    done = subprocess.run(COMM[:-4] + ["--timeout", "3"], env=launched(1, 2, port), capture_output=True, text=True,
                          timeout=60)
    one_line(done, f"cannot reach the rendezvous at 127.0.0.1:{port} within 3 s "
                   f"(MASTER_ADDR=127.0.0.1, MASTER_PORT={port} from the launcher")


@pytest.mark.slow
def test_ranks_given_different_options_are_named():
    rank0, rank1 = job([COMM, COMM[:-1] + ["all_gather"]], timeout=120)
    for done in (rank0, rank1):
        one_line(done, "rank(s) 1 got a sweep different from rank 0's")


@pytest.mark.slow
def test_ranks_running_different_lionsim_are_named(tmp_path):
    """Rank 1 runs a lionsim that says it is 9.9 (a sitecustomize patches the version)."""
    patch = tmp_path / "patched"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text("import lionsim\nlionsim.__version__ = '9.9'\n")
    port = free_port()
    envs = [launched(0, 2, port), {**launched(1, 2, port), "PYTHONPATH": os.pathsep.join(
        [str(patch), *filter(None, [os.environ.get("PYTHONPATH")])])}]
    procs = [subprocess.Popen(COMM, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for env in envs]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs):
        one_line(subprocess.CompletedProcess(p.args, p.returncode, "", err),
                 "rank(s) 1 run lionsim 9.9 but rank 0 runs lionsim ")


@pytest.mark.slow
def test_a_profile_fitted_on_another_backend_is_refused(tmp_path):
    path = tmp_path / "nccl-fit.toml"
    path.write_text(profile_toml(Network(name="nccl-fit", inter=Link.from_units(alpha_us=20, bandwidth_GBps=5),
                                         traits=Traits(name="nccl-fit", backend="nccl"))))
    done = subprocess.run(LIONSIM + ["bench", "--backend", "gloo", "-w", "mlp", "--steps", "2", "--network", str(path),
                                     "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    one_line(done, "carries traits measured on nccl, but this run uses gloo")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_bench_records_where_its_ranks_ran(tmp_path):
    out = tmp_path / "o"
    done = subprocess.run(LIONSIM + ["bench", "--backend", "gloo", "-w", "mlp", "--model-size", "tiny", "--workers", "2",
                                     "--steps", "4", "-s", "dlion-mavo@a2a-1bit", "--eval-every", "100", "--out",
                                     str(out)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "run.json").read_text())
    hosts = meta["hosts"]
    assert hosts["ranks"] == 2 and len(hosts["machines"]) == 1 and hosts["machines"][0]["ranks"] == [0, 1]
    # --network left at its default: the model priced is named, and said to be no link the ranks crossed
    assert meta["comm_model"] == "1gbe + gloo traits (--network's default, not the link measured)"
    assert meta["network"]["traits"]["name"] == "gloo" and meta["network_given"] is False
    calls = pd.read_csv(out / "calls.csv")
    steps = pd.read_csv(out / "steps.csv")
    assert list(calls.collective.unique()) == ["all_reduce", "all_to_all", "all_gather"]  # flag, votes, result
    per_step = calls.groupby("step").time_s.sum()
    assert per_step.to_numpy() == pytest.approx(steps.comm_measured_s.to_numpy())  # each call billed, summed
    assert (steps.calls == 3).all() and (steps.barrier_wait_s >= 0).all()
    cores = os.cpu_count() or 1
    if cores < 4:  # 2 ranks x (1 thread + gloo's I/O thread) need 4 cores
        assert "warning: 2 ranks share" in done.stderr


def test_an_unknown_interface_in_the_environment_is_refused_as_iface_is(monkeypatch):
    """GLOO_SOCKET_IFNAME=eth9 (a new user's typo) reached torch, whose failure read "cannot reach the
    rendezvous ... Unable to find address for: eth9"; it is checked before the group forms, in the
    words --iface's refusal uses. NCCL's variable takes prefixes and exclusions: NCCL reads it."""
    from lionsim.errors import LionsimError
    from lionsim.group.hosts import interfaces, use_iface

    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo,nosuch9")
    with pytest.raises(LionsimError, match=r"^unknown GLOO_SOCKET_IFNAME 'nosuch9' on .*; this host has: .*lo"):
        use_iface(None)
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "^docker")
    assert "lo" in interfaces() and use_iface(None) == "lo"


def test_ranks_on_one_machine_over_their_own_interfaces_are_not_called_loopback():
    """Two network namespaces joined by a shaped veth pair are one machine (one boot id) whose ranks
    crossed vA and vB, not its loopback: the titles named them "loopback" (a new user's finding)."""
    from lionsim.group.hosts import one_machine_link
    from lionsim.reports.titles import link_name

    def rank(r, iface, address, boot="b1"):
        return {"hostname": "vm", "boot_id": boot, "cores": 2, "threads": 1, "iface": iface, "address": address,
                "rank": r}

    veth = [rank(0, "vA", "10.77.0.1"), rank(1, "vB", "10.77.0.2")]
    assert one_machine_link(veth) == "vA, vB on one machine"
    assert link_name({"ranks_on_one_host": True, "link": one_machine_link(veth)}) == "vA, vB on one machine"
    loop = [rank(0, None, None), rank(1, None, None)]
    assert one_machine_link(loop) is None and link_name({"ranks_on_one_host": True, "link": None}) == "loopback"
    apart = [rank(0, "eth0", "10.0.0.1", "b1"), rank(1, "eth0", "10.0.0.2", "b2")]
    assert one_machine_link(apart) is None
    assert one_machine_link([rank(0, "lo", "127.0.0.1"), rank(1, "lo", "127.0.0.1")]) is None


def test_a_library_s_error_reads_as_words_not_its_source_paths():
    """A killed peer's gloo error reached the user with its source path and sign-off: "[/__w/pytorch/
    .../pair.cc:537] Read error ... GLHF!" (and an emoji); the words alone stay."""
    from lionsim.group.quiet import library_words

    raw = ("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [10.77.0.2]:61345: "
           "Connection reset by peer. This may indicate a possible application crash on rank 0. GLHF! \U0001F642")
    assert library_words(RuntimeError(raw)) == ("Read error [10.77.0.2]:61345: Connection reset by peer. This may "
                                                "indicate a possible application crash on rank 0.")
