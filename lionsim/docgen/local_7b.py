"""Docs blocks of docs/methods-2025-b.md's 7B estimates: SparseLoCo and Streaming DiLoCo beside
AdamW and DiLoCo on LLaMA-7B, on an H100 node network (16 workers) and on 1 GbE (8), at the
defaults and at the papers' round lengths. Pure modelling, the same on any machine; run in this
process each time they render."""

from __future__ import annotations

import csv
import io

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.figures import frame, md, ms
from lionsim.numbers import bytes_text
from lionsim.docgen.run import printed

NETWORKS = (("h100x8-10gbe, 16 workers", ["--workers", "16", "--network", "h100x8-10gbe"]),
            ("1gbe, 8 workers", ["--network", "1gbe"]))
DEFAULTS = ["-s", "adamw", "-s", "diloco", "-s", "sparseloco", "-s", "streaming-diloco", "-s",
            "streaming-diloco@fp8-allreduce", "--streaming-delay", "1"]
PAPERS = ["-s", "adamw", "-s", "diloco", "-s", "sparseloco", "-s", "streaming-diloco", "--opt",
          "diloco.local_steps=100", "--opt", "sparseloco.local_steps=30", "--opt", "streaming-diloco.local_steps=100",
          "--streaming-fragments", "4", "--streaming-delay", "5"]


def default_rounds() -> dict[str, str]:
    """{strategy: its default round, "H = 2"} as `lionsim strategies --matrix` lists it."""
    rows = csv.DictReader(io.StringIO("\n".join(printed(["strategies", "--matrix", "--format", "csv"]))))
    return {r["strategy"]: r["local_steps"] for r in rows if r["local_steps"] != "-"}


def given_rounds(args: list[str]) -> dict[str, str]:
    """{strategy: "H = K"} for every `--opt NAME.local_steps=K` in args."""
    opts = [args[i + 1] for i, a in enumerate(args) if a == "--opt"]
    return {o.split(".")[0]: "H = " + o.split("=")[1] for o in opts if ".local_steps=" in o}


def speedup(v: float) -> str:
    return f"{v:.2f}x" if v < 10 else f"{v:.1f}x"


def table(runs: list[str], rounds: dict[str, str]) -> str:
    """Both networks' commands, then one row per run: comm, exposed and step (ms, the mean step of a
    round), bytes sent and speedup on each."""
    args = {label: ["--model", "llama-7b", *net, *runs] for label, net in NETWORKS}
    frames = {label: frame(a) for label, a in args.items()}
    first = next(iter(frames.values()))
    header = ["run (ms a step, mean over a round)"]
    for label in frames:
        header += [f"{label}: comm", "exposed", "step", "sent", "speedup"]
    rows = []
    for run, r in first.iterrows():
        cells = [f"{run} ({rounds[r.strategy]})" if r.strategy in rounds else run]
        for f in frames.values():
            x = f.loc[run]
            cells += [ms(x.comm_s), ms(x.comm_exposed_s), ms(x.step_s), bytes_text(x.wire_bytes), speedup(x.speedup)]
        rows.append(cells)
    commands = "\n".join("lionsim estimate " + " ".join(a) for a in args.values())
    return f"\n```bash\n{commands}\n```\n\n" + md(header, rows) + "\n"


BLOCKS.add("local-7b-defaults", Block("local-7b-defaults", lambda: table(DEFAULTS, default_rounds())))
BLOCKS.add("local-7b-papers", Block("local-7b-papers", lambda: table(PAPERS, given_rounds(PAPERS))))
