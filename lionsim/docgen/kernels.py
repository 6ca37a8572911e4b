"""Docs blocks of docs/time-model-kernels.md: the kernel table's GPU rows, each codec's declared
kernels, and the optimizer forms priced. Pure modelling and the shipped table: the same on any
machine, computed in-process each time they render."""

from __future__ import annotations

from lionsim.docgen.blocks import BLOCKS, Block

DEVICES = ("v100", "v100-tf1.15", "a10g", "a100-40gb", "a100-80gb", "h100", "h200", "rtx4090")
KERNELS = ("float-pass", "fused-optimizer", "topk")
CODEC_WORKERS = 8
"""N the codec table is priced at."""


def kernel_rows() -> str:
    """GB/s of the GPU rows, with the method of each (p: published, m: measured, d: derived)."""
    from lionsim.compute.kernel_table import default_table

    table = default_table()
    lines = ["| device | " + " | ".join(KERNELS) + " |", "|---" * (len(KERNELS) + 1) + "|"]
    for device in DEVICES:
        cells = []
        for kernel in KERNELS:
            row = table.row(device, kernel)
            cells.append(f"{row.GBps:,.0f} ({row.method[0]})")
        lines.append(f"| {device} | " + " | ".join(cells) + " |")
    return "\n" + "\n".join(lines) + "\n\n"


CODECS = (
    ("fp32-allreduce", "dense"), ("bf16-allreduce", "dense"), ("fp8-allreduce", "dense"), ("fp4-allreduce", "dense"),
    ("int8-allreduce", "votes"), ("pbit-allreduce", "votes"), ("allgather-1bit", "votes"), ("a2a-1bit", "votes"),
    ("param-server", "votes"), ("hier-exact", "votes"), ("packed-allreduce", "levels"),
    ("allgather-levels", "scaled-levels"), ("compressed-allreduce", "onebit"), ("sparse-allgather", "sparse"),
    ("lowrank-allreduce", "lowrank"),
)


def codec_passes() -> str:
    """Each codec's kernels at N = 8 (4 to a node for the hierarchical one): bytes per parameter
    (k = 1% of n for the sparse pairs; PowerSGD rank 4 on 1024 x 1024 matrices), launches, and the
    ideal fused passes."""
    from lionsim.aggregators import MajorityVote
    from lionsim.steptime.wire_passes import transport_bytes
    from lionsim.transports import PayloadSpec

    n = 2**30
    specs = {"dense": PayloadSpec(kind="dense", numel=n),
             "votes": PayloadSpec(kind="votes", numel=n, rule=MajorityVote()),
             "levels": PayloadSpec(kind="levels", numel=n, max_level=127 // CODEC_WORKERS),
             "scaled-levels": PayloadSpec(kind="scaled-levels", numel=n, max_level=7, segments=100),
             "onebit": PayloadSpec(kind="onebit", numel=n), "sparse": PayloadSpec(kind="sparse", numel=n, k=n // 100),
             "lowrank": PayloadSpec(kind="lowrank", numel=n, factors=(4 * n // 1024, 4 * n // 1024), columns=4 * 1024,
                                    matrices=1024)}
    lines = ["| codec | encode B/param (kernels) | decode B/param (kernels) | ideal encode, decode |",
             "|---|---|---|---|"]
    for name, kind in CODECS:
        spec = specs[kind]
        t = transport_bytes(name, spec, CODEC_WORKERS, 4)
        share = spec.k / n if kind == "sparse" else 0.0
        enc = sum(op.per_param(share) for op in t.pack_ops)
        dec = sum(op.per_param(share) for op in t.unpack_ops)
        launches = lambda ops: sum(op.launches for op in ops)  # noqa: E731
        lines.append(f"| {name} | {enc:.3g} ({launches(t.pack_ops)}) | {dec:.3g} ({launches(t.unpack_ops)}) | "
                     f"{t.pack:.3g}, {t.unpack:.3g} |")
    return "\n" + "\n".join(lines) + "\n\n"


def optimizer_forms() -> str:
    """Distributed Lion's timing case (3e9 parameters, 1,024 tokens, 64 A100 40GB on a100x8-4hdr, no
    overlap): AdamW and D-Lion per optimizer form, and the ideal passes."""
    from lionsim.estimate import EstimateConfig, estimate

    lines = ["| pricing | run | encode | decode | update | step | speedup |", "|---|---|---|---|---|---|---|"]
    for kernels, optimizer in (("table", "fused"), ("table", "foreach"), ("table", "eager"), ("ideal", "fused")):
        cfg = EstimateConfig(params=3 * 10**9, tokens_per_worker=1024, workers=64, network="a100x8-4hdr",
                             device="a100", overlap="none", kernels=kernels, optimizer=optimizer,
                             strategies=["adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"])
        label = "ideal passes" if kernels == "ideal" else f"table, {optimizer}"
        for r in estimate(cfg).to_dict("records"):
            ms = lambda c: f"{1000 * r[c]:.1f}"  # noqa: E731
            lines.append(f"| {label} | {r['strategy']}@{r['transport']} | {ms('encode_s')} | {ms('decode_s')} | "
                         f"{ms('update_s')} | {ms('step_s')} | {r['speedup']:.2f}x |")
    return "\n" + "\n".join(lines) + "\n\n"


def codecs_100gbe() -> str:
    """gpt2-345m (one sample), 16 V100 each behind its own 100 GbE link (the flat preset's ideal library):
    compressing strategies priced by their kernels (table) and by ideal fused passes."""
    from lionsim.estimate import EstimateConfig, estimate

    runs = ["adamw@fp32-allreduce", "onebit-adam@compressed-allreduce", "dgc@sparse-allgather",
            "powersgd@lowrank-allreduce", "adamw@fp8-allreduce", "dlion-mavo@a2a-1bit"]
    got = {}
    for kernels in ("ideal", "table"):
        cfg = EstimateConfig(model="gpt2-345m", workers=16, network="100gbe", device="v100", kernels=kernels,
                             strategies=runs)
        got[kernels] = {f"{r['strategy']}@{r['transport']}": r for r in estimate(cfg).to_dict("records")}
    lines = ["| run | exposed comm | local, ideal | local, table | step, ideal | step, table |",
             "|---|---|---|---|---|---|"]
    for run in runs:
        ideal, table = got["ideal"][run], got["table"][run]
        local = lambda r: 1000 * (r["encode_s"] + r["decode_s"] + r["update_s"])  # noqa: E731
        lines.append(f"| {run} | {1000 * table['comm_exposed_s']:.0f} | {local(ideal):.1f} | {local(table):.1f} | "
                     f"{1000 * ideal['step_s']:.0f} | {1000 * table['step_s']:.0f} |")
    return "\n" + "\n".join(lines) + "\n\n"


BLOCKS.add("kernel-rows", Block("kernel-rows", kernel_rows))
BLOCKS.add("codec-passes", Block("codec-passes", codec_passes))
BLOCKS.add("optimizer-forms", Block("optimizer-forms", optimizer_forms))
BLOCKS.add("codecs-100gbe", Block("codecs-100gbe", codecs_100gbe))
