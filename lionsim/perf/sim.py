"""The simulator's whole step against N x one worker's forward + backward.

    one worker  lionsim.training.compute_figure.measure_compute at N = 1 (3 passes dropped, median of
                10): the forward + backward a single worker needs
    step        wall time between consecutive steps of lionsim.training.loop.train_run at N
                workers (batches, per-worker gradients, losses, encode, vote, update: all of
                it), median over the steps after the first two; the last step (which
                evaluates) is not counted
    ratio       step / (N x one worker): 1.0 means the simulator adds nothing to the workers'
                own compute

Each point runs in a fresh process (peak RSS is its own), on one thread as `lionsim bench` trains.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time

from lionsim.perf.rows import Figure, by_case

WARM_STEPS = 2
"""Steps run and not counted (allocator, first-use kernels)."""


def sim_point(workload: str, size: str, workers: int, steps: int, strategy: str, method: str) -> dict:
    """One (workload, N) point, in this process."""
    from lionsim.backends import SimComm
    from lionsim.runs import parse_runs
    from lionsim.simulator import gradient_method
    from lionsim.strategies import StrategyConfig
    from lionsim.training.compute_figure import measure_compute
    from lionsim.training.loop import Place, train_run
    from lionsim.training.threads import torch_threads
    from lionsim.workloads import WorkloadConfig, build_workload

    with torch_threads(1):  # one thread per worker process, the caller's count restored after
        wl = build_workload(WorkloadConfig(name=workload, workers=workers, size=size))
        if method != "default":
            wl.gradients = method
        place = Place(SimComm(workers))
        compute = measure_compute(wl, place)  # per worker
        initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
        stamps = []
        train_run(parse_runs([strategy])[0], workload=wl, initial=initial, place=place,
                  strategy_cfg=StrategyConfig(), steps=steps, eval_every=steps,
                  on_step=lambda run, step, loss: stamps.append(time.perf_counter()))
        per_step = [b - a for a, b in zip(stamps, stamps[1:])][WARM_STEPS - 1 : -1]  # drop warm-up and the evaluating step
        return {"workers": workers, "params": wl.params, "gradients": gradient_method(wl.gradients, workers),
                "compute_per_worker_s": compute.seconds, "step_s": statistics.median(per_step),
                "steps_counted": len(per_step),
                "peak_rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def bench_sim(workload: str, size: str, counts: list[int], steps: int, strategy: str,
              method: str = "default") -> list[Figure]:
    one = _point(workload, size, 1, steps, strategy, "loop")["compute_per_worker_s"]
    figures = []
    for n in counts:
        r = _point(workload, size, n, steps, strategy, method)
        how = (f"{strategy}, {r['gradients']} gradients, {r['params']} params; step: median of "
               f"{r['steps_counted']} steps after {WARM_STEPS} dropped; one worker: median of 10 passes at N = 1")
        case = f"{workload}/{size} N={n}"
        figures += [Figure("sim", case, "step_s", r["step_s"], how),
                    Figure("sim", case, "one_worker_s", one, how),
                    Figure("sim", case, "step_over_N_x_one", r["step_s"] / (n * one), how),
                    Figure("sim", case, "peak_rss_MB", r["peak_rss_MB"], how)]
    return figures


def _point(workload, size, n, steps, strategy, method) -> dict:
    out = subprocess.run([sys.executable, "-m", "lionsim.perf", "_sim_point", workload, size, str(n),
                          str(steps), strategy, method], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"simulator point {workload} N={n} failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_sim(figures: list[Figure]) -> None:
    rows = by_case(figures)
    print("simulator step against N x one worker's forward+backward (one thread):")
    print(f"  {'case':<18} {'step ms':>9} {'one worker ms':>14} {'step / (N x one)':>17} {'peak RSS MB':>12}  how")
    for case, r in rows.items():
        print(f"  {case:<18} {r['step_s'].value * 1e3:>9.2f} {r['one_worker_s'].value * 1e3:>14.3f} "
              f"{r['step_over_N_x_one'].value:>17.2f} {r['peak_rss_MB'].value:>12.0f}  {r['step_s'].how.split(';')[0]}")
