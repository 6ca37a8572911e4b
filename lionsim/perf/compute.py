"""One worker's forward + backward timed on this CPU or the visible GPU, beside what `bench --compute
DEVICE` books for it.

bench trains in float32 (exact arithmetic, the same on every backend) and books a modelled step
as a GPU runs one of mixed-precision training: its FLOPs at the device's bf16 peak x mfu, at least
its kernels x the device's per-kernel floor (lionsim.steptime.work). This benchmark times the same
pass three ways on the device (float32 as bench runs it; TF32 matrix products; bf16 autocast, as
large models train) and prints each beside that model and beside the float32 figure priced at
the device's float32 peak x mfu: whether the model describes a GPU's step, and which dtype it
describes. Median of `repeats` passes after WARMUP dropped, each to its synchronize on a GPU.
"""

from __future__ import annotations

from contextlib import contextmanager

from lionsim.perf.rows import Figure, by_case, median_seconds

WARMUP = 3
MODES = ("float32", "tf32", "bf16-autocast")
GPU_CASES = (("gpt", "paper", 64), ("vit", "paper", 128))
"""(workload, size, samples) on a GPU: nanoGPT's shakespeare-char shape at its batch (64 x 256
tokens), the paper-size ViT at 128 images."""
CPU_CASES = (("gpt", "small", 8), ("vit", "small", 32))
"""On a CPU: the bench's own sizes (a paper-size pass takes seconds on 2 cores)."""
PRESETS = (("gpt2-124m", 8), ("gpt2-345m", 8))
"""(model preset, samples of its seq_len tokens) timed on a GPU beside `estimate`'s compute_s for that
many tokens: lionsim's GPT module at the preset's widths (untied head, learned positions, torch's
scaled_dot_product_attention), random tokens, bf16 autocast."""


@contextmanager
def _mode(mode: str, device: str):
    import torch

    if mode == "bf16-autocast":
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            yield
        return
    previous = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = mode == "tf32"
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous


def modelled(flops: float, kernels: int, preset) -> tuple[float, float]:
    """(bench's modelled seconds: FLOPs at the bf16 peak x mfu, the float32 price: at the float32
    peak x mfu), each at least kernels x the device's kernel_s."""
    from lionsim.compute.flops import compute_time

    floor = kernels * preset.kernel_s
    return max(compute_time(flops, preset), floor), max(flops / (preset.flops_for("float32") * preset.mfu), floor)


def bench_compute(repeats: int = 10, device: str = "cpu", cases=None) -> list[Figure]:
    """Per case and mode the measured seconds of one forward + backward; per case the FLOPs and
    kernels counted and, on a GPU with a preset, bench's modelled seconds and the float32 price."""
    import torch

    from lionsim.compute import DEVICES
    from lionsim.perf.kernels import timed_on
    from lionsim.training.counting import count_gradient
    from lionsim.workloads import WorkloadConfig
    from lionsim.workloads.lookup import build_workload

    name, machine, sync = timed_on(device)
    preset = DEVICES.get(name) if name != "cpu" else None
    cases = cases or (GPU_CASES if device == "cuda" else CPU_CASES)
    modes = MODES if device == "cuda" else ("float32", "bf16-autocast")  # TF32 is a GPU's
    how = f"median of {repeats} passes after {WARMUP} dropped" + (", each to its synchronize" if sync else "")
    figures = []
    for workload_name, size, samples in cases:
        workload = build_workload(WorkloadConfig(name=workload_name, size=size, workers=1, batch_size=samples))
        model = workload.model.to(device)
        inputs, targets = workload.batches(0, range(1), torch.device(device))[0]

        def step():
            workload.loss(model, inputs, targets).backward()
            if sync is not None:
                sync()

        case = f"{workload_name} {size} x{samples}"
        flops, kernels = count_gradient(lambda: workload.loss(model, inputs, targets).backward())
        figures += [Figure("compute", case, "TFLOP", flops * 1e-12, "counted: torch.utils.flop_counter"),
                    Figure("compute", case, "kernels", kernels, "counted: lionsim.training.counting")]
        for mode in modes:
            with _mode(mode, device):
                seconds, _ = median_seconds(step, repeats, WARMUP)
            figures.append(Figure("compute", case, f"{mode}_seconds", seconds, f"{how}; {machine}"))
        model.zero_grad(set_to_none=True)
        if preset is not None:
            bf16, fp32 = modelled(flops, kernels, preset)
            figures += [Figure("compute", case, "modelled_seconds", bf16,
                               f"bench --compute {name}: FLOPs / (bf16 peak x mfu {preset.mfu:g}), at least "
                               f"kernels x {preset.kernel_s * 1e6:g} us"),
                        Figure("compute", case, "float32_priced_seconds", fp32,
                               f"FLOPs / (float32 peak x mfu {preset.mfu:g}), at least the kernels' floor")]
    if preset is not None:
        figures += _presets(device, preset, sync, repeats, how, machine)
    return figures


def _presets(device: str, preset, sync, repeats: int, how: str, machine: str) -> list[Figure]:
    """PRESETS' forward + backward in bf16 autocast, beside estimate's compute_s on `preset`."""
    import torch

    from lionsim.compute import MODELS
    from lionsim.estimate import EstimateConfig, estimate
    from lionsim.workloads.models.gpt import GPT, GPTConfig

    figures = []
    for name, samples in PRESETS:
        shape = MODELS.get(name)
        model = GPT(GPTConfig(vocab=shape.vocab_size, context=shape.seq_len, dim=shape.d_model, depth=shape.n_layer,
                              heads=shape.n_head)).to(device)
        tokens = torch.randint(0, shape.vocab_size, (samples, shape.seq_len + 1), device=device)

        def step():
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                logits = model(tokens[:, :-1])
            torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten()).backward()
            if sync is not None:
                sync()

        seconds, _ = median_seconds(step, repeats, WARMUP)
        frame = estimate(EstimateConfig(model=name, strategies=["adamw"], workers=2, network="10gbe",
                                        device=preset.name, tokens_per_worker=samples * shape.seq_len))
        case = f"{name} x{samples}"
        figures += [Figure("compute", case, "bf16-autocast_seconds", seconds, f"{how}; {machine}"),
                    Figure("compute", case, "estimate_seconds", float(frame.compute_s.iloc[0]),
                           f"lionsim estimate -m {name} --device {preset.name} --tokens-per-worker "
                           f"{samples * shape.seq_len}: compute_s")]
    return figures


def print_compute(figures: list[Figure]) -> None:
    print("one worker's forward + backward, ms (measured per mode; modelled as bench --compute DEVICE books it):")
    for case, r in by_case(figures).items():
        measured = "  ".join(f"{m.removesuffix('_seconds')} {1e3 * f.value:.2f}" for m, f in r.items()
                             if m.endswith("_seconds") and m not in ("modelled_seconds", "float32_priced_seconds"))
        if "estimate_seconds" in r:
            print(f"  {case:<16} measured: bf16-autocast {1e3 * r['bf16-autocast_seconds'].value:.2f}   "
                  f"estimate's compute_s: {1e3 * r['estimate_seconds'].value:.2f}")
            continue
        line = f"  {case:<16} {1e3 * r['TFLOP'].value:8.4g} GFLOP {int(r['kernels'].value):4d} kernels   measured: {measured}"
        if "modelled_seconds" in r:
            line += (f"   modelled (bf16): {1e3 * r['modelled_seconds'].value:.2f}"
                     f"   float32 priced: {1e3 * r['float32_priced_seconds'].value:.2f}")
        print(line)
