"""Docs blocks of docs/time-model.md's modelled figures beyond the estimate tables: how stragglers
dilute the 1-bit gain as workers grow (a `--sweep workers` under each `--compute-spread`), and
what `--replica-gpus` does to the optimizer's share of a step. Pure modelling (the Monte Carlo
spread is seeded), the same on any machine; run in this process each time they render."""

from __future__ import annotations

from lionsim.docgen.bench import wrap
from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.figures import command, frame, md, ms
from lionsim.docgen.run import estimate_frame

GAIN = ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--network", "100gbe", "--sweep",
        "workers=8,32,128,512,1024", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"]
SPREADS = ((), ("lognormal:0.1",), ("lognormal:0.3",), ("episodes:0.001:3:100",),
           ("lognormal:0.1", "episodes:0.001:3:100"))
"""Each row's --compute-spread specs (several: a Monte Carlo of their product)."""


def gains(spreads: tuple[str, ...]) -> tuple[str, dict[int, float]]:
    """(how the spread was computed, {workers: dlion-mavo@a2a-1bit's speedup}) under `spreads`."""
    args = [*GAIN, *(a for spec in spreads for a in ("--compute-spread", spec))]
    f = estimate_frame(args, csv="sweep.csv")[1]
    f = f[f["baseline"] != f["strategy"] + "@" + f["transport"]]  # the 1-bit run, not its baseline
    method = "" if not spreads else str(f["spread_method"].iloc[0])
    return method.split(" (")[0].replace("monte carlo", "Monte Carlo"), dict(zip(f["workers"], f["speedup"]))


def straggler_gain() -> str:
    """The table of the 1-bit gain per worker count under each spread, then what 30% jitter does to
    the largest count."""
    rows, by = [], {}
    for spreads in SPREADS:
        method, gain = gains(spreads)
        by[spreads] = gain
        label = " and ".join(f"`{s}`" for s in spreads) or "none"
        rows.append([label, method, *(f"{v:.2f}x" for v in gain.values())])
    counts = list(by[()])
    most, even, jitter = counts[-1], by[()][counts[-1]], by[("lognormal:0.3",)][counts[-1]]
    shown = [*GAIN, "--compute-spread", "lognormal:0.3", "--out", "reports/stragglers-estimate"]
    return ("\n" + command(shown) + "\n" + md(["`--compute-spread`", "method", *map(str, counts)], rows) + "\n"
            + wrap("When stragglers dominate, the 1-bit gain shrinks with N: the expected slowest of N grows "
                   "(about sqrt(2 ln N) sigmas for jitter; for episodes, the chance that some worker is in one), "
                   "and the wait is the same for both strategies, so it dilutes what communication saves: "
                   f"{even:.1f}x at {most} even workers falls to {jitter:.1f}x with 30% jitter (modelled, the same "
                   "on any machine; the Monte Carlo is seeded).") + "\n\n")


def replica_update() -> str:
    """A 1B model's AdamW update on one H100 against a replica of 52 (the Streaming DiLoCo case)."""
    from lionsim.published.local import DATA_PARALLEL, REPLICA_GPUS, STREAMING_MODELS

    model = STREAMING_MODELS[0]
    args = [*model.args()[1:], *DATA_PARALLEL.for_model(model)]  # the case's own command
    at = args.index("--replica-gpus") + 1
    one = frame([*args[:at], "1", *args[at + 1:]]).iloc[0]
    many = frame(args).iloc[0]
    return ("\n" + command(args) + "\n" + wrap(
        f"In its `update_s` (estimate.csv, `--out DIR`), on one H100 (`--replica-gpus 1`) a "
        f"{model.name} model's AdamW update takes {ms(one.update_s)} ms, {one.update_s / model.step_s:.0%} of a "
        f"{model.step_s:g} s step's compute; on a replica of {REPLICA_GPUS} it takes {ms(many.update_s)} ms, which "
        "is what the papers' compute model (no optimizer time) assumes (modelled, the same on any machine).")
        + "\n\n")


BLOCKS.add("straggler-gain", Block("straggler-gain", straggler_gain))
BLOCKS.add("replica-update", Block("replica-update", replica_update))
