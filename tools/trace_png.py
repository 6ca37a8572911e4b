"""Draw a lionsim trace.json as a PNG timeline (matplotlib), for the docs' picture of it.

    python tools/trace_png.py DIR/trace.json OUT.png [--steps N]

Perfetto and chrome://tracing draw the file interactively; this draws the same events offline:
one row per process and thread (compute, comm), each "X" event a bar from ts to ts + dur,
coloured by what it is, for the first N steps (every process's "step" spans say where they end).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLOURS = {"forward": "#4C72B0", "backward": "#55A868", "compute": "#4C72B0", "encode": "#C44E52",
           "decode": "#8172B2", "update": "#937860", "wait for slowest worker": "#DDDDDD",
           "wait for slowest rank": "#DDDDDD", "wait for network": "#F2D7A6",
           "exchange losses and flags (untimed)": "#BBBBBB", "evaluate": "#64B5CD"}
COLLECTIVE = "#DD8452"


def colour(name: str) -> str:
    return COLOURS.get(name, COLLECTIVE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=2, help="Steps drawn (from the first).")
    args = parser.parse_args()
    events = json.loads(args.trace.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    steps = [e for e in spans if threads[e["pid"], e["tid"]] == "step"]
    end = max(e["ts"] + e["dur"] for e in steps if e["args"].get("step", 1) <= args.steps) / 1e3  # ms
    rows = [(pid, tid) for pid in processes for (p, tid), name in sorted(threads.items())
            if p == pid and name != "step"]
    fig, ax = plt.subplots(figsize=(10, 0.36 * len(rows) + 1.4))
    for y, (pid, tid) in enumerate(rows):
        for e in spans:
            if (e["pid"], e["tid"]) == (pid, tid) and e["ts"] / 1e3 < end:
                ax.barh(y, e["dur"] / 1e3, left=e["ts"] / 1e3, height=0.7, color=colour(e["name"]),
                        edgecolor="white", linewidth=0.4)
    for e in steps:  # where each process's steps begin, across its rows
        ys = [y for y, (pid, _) in enumerate(rows) if pid == e["pid"]]
        if e["ts"] / 1e3 < end and ys:
            ax.vlines(e["ts"] / 1e3, min(ys) - 0.45, max(ys) + 0.45, color="black", linewidth=0.8, zorder=3)
    ax.set_yticks(range(len(rows)), [f"{processes[pid]} · {threads[pid, tid]}" for pid, tid in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, end)
    ax.set_xlabel("ms from the run's start")
    shown = {e["name"] for e in spans if e["ts"] / 1e3 < end}
    legend = [Patch(color=c, label=n) for n, c in COLOURS.items() if n in shown and n != "compute" or
              (n == "compute" and n in shown and "forward" not in shown)]
    legend.append(Patch(color=COLLECTIVE, label="collective (op, size, algorithm)"))
    fig.legend(handles=legend, fontsize=7, ncol=4, loc="lower center", frameon=False)
    ax.set_title(f"trace.json, first {args.steps} steps of each run (black: a step begins); drawn with matplotlib",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.07 + 0.3 / len(rows), 1, 1))
    fig.savefig(args.out, dpi=130)


if __name__ == "__main__":
    main()
