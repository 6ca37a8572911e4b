"""Performance benchmarks that print figures (never assertions): `python -m lionsim.perf`.

    pack      pack_signs throughput against numpy.packbits on 10^8 floats (median of 5)
    votes     majority vote of N packed sign vectors (n = 10^6, one thread): bit-sliced counting
              on the packed words against unpack -> sum -> sign, at N = 8, 32, 128, 1024
    vmap      per-worker gradients: the simulator's loop against torch.func.vmap (median of 5)
    sim       simulator step time at N = 1, 8, 32 workers for a workload: the batched
              worker dimension against N x one worker's compute, and peak memory (RSS)
    transports  measured comm per step of each vote transport against fp32-allreduce on
              2 gloo ranks (25M parameters), beside the bytes ratio and the model on --profile

Each simulator point runs in a fresh process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time


def bench_pack(numel: int = 10**8, repeats: int = 5) -> dict:
    import numpy as np
    import torch

    from lionsim import pack_signs

    x = torch.randn(numel)
    xn = x.numpy()
    ours, theirs = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        packed = pack_signs(x)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        expected = np.packbits(xn > 0)
        theirs.append(time.perf_counter() - start)
    assert np.array_equal(packed.numpy(), expected), "pack_signs disagrees with numpy.packbits"
    t_ours, t_np = statistics.median(ours), statistics.median(theirs)
    return {"numel": numel, "pack_signs_s": t_ours, "numpy_packbits_s": t_np,
            "pack_signs_GBps": numel * 4 / t_ours / 1e9, "numpy_GBps": numel * 4 / t_np / 1e9,
            "ratio_numpy_over_ours": t_np / t_ours}


def bench_votes(counts: list[int], numel: int = 10**6, repeats: int = 3) -> list[dict]:
    """Median seconds of sign(S) from packed [N, n/8] votes: bit-sliced vs unpack -> sum."""
    import torch

    from lionsim.aggregators.bitslice import vote_sum_packed
    from lionsim.packing import pack_signs, unpack_signs

    torch.set_num_threads(1)
    rows = []
    for n_workers in counts:
        packed = pack_signs(torch.randn(n_workers, numel, generator=torch.Generator().manual_seed(n_workers)))
        fast, plain = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            ours = torch.sign(vote_sum_packed(packed, numel)[0])
            fast.append(time.perf_counter() - start)
            start = time.perf_counter()
            ref = torch.sign(unpack_signs(packed, numel, torch.int8).sum(0, dtype=torch.int32))
            plain.append(time.perf_counter() - start)
            assert torch.equal(ours, ref), "bit-sliced vote disagrees with unpack -> sum -> sign"
            del ref
        t_fast, t_plain = statistics.median(fast), statistics.median(plain)
        rows.append({"workers": n_workers, "numel": numel, "bitslice_s": t_fast, "unpack_sum_s": t_plain,
                     "ratio_unpack_over_bitslice": t_plain / t_fast})
    return rows


def sim_point(workload: str, size: str, workers: int, steps: int, strategy: str) -> dict:
    """Median step time of `strategy` in the simulator (run in this process)."""
    import torch

    from lionsim.backends import SimComm
    from lionsim.engine import train_step
    from lionsim.runs import parse_runs
    from lionsim.simulator import worker_gradients
    from lionsim.strategies import StrategyConfig, flatten_parameters
    from lionsim.timing import Clock
    from lionsim.transports import TRANSPORTS
    from lionsim.workloads import WorkloadConfig, build_workload

    torch.set_num_threads(1)  # as `lionsim bench` trains
    run = parse_runs([strategy])[0]
    wl = build_workload(WorkloadConfig(name=workload, workers=workers, size=size))
    params, layout = flatten_parameters(wl.model)
    comm = SimComm(workers)
    strat = run.strategy_class(StrategyConfig(), layout, comm)
    transport = TRANSPORTS.get(run.transport)()
    grads = torch.zeros(workers, layout.numel)
    clock, compute, other = Clock(), [], []
    for step in range(1, steps + 1):
        start = time.perf_counter()
        worker_gradients(wl.model, wl.loss, wl.batches(step - 1), grads)
        mid = time.perf_counter()
        train_step(strat, transport, comm, grads, params, step, clock)
        compute.append(mid - start)
        other.append(time.perf_counter() - mid)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"workers": workers, "params": layout.numel, "compute_s": statistics.median(compute[1:]),
            "optimizer_s": statistics.median(other[1:]), "peak_rss_MB": rss_mb}


def bench_vmap(workload: str, size: str, workers: int, repeats: int = 5) -> dict:
    """Median seconds for W per-worker gradients: a loop (the simulator's way) vs vmap."""
    import torch
    from torch.func import functional_call, grad, vmap

    from lionsim.simulator import worker_gradients
    from lionsim.strategies import flatten_parameters
    from lionsim.workloads import WorkloadConfig, build_workload

    torch.set_num_threads(1)
    wl = build_workload(WorkloadConfig(name=workload, workers=workers, size=size))
    params = {k: v.detach() for k, v in wl.model.named_parameters()}
    batches = wl.batches(0)
    inputs = torch.stack([x for x, _ in batches])
    targets = torch.stack([y for _, y in batches])

    def loss(p, x, y):
        return wl.loss(lambda inp: functional_call(wl.model, p, (inp,)), x, y)

    per_worker = vmap(grad(loss), in_dims=(None, 0, 0))
    _, layout = flatten_parameters(wl.model)
    out = torch.zeros(workers, layout.numel)
    loop_t, vmap_t = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        worker_gradients(wl.model, wl.loss, batches, out)
        loop_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        grads = per_worker(params, inputs, targets)
        vmap_t.append(time.perf_counter() - start)
    flat = torch.cat([g.reshape(workers, -1) for g in grads.values()], dim=1)
    assert torch.allclose(flat, out, atol=1e-5), "vmap gradients disagree with the loop"
    return {"workers": workers, "loop_s": statistics.median(loop_t), "vmap_s": statistics.median(vmap_t)}


def bench_sim(workload: str, size: str, counts: list[int], steps: int, strategy: str) -> list[dict]:
    rows = []
    for n in counts:
        out = subprocess.run([sys.executable, "-m", "lionsim.perf", "_sim_point", workload, size,
                              str(n), str(steps), strategy], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    one = rows[0]["compute_s"] / rows[0]["workers"]
    for row in rows:
        row["compute_vs_N_x_one"] = row["compute_s"] / (row["workers"] * one)
    return rows


def print_transports(profile: str, numel: int, iters: int) -> None:
    from lionsim.measure.transports import TransportConfig, measure_transports, transport_table
    from lionsim.network import load_network

    net = load_network(profile)
    cfg = TransportConfig(numel=numel, iters=iters)
    rows = transport_table(cfg, measure_transports(cfg), net)
    print(f"transports on {cfg.ranks} gloo ranks, {numel / 1e6:g}M parameters, median of {iters} steps "
          f"(slowest rank); model: {net.name}; ratio = fp32-allreduce / transport")
    print(f"{'transport':<16} {'calls':<22} {'wire MB':>8} {'bytes x':>8} {'comm ms':>8} {'comm x':>7} "
          f"{'aggr ms':>8} {'aggr x':>7} {'model ms':>9} {'model x':>8} {'model err':>9}")
    for r in rows:
        print(f"{r['transport']:<16} {r['calls']:<22} {r['wire_bytes'] / 1e6:>8.2f} {r['bytes_ratio']:>8.1f} "
              f"{r['comm_s'] * 1e3:>8.1f} {r['comm_ratio']:>7.1f} {r['aggregate_s'] * 1e3:>8.1f} "
              f"{r['aggregate_ratio']:>7.1f} {r['model_s'] * 1e3:>9.1f} {r['model_ratio']:>8.1f} "
              f"{r['model_error']:>+9.0%}")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_sim_point":
        workload, size, n, steps, strategy = argv[1:]
        print(json.dumps(sim_point(workload, size, int(n), int(steps), strategy)))
        return
    p = argparse.ArgumentParser(prog="python -m lionsim.perf", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="*", default=["pack", "vmap", "sim"],
                   choices=["pack", "votes", "vmap", "sim", "transports"])
    p.add_argument("--workload", default="vit")
    p.add_argument("--size", default="small")
    p.add_argument("--workers", default="1,8,32")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--strategy", default="dlion-mavo")
    p.add_argument("--vote-workers", default="8,32,128,1024", help="votes: worker counts N")
    p.add_argument("--vmap-workload", default="mlp", help="workload for the vmap comparison")
    p.add_argument("--numel", type=int, default=None,
                   help="pack: 1e8 floats; votes: 1e6 coordinates; transports: 25e6 parameters")
    p.add_argument("--profile", default="10gbe", help="transports: the network the model prices (a --fit profile)")
    p.add_argument("--iters", type=int, default=5, help="transports: timed steps per transport")
    args = p.parse_args(argv)
    if "pack" in args.what:
        r = bench_pack(args.numel or 10**8)
        print(f"pack_signs on {r['numel']:.0e} floats: {r['pack_signs_s'] * 1e3:.1f} ms "
              f"({r['pack_signs_GBps']:.2f} GB/s); numpy.packbits(x > 0): {r['numpy_packbits_s'] * 1e3:.1f} ms "
              f"({r['numpy_GBps']:.2f} GB/s); numpy time / ours = {r['ratio_numpy_over_ours']:.2f}")
    if "votes" in args.what:
        counts = [int(n) for n in args.vote_workers.split(",")]
        rows = bench_votes(counts, args.numel or 10**6)
        print(f"majority vote on packed signs, n = {rows[0]['numel']:.0e}, one thread, median of 3:")
        print(f"{'N':>5} {'bit-sliced ms':>14} {'unpack-sum ms':>14} {'unpack / bit-sliced':>20}")
        for r in rows:
            print(f"{r['workers']:>5} {r['bitslice_s'] * 1e3:>14.1f} {r['unpack_sum_s'] * 1e3:>14.1f} "
                  f"{r['ratio_unpack_over_bitslice']:>20.1f}")
    if "vmap" in args.what:
        for n in [int(n) for n in args.workers.split(",")]:
            r = bench_vmap(args.vmap_workload, args.size, n)
            print(f"per-worker gradients, {args.vmap_workload}/{args.size}, N={n}: loop {r['loop_s']:.4f} s, "
                  f"vmap {r['vmap_s']:.4f} s (vmap / loop = {r['vmap_s'] / r['loop_s']:.2f})")
    if "sim" in args.what:
        counts = [int(n) for n in args.workers.split(",")]
        print(f"simulator, {args.workload}/{args.size}, {args.strategy}, median of {args.steps - 1} steps:")
        print(f"{'N':>4} {'params':>8} {'compute s':>10} {'vs N x one':>10} {'optimizer s':>12} {'peak RSS MB':>12}")
        for r in bench_sim(args.workload, args.size, counts, args.steps, args.strategy):
            print(f"{r['workers']:>4} {r['params']:>8} {r['compute_s']:>10.3f} {r['compute_vs_N_x_one']:>10.2f} "
                  f"{r['optimizer_s']:>12.4f} {r['peak_rss_MB']:>12.0f}")
    if "transports" in args.what:
        print_transports(args.profile, args.numel or 25_000_000, args.iters)


if __name__ == "__main__":
    main()
