"""Docs block of docs/strategies.md's hierarchical votes: the step-time speedup of hier-exact and
hier-1bit over the flat a2a-1bit from 16 to 512 workers on three networks (an `estimate --sweep
workers` on each). Pure modelling, the same on any machine; run in this process each time it
renders."""

from __future__ import annotations

from lionsim.docgen.bench import wrap
from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.figures import PROVENANCE, md
from lionsim.docgen.run import estimate_frame

FLAT = "dlion-mavo@a2a-1bit"
HIER = ("hier-exact", "hier-1bit")
SWEEP = ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--network", "h100x8-10gbe", "--sweep",
         "workers=16,32,64,128,256,512", "--baseline", FLAT, "-s", FLAT, "-s", "dlion-mavo@hier-exact", "-s",
         "dlion-mavo@hier-1bit", "--traits", "ideal", "--kernels", "ideal"]
"""The page's sweep (on its first network; the block runs it on each)."""
NETWORKS = {"h100x8-10gbe": "one 10 GbE NIC a node", "h100x8-100gbe": "one 100 GbE NIC a node, NCCL over TCP",
            "dgx-h100": "8 NDR 400G NICs a node"}


def _on(network: str) -> list[str]:
    at = SWEEP.index("--network") + 1
    return [*SWEEP[:at], network, *SWEEP[at + 1:]]


def hierarchy_speedup() -> str:
    """hier-exact's and hier-1bit's speedup over a2a-1bit per worker count, on each network."""
    rows, counts = [], []
    for network, what in NETWORKS.items():
        f = estimate_frame(_on(network), csv="sweep.csv")[1]
        counts = sorted(set(f["workers"]))
        for i, transport in enumerate(HIER):
            got = f[f["transport"] == transport].set_index("workers")["speedup"]
            label = f"`{network}` ({what})" if i == 0 else ""
            rows.append([label, transport, *(f"{got[n]:.2f}x" for n in counts)])
    shown = " ".join(_on("h100x8-10gbe"))
    shown += " --out reports/hier-10gbe\nlionsim report reports/hier-10gbe"
    return ("\n```bash\nlionsim estimate " + shown + "\n```\n\n"
            + md(["network", "transport", *map(str, counts)], rows) + "\n" + wrap(PROVENANCE) + "\n\n")


BLOCKS.add("hierarchy-speedup", Block("hierarchy-speedup", hierarchy_speedup))
