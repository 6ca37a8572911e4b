"""Import time and wall time of the commands that train nothing (and of the help and a refusal
of the commands that train).

Import time is the sum of the top-level cumulative times `python -X importtime` prints while
the command runs (every import it does, lazy ones included); wall time is the whole process,
`python -m lionsim ...`, interpreter start-up included. Median of `repeats` runs each."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from lionsim.perf.rows import Figure, by_case

COMMANDS = ["--help", "--version", "networks", "strategies", "workloads",
            "estimate --model gpt2-124m --workers 64", "comm --network 10gbe",
            "bench --help", "estimate --help", "bench --workers 0"]
HEAVY = ("torch", "matplotlib", "pandas")

_RUN = "import sys; from lionsim.cli import main; sys.argv = ['lionsim'] + sys.argv[1:]; main()"


def import_profile(args: list[str]) -> tuple[float, set[str]]:
    """Seconds of imports while `lionsim ARGS` runs, and which heavy packages it imported."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", _RUN, *args],
                         capture_output=True, text=True)
    total, heavy = 0.0, set()
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  "):  # a top-level import: its cumulative time holds its children
            try:
                total += int(cumulative) / 1e6
            except ValueError:  # the header line
                continue
        root = name.strip().split(".")[0]
        if root in HEAVY:
            heavy.add(root)
    return total, heavy


def bench_imports(repeats: int = 3) -> list[Figure]:
    figures = []
    for command in COMMANDS:
        args = command.split()
        imports, walls, heavy = [], [], set()
        for _ in range(repeats):
            seconds, heavy = import_profile(args)
            imports.append(seconds)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "lionsim", *args], capture_output=True)
            walls.append(time.perf_counter() - start)
        how = f"median of {repeats}; imports: {', '.join(sorted(heavy)) or 'none of ' + '/'.join(HEAVY)}"
        figures += [Figure("imports", f"lionsim {command}", "import_s", statistics.median(imports), how),
                    Figure("imports", f"lionsim {command}", "wall_s", statistics.median(walls), how)]
    return figures


def print_imports(figures: list[Figure]) -> None:
    print("command import time (python -X importtime) and wall time, median of runs:")
    rows = by_case(figures)
    for case, r in rows.items():
        print(f"  {case:<46} import {r['import_s'].value:6.2f} s   wall {r['wall_s'].value:6.2f} s   "
              f"{r['import_s'].how.split('; ')[1]}")
