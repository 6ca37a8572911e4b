"""Wall time of the default `lionsim bench` (no options but --out), in a fresh process: what a
new user waits for, start-up and plots included. One run: it takes minutes."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from lionsim.perf.rows import Figure


def bench_default(extra: list[str] | None = None) -> list[Figure]:
    args = extra or []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "lionsim", "bench", "--out", f"{tmp}/run", *args],
                             capture_output=True, text=True)
        wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"lionsim bench failed: {out.stderr.strip()[-500:]}")
    case = "lionsim bench " + " ".join(args) if args else "lionsim bench (defaults)"
    return [Figure("bench", case, "wall_s", wall, "one run, fresh process, plots included")]


def print_bench(figures: list[Figure]) -> None:
    for f in figures:
        print(f"{f.case}: {f.value:.1f} s wall ({f.how})")
