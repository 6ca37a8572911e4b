"""Docs blocks of `lionsim estimate` figures that pages quote in their own tables and sentences
(docs/clusters.md, docs/plugins.md, docs/methods-2025-a.md, docs/time-model.md), and the counts beside
them (a preset's parameters and FLOPs, a strategy's update FLOPs): each block shows
its command, then the figures read from the estimate.csv that command writes, so a page's prose
cannot drift from what the command prints. Pure modelling, the same on any machine; run in this
process (lionsim.docgen.run) each time they render."""

from __future__ import annotations

import shlex

import pandas as pd

from lionsim.docgen.bench import wrap
from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.run import estimate_frame


def command(args: list[str]) -> str:
    """The command as a bash block, one line (the page's readers copy it whole)."""
    return "```bash\nlionsim estimate " + " ".join(shlex.quote(a) for a in args) + "\n```\n"


def frame(args: list[str]) -> pd.DataFrame:
    """estimate.csv of `lionsim estimate ARGS`, indexed by run (strategy@transport)."""
    got = estimate_frame(args)[1]
    return got.set_index(got["strategy"] + "@" + got["transport"])


def ms(seconds: float) -> str:
    """Milliseconds as the pages write them: whole above 100, three figures below."""
    v = seconds * 1e3
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.3g} B"


def md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


# --- docs/clusters.md ---

NCCL_CASE = ["--params", "3.4e8", "--tokens-per-worker", "2048", "--workers", "{workers}", "--network",
             "h100x8-10gbe", "-s", "adamw@bf16-allreduce"]
NCCL_PLANS = (("NCCL's choice (the default): a tree on 2 nodes", []),
              ("`--algorithm ring`: a flat ring over 16 GPUs", ["--algorithm", "ring"]),
              ("`--traits ideal`: the hierarchical plan", ["--traits", "ideal"]))


def nccl_choice() -> str:
    """One bf16 all-reduce of 340M parameters on 2 nodes of 8 H100 under each plan, then NCCL's ring
    against the hierarchical plan at 4 and 16 nodes."""
    rows, cmds = [], []
    for label, extra in NCCL_PLANS:
        args = [*_nccl_case(16), *extra]
        r = frame(args).iloc[0]
        cmds.append(command(args).strip("`\n").removeprefix("bash\n"))
        rows.append([label, f"{ms(r.comm_s)} ms", f"{ms(r.step_s)} ms"])
    ring, ideal = ([frame([*_nccl_case(8 * m), *extra]).iloc[0].comm_s for m in (4, 16)]
                   for extra in ([], ["--traits", "ideal"]))
    return ("\n```bash\n" + "\n".join(cmds) + "\n```\n\n" + md(["what runs", "comm per step", "step"], rows)
            + "\n" + wrap(f"At 4 and 16 nodes NCCL runs the ring: {ms(ring[0])} ms and {ms(ring[1])} ms against the "
                           f"hierarchical plan's {ms(ideal[0])} ms and {ms(ideal[1])} ms.") + "\n\n")


def _nccl_case(workers: int) -> list[str]:
    return [a.format(workers=workers) for a in NCCL_CASE]


HIER = ["--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe", "-s", "adamw@bf16-allreduce",
        "-s", "adamw@fp8-allreduce", "-s", "adamw@hier:fp8-allreduce", "-s", "dlion-mavo@a2a-1bit", "-s",
        "dlion-mavo@hier:a2a-1bit"]


def hier_bytes() -> str:
    """Bytes inside and across nodes, flat and node by node."""
    f = frame(HIER)
    rows = [[f"`{run}`", size(r.wire_bytes), size(r.inter_bytes), f"{ms(r.comm_s)} ms", f"{ms(r.step_s)} ms"]
            for run, r in f.iterrows()]
    flat, hier, bf16 = (f.loc[k, "step_s"] for k in ("adamw@fp8-allreduce", "adamw@hier:fp8-allreduce",
                                                       "adamw@bf16-allreduce"))
    than = (f"faster than bf16's ({ms(bf16)} ms)" if hier < bf16 else f"still slower than bf16's ({ms(bf16)} ms)")
    return ("\n" + command(HIER) + "\n" + md(["run", "sent per GPU", "across per node", "comm", "step"], rows)
            + "\n" + wrap(f"A hier: run sends more per GPU (the fp32 reduce-scatter and gather over NVLink, "
                           f"milliseconds at its bandwidth) and far less across nodes: the fp8 all-reduce's step is "
                           f"{flat / hier:.1f}x shorter node by node ({ms(hier)} ms against {ms(flat)} ms), {than}.")
            + "\n\n")


UPDATE = ["--params", "3e9", "--tokens-per-worker", "1024", "--device", "h100", "-s", "adamw"]


def adamw_update() -> str:
    r = frame(UPDATE).iloc[0]
    return "\n" + wrap(f"So on 3B parameters on an H100 an AdamW step is {ms(r.update_s)} ms (the `update_s` column "
                       f"of `lionsim estimate {' '.join(UPDATE)} --out DIR`), at least one kernel's floor (10 us of "
                       "eager dispatch).") + "\n\n"


WHOLE_RUN = ["--model", "gpt2-1.3b", "--workers", "64", "--network", "h100x8-100gbe", "-s", "adamw@bf16-allreduce",
             "-s", "onebit-adam", "-s", "dlion-mavo", "--freeze-steps", "2000", "--momentum-sync", "every:100",
             "--steps", "20000"]


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def whole_run() -> str:
    f = frame(WHOLE_RUN)
    rows = [[run, _clock(r.run_s), f"{ms(r.mean_step_s)} ms", f"{ms(r.step_s)} ms", f"{r.run_speedup:.2f}x",
             r.run_phases] for run, r in f.iterrows()]
    base, onebit = f.iloc[0], f.loc["onebit-adam@compressed-allreduce"]
    return ("\n" + command(WHOLE_RUN) + "\nprints, after the step table:\n\n"
            + md(["run", "time", "mean step", "steady step", "speedup", "phases"], rows)
            + "\n" + wrap(f"1-bit Adam's steady step is {base.step_s / onebit.step_s:.1f}x faster than AdamW's, "
                           f"its run {onebit.run_speedup:.2f}x: a tenth of the run at full precision costs that "
                           "much.") + "\n\n")


# --- docs/plugins.md ---

RESNET_PUBLISHED = {
    "resnet18": 'torchvision: 11,689,512 params, 1.81 "GFLOPS" (multiply-adds); He et al. 2016, Table 1: 1.8 x 10^9',
    "resnet50": 'torchvision: 25,557,032 params, 4.09 "GFLOPS" (multiply-adds); He et al. Table 1 gives 3.8 x 10^9 '
                "for the v1 layout, which strides in the 1x1 convolution",
}
"""What torchvision's model cards and the ResNet paper print for each preset."""


def resnet_counts() -> str:
    """Each CNN preset's parameters and forward multiply-adds as lionsim counts them on the meta
    device (lionsim.compute.counted), beside the published figures, and backward over forward."""
    from lionsim.compute.models import MODELS

    rows, ratios = [], []
    for name, published in RESNET_PUBLISHED.items():
        count = MODELS.get(name).count
        rows.append([name, f"{count.params:,}", f"{count.forward_flops / 2 / count.samples / 1e9:.3f} G", published])
        ratios.append(f"{count.backward_flops / count.forward_flops:.2f}x ({name})")
    return ("\n" + md(["preset", "parameters", "forward multiply-adds per image", "published"], rows) + "\n"
            + wrap("lionsim's FLOPs are twice these (one multiply-add is 2 FLOPs); backward counts "
                   f"{' and '.join(ratios)} the forward, as the stem has no input gradient (counted on the meta "
                   "device, the same on any machine).") + "\n\n")


RESNET50 = ["--model", "resnet50", "--tokens-per-worker", "32", "--workers", "16", "--network", "10gbe",
            "--strategy", "sgdm,powersgd,dgc,dlion-mavo"]


def resnet50() -> str:
    f = frame(RESNET50)
    by = {r.strategy: r for _, r in f.iterrows()}
    part = lambda name, label: f"{ms(by[name].step_s)} ms for {label} ({size(by[name].wire_bytes)})"  # noqa: E731
    computes = sorted({ms(r.compute_s) for r in by.values()})
    compute = (f"compute is {computes[0]} ms in every row" if len(computes) == 1
               else f"compute is {', '.join(computes)} ms")
    return ("\n" + command(RESNET50) + "\n" + wrap(
        "Modelled (an H100 at mfu 0.4, 10 GbE, 16 workers, 32 images each; codecs priced by the default kernel "
        f"table), the same on any machine: a step of {part('sgdm', 'sgdm')}, {part('powersgd', 'PowerSGD at rank 4')}, "
        f"{part('dgc', 'DGC at 1%')} and {part('dlion-mavo', 'dlion-mavo')} (bytes sent per worker); {compute}.")
        + "\n\n")


# --- docs/methods-2025-a.md ---

METHODS_7B = ["--model", "llama-7b", "-s", "adamw", "-s", "muon", "-s", "muon-dist", "-s", "dion", "-s", "diloco",
              "-s", "muloco"]
BATCH_7B = ["--model", "llama-7b", "--network", "h100x8-10gbe", "--tokens-per-worker", "524288", "-s", "adamw", "-s",
            "muon", "-s", "muon-dist", "-s", "dion", "-s", "muloco"]


def methods_7b(network: str) -> str:
    args = [*METHODS_7B[:2], "--network", network, *METHODS_7B[2:]]
    f = frame(args)
    rows = [[run, ms(r.compute_s), ms(r.encode_s + r.decode_s + r.update_s), ms(r.comm_s), ms(r.comm_exposed_s),
             ms(r.step_s), size(r.wire_bytes), f"{r.speedup:.2f}x"] for run, r in f.iterrows()]
    return "\n" + command(args) + "\n" + md(["run", "compute ms", "encode + decode + update ms", "comm ms",
                                             "exposed ms", "step ms", "sent per step", "speedup"], rows) + "\n"


def methods_7b_batch() -> str:
    """The realistic batch's steps, and on 1 GbE what the bytes decide."""
    f = frame(BATCH_7B)
    step = {r.strategy: r for _, r in f.iterrows()}
    s = lambda name: f"{step[name].step_s:.1f} s ({name}, {step[name].speedup:.2f}x)"  # noqa: E731
    slow = frame([*METHODS_7B[:2], "--network", "1gbe", *METHODS_7B[2:]])
    by = {r.strategy: r for _, r in slow.iterrows()}
    share = lambda name: by[name].wire_bytes / by["adamw"].wire_bytes  # noqa: E731
    return ("\n" + command(BATCH_7B) + "\n" + wrap(
            f"gives steps of {', '.join(s(n) for n in step)}. On 1 GbE (the second "
            f"table) the bytes decide: dion sends {share('dion'):.0%} of AdamW's and is {by['dion'].speedup:.2f}x "
            f"as fast; muloco at H = 30 sends {share('muloco'):.2%} and is {by['muloco'].speedup:.1f}x as "
            "fast.") + "\n\n")


def newton_schulz() -> str:
    """Muon's Newton-Schulz FLOPs a step for LLaMA-7B (Strategy.update_flops, as estimate prices
    them), their time at 40% of an H100, and muon-dist's busiest worker's share."""
    from lionsim.compute.devices import DEVICES
    from lionsim.compute.flops import compute_time
    from lionsim.compute.models import MODELS
    from lionsim.estimate.probe import probe
    from lionsim.runs import parse_runs

    model, workers = MODELS.get("llama-7b"), 8
    muon, dist = (probe(run, params=model.params, tensors=model.tensors, workers=workers,
                        shapes=model.tensor_shapes).update_flops for run in parse_runs(["muon", "muon-dist"]))
    return ("\n" + wrap("The \"encode + decode + update\" of muon, muon-dist, dion and muloco holds their matrix "
                        "FLOPs (`Strategy.update_flops`): Muon's Newton-Schulz, 20 m^2 n + 10 m^3 per m x n matrix "
                        f"(m <= n), {f'{muon:.2g}'.replace('e+', 'e')} FLOPs a step for LLaMA-7B, "
                        f"{compute_time(muon, DEVICES.get('h100'), 0.4):.2g} s at 40% of an H100; muon-dist's "
                        f"busiest worker does {dist / muon:.0%} of it ({workers} workers; the matrices are dealt "
                        "whole, so not quite an eighth); muloco runs it at every inner step. At one sample per "
                        "worker that dwarfs forward and backward; at a realistic batch it does not:") + "\n\n")


# --- docs/time-model.md ---

LIONCUB = ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--device", "h100", "-s",
           "lion@fp32-allreduce", "-s", "dlion-mavo@a2a-1bit"]


def lioncub_ratio() -> str:
    node, flat = (frame([*LIONCUB, "--network", net]).loc["dlion-mavo@a2a-1bit", "speedup"]
                  for net in ("h100x8-10gbe", "10gbe"))
    return "\n" + wrap(f"The model predicts {node:.2f}x per step (Lion Cub claims \"up to 5x\" end to end), and "
                       f"{flat:.1f}x with one 10 GbE link per GPU (`--network 10gbe`).") + "\n\n"


BLOCKS.add("nccl-choice", Block("nccl-choice", nccl_choice))
BLOCKS.add("hier-bytes", Block("hier-bytes", hier_bytes))
BLOCKS.add("adamw-update", Block("adamw-update", adamw_update))
BLOCKS.add("whole-run", Block("whole-run", whole_run))
BLOCKS.add("resnet50-estimate", Block("resnet50-estimate", resnet50))
BLOCKS.add("methods-7b-h100", Block("methods-7b-h100", lambda: methods_7b("h100x8-10gbe")))
BLOCKS.add("methods-7b-1gbe", Block("methods-7b-1gbe", lambda: methods_7b("1gbe")))
BLOCKS.add("methods-7b-batch", Block("methods-7b-batch", methods_7b_batch))
BLOCKS.add("resnet-counts", Block("resnet-counts", resnet_counts))
BLOCKS.add("newton-schulz", Block("newton-schulz", newton_schulz))
BLOCKS.add("lioncub-ratio", Block("lioncub-ratio", lioncub_ratio))
