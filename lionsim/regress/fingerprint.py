"""The platform a baseline was recorded on, and which comparison a check runs.

Every case is bit-for-bit deterministic on one platform (fixed seeds, one intra-op thread;
runner.py), so on the platform that recorded the baseline any change to a metric beyond
float noise is a change to the code: `strict` mode compares to STRICT_REL and fails on a
change in either direction (a bug can make a loss better). Elsewhere (another CPU kind,
torch or Python, whose kernels may round differently) the numbers drift legitimately, by as
much as rounding carries through training: `float` mode allows each metric what float-level
noise did to it at --update (noise.py, tolerance.py), either way, which still catches a 5%
change of weight decay or lr. `spread` mode (3 sd of the seed-to-seed spread) is far looser:
only forced, or for a baseline recorded without float tolerances.

The fingerprint is what decides the rounding: torch's version and the CPU kernels it
dispatches to (`torch.backends.cpu.get_cpu_capability()`: AVX2, AVX512, ...), the CPU model,
its feature flags (hashed) and architecture, and the Python version. When in doubt it
differs, and the check falls back to spread mode: safe, only less sharp.
"""

from __future__ import annotations

import platform

from lionsim.errors import LionsimError
from lionsim.host_cpu import cpu_capability, cpu_flags, cpu_model

AUTO, STRICT, FLOAT, SPREAD = "auto", "strict", "float", "spread"
MODES = (AUTO, STRICT, FLOAT, SPREAD)
STRICT_REL = 1e-6
"""Strict mode: a metric may differ from its baseline by this fraction of its value (float
noise; on the recording platform the difference is 0) ..."""
STRICT_ABS = 1e-6
"""... or by this much, for values near zero: gap_to_lion is a difference of two losses near
1, so its float noise is the losses' (a float32 loss of 0.75 moves in steps of 6e-8)."""


def fingerprint() -> dict[str, str]:
    """This platform, as a baseline records it."""
    import torch

    return {"torch": torch.__version__, "python": platform.python_version(), "cpu": cpu_model(),
            "cpu_flags": cpu_flags(), "cpu_capability": cpu_capability(), "machine": platform.machine()}


def strict_tolerance(value: float) -> float:
    return max(STRICT_REL * abs(value), STRICT_ABS)


def choose_mode(requested: str, recorded: dict[str, str] | None, has_float: bool = False,
                update: str = "lionsim regress --update") -> tuple[str, str]:
    """(strict, float or spread, why) for `--mode requested` against the baseline's fingerprint;
    `has_float`: every case of the baseline has float tolerances; `update`: the command that
    re-records this baseline (baseline.update_command), which the advice names."""
    if requested not in MODES:
        raise LionsimError(f"bad --mode {requested!r}; accepted: {', '.join(MODES)}")
    now = fingerprint()
    if requested == FLOAT and not has_float:
        raise LionsimError("--mode float needs float tolerances, which this baseline lacks: "
                           f"`{update}` measures them")
    if requested != AUTO:
        return requested, f"asked for (--mode {requested})"
    elsewhere = FLOAT if has_float else SPREAD
    lacking = "" if has_float else f" (the baseline has no float tolerances: `{update}` measures them)"
    if not recorded:
        return elsewhere, "the baseline records no platform fingerprint" + lacking
    differs = [f"{k} {recorded.get(k, '-')} -> {now[k]}" for k in now if recorded.get(k) != now[k]]
    if differs:
        return elsewhere, "this platform differs from the baseline's: " + ", ".join(differs) + lacking
    return STRICT, f"the baseline was recorded on this platform ({describe(now)})"


def describe(fp: dict[str, str]) -> str:
    return (f"torch {fp.get('torch', '?')}, python {fp.get('python', '?')}, {fp.get('cpu', '?')} "
            f"{fp.get('machine', '?')} {fp.get('cpu_capability', '?')}")


def mode_line(mode: str, why: str) -> str:
    """One line saying which comparison ran, for the console and the reports."""
    if mode == STRICT:
        rule = f"every metric must equal its baseline to float noise (rel {STRICT_REL:g}), either way"
    elif mode == FLOAT:
        rule = "every metric within what float-level noise carries through its case (5 x its rms change), either way"
    else:
        rule = "metrics within their seed-spread tolerances (3 sd over seeds; loose: subtle bugs pass)"
    return f"mode: {mode}: {rule}; {why}"
