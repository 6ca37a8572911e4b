"""The text forms of a bench's training options, parsed without torch: --workload's name,
--data-split, --momentum-sync, --sync-tensors and --eval-samples. The command layer checks them
before torch loads (lionsim.config.bench.BenchConfig.check_plain), so a bad value is refused at
once; the modules that act on them (lionsim.workloads, lionsim.strategies.core.momentum_sync)
import them from here. No imports beyond the standard library and lionsim's plain helpers."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from fnmatch import fnmatchcase

from lionsim.errors import LionsimError
from lionsim.plugin_load import SPEC_FORMS, entry_points, is_spec
from lionsim.ranges import EVERY_STEPS, is_number, refusal, span
from lionsim.registry import did_you_mean, match_name
from lionsim.whole import MAX_STEPS, Text, read_whole, typed

FLOAT32_MAX = 3.4028234663852886e38
"""The largest finite float32 (torch.finfo(torch.float32).max): training runs in float32, so a real
option past it cannot be applied (torch refuses to convert it: "without overflow")."""


def beyond_float32(v) -> str:
    """"" for a value float32 holds (or not a finite float); else why a refusal refuses it, the `why`
    of lionsim.ranges.refusal: "bad --lr 1e300: beyond float32's range ...; accepted: ..."."""
    if isinstance(v, float) and is_number(v) and abs(v) > FLOAT32_MAX:
        return f"beyond float32's range, +-{FLOAT32_MAX:.4g} (training runs in float32)"
    return ""


_REGISTERED = re.compile(r'^@register\("([^"]+)"\)', re.MULTILINE)


@functools.cache
def built_in_workloads() -> tuple[str, ...]:
    """The built-in workloads' names, sorted, read from each module's `@register("NAME")` line without
    importing it (the modules import torch): a new built-in workload is its module alone, and
    tests/workloads/test_forms.py holds this equal to the registry."""
    folder = Path(__file__).resolve().parent / "workloads"
    return tuple(sorted(name for path in folder.glob("*.py") for name in _REGISTERED.findall(path.read_text())))
WORKLOAD_ENTRY_GROUP = "lionsim.workloads"
"""Installed packages announce workloads here: `name = "package.module:FUNC"`."""


def unknown_workload(name: str, installed: list[str]) -> LionsimError:
    """The one line for a workload name that is no built-in, no installed plug-in and no spec."""
    shown = f" (installed: {', '.join(installed)})" if installed else ""
    return LionsimError(f"unknown workload {name!r}; choose from: {', '.join(built_in_workloads())}, an installed "
                        f"plug-in{shown}, or {SPEC_FORMS}{did_you_mean(name, built_in_workloads())}")


def check_workload_name(name: str) -> None:
    """A built-in's name (any case), an installed plug-in's (an entry point: named, not loaded) or
    the form FILE.py:FUNC | module:FUNC (the file and function are checked where it is loaded)."""
    if match_name(name, built_in_workloads()) is not None or is_spec(name):
        return
    installed = list(entry_points(WORKLOAD_ENTRY_GROUP))
    if name not in installed:
        raise unknown_workload(name, installed)


SPLIT_FORMS = "iid, dirichlet:ALPHA (ALPHA above 0, e.g. dirichlet:0.5)"


@dataclass(frozen=True, slots=True)
class Split:
    """A parsed `--data-split` value."""

    kind: str
    """"iid" or "dirichlet"."""
    alpha: float | None = None
    """Dirichlet concentration (dirichlet only); smaller means stronger label skew."""


def parse_split(text: str) -> Split:
    """Parse "iid" or "dirichlet:ALPHA"; anything else is a LionsimError naming the accepted forms."""
    if text == "iid":
        return Split("iid")
    kind, sep, value = text.partition(":")
    if kind == "dirichlet" and sep:
        try:
            alpha = float(value)
        except ValueError:
            alpha = math.nan
        if math.isfinite(alpha) and alpha > 0:
            return Split("dirichlet", alpha)
        why = "ALPHA must be a number above 0"
    else:
        why = ""
    near = did_you_mean(kind, ("iid", "dirichlet")) if not why else ""
    raise LionsimError(refusal("--data-split", Text(text), SPLIT_FORMS, why) + near)


def parse_eval_samples(value: int | str | None) -> int | str | None:
    """--eval-samples: None (the default), a positive whole number as every whole-number option takes
    it (1000, 1e3 or 2.5e3: lionsim.whole.read_whole), or "all" (the whole test set)."""
    if value is None:
        return None
    accepted = f"accepted: {span(1, whole=True)}, or all"
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "all":
            return "all"
        try:
            value = read_whole(text)
        except ValueError:
            raise LionsimError(f"bad --eval-samples {value!r}; {accepted}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LionsimError(f"bad --eval-samples {typed(value)}; {accepted}")
    return value


ACCEPTED = f"never, every:K or schedule:K with K {EVERY_STEPS}"

@dataclass(frozen=True, slots=True)
class MomentumSync:
    mode: str
    """never | every | schedule"""
    k: int = 0

    @classmethod
    def parse(cls, text: str) -> "MomentumSync":
        given, text = text, text.strip().lower()  # Every:10 is every:10, as other options take any case
        if text == "never":
            return cls("never")
        mode, _, value = text.partition(":")
        if mode in ("every", "schedule") and value.isdigit() and 0 < int(value) <= MAX_STEPS:
            return cls(mode, int(value))
        modes = ("never", "every", "schedule")  # a misspelt mode gets a suggestion, as --data-split's does
        near = did_you_mean(mode, modes) if mode not in modes else ""
        raise LionsimError(f"bad --momentum-sync {given!r}; accepted: {ACCEPTED}{near}")

    def sync_steps(self, upto: int) -> set[int]:
        """The 1-based steps <= upto after which momenta are averaged."""
        return {step for step in range(1, upto + 1) if self.is_sync(step)}

    def is_sync(self, step: int) -> bool:
        """Whether momenta are averaged after 1-based `step`."""
        return self.next_sync(step - 1) == step

    def next_sync(self, step: int) -> int | None:
        """The first 1-based step after `step` (0: the run's start) after which momenta are
        averaged; None under never."""
        if self.mode == "never":
            return None
        if self.mode == "every":
            return (step // self.k + 1) * self.k
        at, j = 0, 0
        while at <= step:
            at += max(1, round(2 ** (j / self.k)))
            j += 1
        return at

    def __str__(self) -> str:
        return self.mode if self.mode == "never" else f"{self.mode}:{self.k}"


SELECT_ACCEPTED = ("all, min-numel:N (tensors of at least N parameters) or a comma list of "
                   "name patterns (fnmatch globs, e.g. 'blocks.*.attn.*,head.weight')")


@dataclass(frozen=True, slots=True)
class TensorSelection:
    """Which tensors a momentum sync averages (--sync-tensors); the rest keep their own.

    all            every tensor (Lion Cub's plain momentum sync)
    min-numel:N    tensors with at least N parameters (the large layers, where momenta drift most
                   in bytes; small ones, biases and norms, stay local)
    GLOB[,GLOB]    tensors whose name matches one of the fnmatch patterns
    """

    rule: str
    """all | min-numel | names"""
    min_numel: int = 0
    patterns: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "TensorSelection":
        if text == "all":
            return cls("all")
        if text.startswith("min-numel:"):
            value = text.partition(":")[2]
            if value.isdigit() and int(value) > 0:
                return cls("min-numel", min_numel=int(value))
            raise LionsimError(f"bad --sync-tensors {text!r}; accepted: {SELECT_ACCEPTED}")
        patterns = tuple(p.strip() for p in text.split(","))
        if not text.strip() or not all(patterns):
            raise LionsimError(f"bad --sync-tensors {text!r}; accepted: {SELECT_ACCEPTED}")
        return cls("names", patterns=patterns)

    def picks(self, names: list[str], numels: list[int]) -> list[bool]:
        """Per tensor: whether its momentum is synced; fails if nothing would be."""
        if self.rule == "all":
            return [True] * len(names)
        if self.rule == "min-numel":
            picked = [n >= self.min_numel for n in numels]
        else:
            picked = [any(fnmatchcase(name, p) for p in self.patterns) for name in names]
        if not any(picked):
            shown = ", ".join(f"{n} ({k})" for n, k in list(zip(names, numels))[:8])
            raise LionsimError(f"--sync-tensors {self}: picks no tensor of this model; its tensors (parameters): "
                               f"{shown}{', ...' if len(names) > 8 else ''}")
        return picked

    def __str__(self) -> str:
        if self.rule == "min-numel":
            return f"min-numel:{self.min_numel}"
        return "all" if self.rule == "all" else ",".join(self.patterns)


STEP, RUN, TRAINING = "step", "run", "training"
"""What `lionsim estimate` prices of a strategy option (lionsim.strategies.core.form.OptionRule.priced):
STEP, a step's time or bytes (a rank, a ratio, H local steps, a kernel count); RUN, only the phases
of a whole run (a warm-up, a freeze: estimate reads it with --steps, --tokens or --from-run);
TRAINING, only the training arithmetic (a learning rate, a momentum, a decay: estimate refuses it,
bench measures it). Here, below both, as the strategies declare it and estimate reads it."""
PRICED = (STEP, RUN, TRAINING)
