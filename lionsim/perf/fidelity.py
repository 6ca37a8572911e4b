"""`python -m lionsim.perf fidelity`: how well the network model predicts real collectives.

For each link (this host's loopback, or two emulated hosts over a shaped link: tools/
emulated-link.sh, which needs root, ip and tc):

1. `lionsim comm --backend gloo --fit` measures a sweep and fits a profile (run A);
2. `lionsim bench --backend gloo --calibrate` trains each workload under the strategies
   (run B: 2 ranks of 1 worker, across the two hosts by torchrun --nnodes 2 on an emulated
   link), measuring every call (calls.csv) and, before training, the same calls comm-style
   (calibration.csv);
3. the calls of run B are priced again on three profiles: A's fit (fitted on a separate run),
   run B's own calibration (fitted on its group, before training), and the link's preset with
   gloo's built-in traits (uncalibrated). Per strategy: the mean measured comm per step past
   the warm-up against the model's mean over the same steps, and the band's coverage: the
   share of those steps whose measured comm lies inside the model's p10-p90 band for that
   step's calls (traits.sum_quantile; a calibrated band holds about 80%);
4. per collective (op, size, dtype) of run B: the median of its in-bench times against the
   median of the same call measured comm-style in the calibration, which says whether the
   bench times a call as `lionsim comm` does.

Every figure is printed and returned; nothing is asserted here (the tests check the model's
structure; this measures it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.perf.rows import Figure

LINKS = {"loopback": ("loopback", None), "1gbit": ("1gbe", "1gbit"), "100mbit": ("100mbe", "100mbit")}
"""--link NAME -> (the preset it is priced with uncalibrated, the tc rate of the emulated link)."""
STRATEGIES = ("adamw@fp32-allreduce", "dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit",
              "dlion-mavo@allgather-1bit", "dlion-mavo@pbit-allreduce")
"""The rows the issue asks for: the baseline, the int8 container, the 1-bit vote transports and
Lion Cub's p-bit all-reduce."""
PROFILES = ("separate fit", "in-run calibration", "uncalibrated")
"""What run B's calls are priced on (module doc, 3)."""
NS = f"lsimf{os.getpid() % 10**6}"
"""The emulated hosts' name (tools/emulated-link.sh NAME): this process's own, so two fidelity
runs on one machine never take down each other's hosts."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FidelityConfig:
    links: tuple[str, ...] = ("loopback",)
    workloads: tuple[str, ...] = ("vit:paper", "mlp:small")
    """WORKLOAD:SIZE pairs trained in run B."""
    steps: int = 30
    warmup: int = 3
    sizes: str = "1B:16MiB"
    """Run A's sweep."""
    out: Path | None = None
    """Where the runs are kept (a temporary directory, removed, when None)."""


def _script() -> Path:
    import lionsim

    path = Path(lionsim.__file__).resolve().parents[1] / "tools" / "emulated-link.sh"
    if not path.exists():
        raise LionsimError(f"an emulated link needs tools/emulated-link.sh of a lionsim checkout; not found at {path}")
    return path


def _check(cfg: FidelityConfig) -> None:
    for link in cfg.links:
        if link not in LINKS:
            raise LionsimError(f"unknown --link {link!r}; accepted: {', '.join(LINKS)}")
        if LINKS[link][1] is not None:
            if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
                raise LionsimError(f"--link {link} emulates two hosts: it needs root, ip and tc (iproute2)")
            _script()


def _lionsim(args: list[str], link: str, port: int, timeout: float) -> None:
    """Run `lionsim ARGS` as one job: this host's own ranks, or torchrun across the two hosts."""
    if LINKS[link][1] is None:
        command = [sys.executable, "-m", "lionsim", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
        return
    procs = []
    for rank, host in ((1, "b"), (0, "a")):  # node 1 first: node 0 prints the results
        command = ["ip", "netns", "exec", f"{NS}-{host}", sys.executable, "-m", "torch.distributed.run",
                   "--nnodes", "2", "--node-rank", str(rank), "--nproc-per-node", "1", "--master-addr", "10.213.0.1",
                   "--master-port", str(port), "-m", "lionsim", *args, "--iface", f"{NS}-{host}"]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "OMP_NUM_THREADS": "1"}))
    outs = [p.communicate(timeout=timeout) for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(f"lionsim {' '.join(args)} across the emulated link failed: "
                           + " | ".join(err.strip()[-400:] for _, err in outs))


def _link_up(link: str) -> None:
    subprocess.run([str(_script()), "down", NS], capture_output=True)
    subprocess.run([str(_script()), "up", LINKS[link][1], NS], check=True, capture_output=True)


def _link_down() -> None:
    subprocess.run([str(_script()), "down", NS], capture_output=True)


def run_fidelity(cfg: FidelityConfig) -> list[Figure]:
    _check(cfg)
    root = Path(tempfile.mkdtemp(prefix="lionsim-fidelity-")) if cfg.out is None else cfg.out
    figures: list[Figure] = []
    try:
        for i, link in enumerate(cfg.links):
            if LINKS[link][1] is not None:
                _link_up(link)
            try:
                figures += _one_link(cfg, link, root / link, 29700 + 10 * i)
            finally:
                if LINKS[link][1] is not None:
                    _link_down()
    finally:
        if cfg.out is None:
            shutil.rmtree(root, ignore_errors=True)
    return figures


def _one_link(cfg: FidelityConfig, link: str, root: Path, port: int) -> list[Figure]:
    preset = LINKS[link][0]
    root.mkdir(parents=True, exist_ok=True)
    fit = root / "fit.toml"
    _lionsim(["comm", "--backend", "gloo", "--network", preset, "--fit", str(fit), "--sizes", cfg.sizes,
              "--warmup", "3", "--iters", "12"], link, port, 3600)
    figures = []
    for k, spec in enumerate(cfg.workloads):
        workload, _, size = spec.partition(":")
        out = root / workload
        _lionsim(["bench", "--backend", "gloo", "--calibrate", "--network", preset, "--workload", workload,
                  "--model-size", size or "small", "--workers", "2", "--steps", str(cfg.steps),
                  "--warmup-steps", str(cfg.warmup), "--eval-every", str(cfg.steps), "--eval-samples", "256",
                  *[a for s in STRATEGIES for a in ("-s", s)], "--out", str(out)], link, port + 1 + k, 7200)
        figures += compare(out, fit, preset, f"{link} {workload}:{size or 'small'}", cfg.warmup)
    return figures


def compare(run_dir: Path, fit: Path, preset: str, where: str, warmup: int) -> list[Figure]:
    """Per strategy and per collective of one run (module doc, 3 and 4)."""
    import pandas as pd

    from lionsim.network import CollectiveCall, network_for, price
    from lionsim.network.traits import sum_quantile

    calls = pd.read_csv(run_dir / "calls.csv")
    calls = calls[calls.step > warmup]
    ranks = json.loads((run_dir / "run.json").read_text())["hosts"]["ranks"]
    profiles = dict(zip(PROFILES, (network_for(fit, backend="gloo"),
                                   network_for(run_dir / "calibration.toml", backend="gloo"),
                                   network_for(preset, backend="gloo"))))
    figures = []
    for (strategy, transport), rows in calls.groupby(["strategy", "transport"], sort=False):
        case = f"{where} {strategy}@{transport}"
        measured = rows.groupby("step").time_s.sum().mean()
        figures.append(Figure("fidelity", case, "measured_ms", measured * 1e3, "mean per step past the warm-up"))
        steps = rows.groupby("step")
        for name, net in profiles.items():
            model = sum(price(CollectiveCall(r.collective, int(r.bytes), dtype=r.dtype), ranks, net).time_s
                        for r in rows.itertuples()) / rows.step.nunique()
            figures.append(Figure("fidelity", case, f"{name} error", model / measured - 1, f"model {model * 1e3:.3g} ms"))
            inside = []
            for _, step in steps:
                modes = [price(CollectiveCall(r.collective, int(r.bytes), dtype=r.dtype), ranks, net).modes
                         for r in step.itertuples()]
                inside.append(sum_quantile(modes, 0.1) <= step.time_s.sum() <= sum_quantile(modes, 0.9))
            figures.append(Figure("fidelity", case, f"{name} coverage", sum(inside) / len(inside),
                                  f"steps inside the p10-p90 band, of {len(inside)} past the warm-up"))
    comm = pd.read_csv(run_dir / "calibration.csv")
    for (op, nbytes, dtype), rows in calls.groupby(["collective", "bytes", "dtype"], sort=False):
        same = comm[(comm.collective == op) & (comm.bytes == nbytes) & (comm.dtype == dtype)]
        if len(same):
            bench_ms, comm_ms = rows.time_s.median() * 1e3, float(same.measured_median_s.iloc[0]) * 1e3
            figures.append(Figure("fidelity", f"{where} {op} {dtype} {nbytes} B", "bench/comm",
                                  bench_ms / comm_ms - 1, f"bench median {bench_ms:.3g} ms over {len(rows)} calls, "
                                  f"comm median {comm_ms:.3g} ms over {int(same.iterations.iloc[0])}"))
    return figures


def print_fidelity(figures: list[Figure]) -> None:
    from lionsim.perf.rows import by_case

    rows = by_case(figures)
    print("fidelity: comm per step past the warm-up: the model's mean / the measured mean - 1, and the share")
    print("of steps inside the model's p10-p90 band (in band; a calibrated band holds about 80%)")
    print(f"  {'run':<52} {'meas ms':>8} {'fit':>6} {'calib':>6} {'uncal':>6} | in band: {'fit':>5} {'calib':>5} "
          f"{'uncal':>5}")
    for case, r in rows.items():
        if "measured_ms" in r:
            errors = (r[f"{p} error"].value for p in PROFILES)
            inside = (r[f"{p} coverage"].value for p in PROFILES)
            print(f"  {case:<52} {r['measured_ms'].value:>8.2f} " + " ".join(f"{e:>+6.0%}" for e in errors)
                  + f" | {'':>8} " + " ".join(f"{c:>5.0%}" for c in inside))
    print("fidelity: each call in the bench vs the same call measured comm-style (medians)")
    for case, r in rows.items():
        if "bench/comm" in r:
            print(f"  {case:<52} {r['bench/comm'].value:>+6.0%}   {r['bench/comm'].how}")
