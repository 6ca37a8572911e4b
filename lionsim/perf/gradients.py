"""Per-worker gradients by each method the simulator has (lionsim.simulator.GRADIENT_METHODS),
median of `repeats` passes after one dropped, answers compared (the workload's default is the
one `lionsim bench` uses: see Workload.gradients)."""

from __future__ import annotations

import warnings

from lionsim.perf.rows import Figure, by_case, median_seconds


def bench_gradients(workloads: list[str], size: str, counts: list[int], repeats: int = 5) -> list[Figure]:
    import torch

    from lionsim.simulator import GRADIENT_METHODS, gradient_method
    from lionsim.training.threads import torch_threads
    from lionsim.workloads import WorkloadConfig, build_workload

    figures = []
    with torch_threads(1):
        for name in workloads:
            for n in counts:
                wl = build_workload(WorkloadConfig(name=name, workers=n, size=size))
                batches = wl.batches(0)
                results, times = {}, {}
                for method, gradients in GRADIENT_METHODS.items():
                    out = torch.zeros(n, wl.params)
                    with warnings.catch_warnings():  # vmap's "no batching rule" notice for attention: measured here
                        warnings.simplefilter("ignore", UserWarning)
                        times[method], _ = median_seconds(lambda: gradients(wl.model, wl.loss, batches, out), repeats)
                    results[method] = out
                loop = results["loop"]
                for method, out in results.items():  # every method against the plain loop
                    assert torch.allclose(out, loop, rtol=1e-4, atol=1e-6), f"{method} gradients disagree with the loop"
                how = f"median of {repeats} after 1 dropped; one thread; bench uses: {gradient_method(wl.gradients, n)}"
                for method, seconds in times.items():
                    figures.append(Figure("gradients", f"{name}/{size} N={n} {method}", "seconds", seconds, how))
                    figures.append(Figure("gradients", f"{name}/{size} N={n} {method}", "over_loop",
                                          seconds / times["loop"], how))
    return figures


def print_gradients(figures: list[Figure]) -> None:
    print("per-worker gradients, each method against the loop (median, one thread):")
    rows = by_case(figures)
    for case, r in rows.items():
        print(f"  {case:<26} {r['seconds'].value:8.4f} s   x loop {r['over_loop'].value:5.2f}   "
              f"({r['seconds'].how.split('; ')[-1]})")
