"""Muon's Newton-Schulz, timed against what `estimate` prices for it.

`estimate` prices Muon's orthogonalisation (Strategy.update_flops: 4 m^2 n + 2 m^3 an iteration,
m <= n, per matrix) at the device's bf16 peak x mfu, the FLOPs alone. This benchmark runs lionsim's
newton_schulz (bf16, 5 iterations, muon.py's) on each distinct hidden matrix shape of a model preset (not
its embeddings or head, as `estimate` counts them), on this CPU or the visible GPU, and prints per shape and in
all the measured seconds, the rate reached (TFLOP/s and its share of the bf16 peak) and the model's
seconds (the FLOPs alone, and at least 44 launches a matrix as estimate prices them). Each shape is timed as a step runs it: its matrices one after another (at most BATCH_CAP
of them), one wait at the end, so a GPU's launches overlap the previous matrix's kernels as they do in
training; median of `repeats` after one dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from lionsim.perf.rows import Figure, by_case, median_seconds

NS_STEPS = 5
"""muon.py's iterations (Muon's default --muon-ns-steps)."""
BATCH_CAP = 16
"""Most matrices of one shape run back to back per timed call (a 7B model has 128 of [4096, 4096]:
16 show the steady rate without holding 128 inputs)."""
GPU_MODELS = ("gpt2-124m", "gpt2-1.3b", "llama-7b")
CPU_MODELS = ("gpt2-124m",)


def shape_counts(shapes: list[tuple[int, ...]], names: list[str] | None = None) -> Counter:
    """How many hidden matrices of each shape (the ones estimate prices: by `names` where given, else
    every 2+-dim tensor; lionsim.strategies.muon.hidden_shapes)."""
    from lionsim.strategies.muon import hidden_shapes

    return Counter(tuple(s) for s in hidden_shapes(shapes, names))


def time_shape(shape: tuple[int, ...], count: int, device: str, repeats: int,
               sync: Callable[[], None] | None) -> float:
    """Median seconds of one matrix of `shape` (random float32 momentum, orthogonalised in bf16), from
    min(count, BATCH_CAP) run back to back and waited for once."""
    import torch

    from lionsim.strategies.muon import newton_schulz

    batch = min(count, BATCH_CAP)
    generator = torch.Generator(device=device).manual_seed(0)
    inputs = [torch.randn(shape, generator=generator, device=device) for _ in range(batch)]

    def step():
        for x in inputs:
            newton_schulz(x, NS_STEPS, torch.bfloat16)
        if sync is not None:
            sync()

    seconds, _ = median_seconds(step, repeats)
    return seconds / batch


def bench_newton_schulz(models: list[str], repeats: int = 5, device: str = "cpu") -> list[Figure]:
    """Per model and distinct shape: measured and modelled seconds a step, FLOPs, the rate reached."""
    from lionsim.compute import DEVICES, MODELS
    from lionsim.compute.flops import compute_time
    from lionsim.perf.kernels import timed_on
    from lionsim.strategies.muon import newton_schulz_flops, newton_schulz_launches

    name, machine, sync = timed_on(device)
    preset = DEVICES.get(name) if name != "cpu" else None
    how = (f"median of {repeats} after 1 dropped, up to {BATCH_CAP} matrices of a shape back to back, "
           f"{'each call to its torch.cuda.synchronize()' if sync else 'machine as loaded at the time'}; {machine}")
    figures = []
    for model in models:
        shape = MODELS.get(model)
        counts = shape_counts(shape.tensor_shapes, getattr(shape, "tensor_names", None))
        total_s = total_flops = 0.0
        launches = newton_schulz_launches(NS_STEPS)
        for shape, count in counts.items():
            flops = newton_schulz_flops(shape, NS_STEPS)
            seconds = time_shape(shape, count, device, repeats, sync)
            case = f"{model} {'x'.join(map(str, shape))} (x{count}), one"
            figures += [Figure("newton-schulz", case, "seconds", seconds, how),
                        Figure("newton-schulz", case, "TFLOPs", flops * 1e-12 / seconds, how)]
            if preset is not None:
                figures.append(Figure("newton-schulz", case, "modelled_seconds",
                                      max(compute_time(flops, preset), launches * preset.kernel_s), priced(preset)))
            total_s += count * seconds
            total_flops += count * flops
        case = f"{model} step, all {sum(counts.values())}"
        figures += [Figure("newton-schulz", case, "seconds", total_s, how),
                    Figure("newton-schulz", case, "TFLOPs", total_flops * 1e-12 / total_s, how)]
        if preset is not None:
            matrices = sum(counts.values())
            figures += [Figure("newton-schulz", case, "modelled_seconds",
                               max(compute_time(total_flops, preset), matrices * launches * preset.kernel_s),
                               priced(preset)),
                        Figure("newton-schulz", case, "flops_seconds", compute_time(total_flops, preset),
                               f"FLOPs / ({name} bf16 peak x mfu {preset.mfu:g})"),
                        Figure("newton-schulz", case, "share_of_peak", total_flops / total_s / preset.peak_flops,
                               f"measured rate over {name}'s bf16 peak ({preset.peak_flops / 1e12:g} TFLOP/s)")]
    return figures


def priced(preset) -> str:
    from lionsim.strategies.muon import newton_schulz_launches

    return (f"as estimate prices it: FLOPs / ({preset.name} bf16 peak x mfu {preset.mfu:g}), at least "
            f"{newton_schulz_launches(NS_STEPS)} kernels a matrix x {preset.kernel_s * 1e6:g} us")


def print_newton_schulz(figures: list[Figure]) -> None:
    print(f"Muon's Newton-Schulz ({NS_STEPS} iterations, bf16), ms a matrix, and a step's ({figures[0].how}):")
    print(f"  {'case':<34} {'measured ms':>12} {'TFLOP/s':>9} {'modelled ms':>12} {'measured/modelled':>18}")
    for case, r in by_case(figures).items():
        measured = r["seconds"].value
        modelled = r.get("modelled_seconds")
        tail = (f"{1e3 * modelled.value:>12.3f} {measured / modelled.value:>18.2f}" if modelled
                else f"{'-':>12} {'-':>18}")
        print(f"  {case:<34} {1e3 * measured:>12.3f} {r['TFLOPs'].value:>9.2f} {tail}")
