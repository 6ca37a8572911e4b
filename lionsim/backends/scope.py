"""Where bench's backend-bound options act: one declaration (SCOPES) read three ways. check_plain
(lionsim.config.bench) refuses an option where it cannot act, a configuration replayed on another
backend drops it there (for_backend, beside it), and a record an older lionsim wrote loses the
defaults it kept there (lionsim.training.resume.drop_inert_defaults). So the three cannot disagree
(tests/config/test_backend_options.py). Torch-free: the command checks these before torch loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lionsim.backends import BACKENDS
from lionsim.compute.devices import MEASURED
from lionsim.whole import typed

REAL = tuple(b for b in BACKENDS if b != "sim")
"""The backends of real processes (gloo, nccl)."""
PER_BUCKET_OVERLAPS = ("buckets", "tensors")
"""--overlap modes only sim runs (gloo/nccl send after backward)."""


def given(value: object) -> bool:
    """Whether an option was given: None and False are an option left at its default."""
    return value is not None and value is not False


def measured(compute: object) -> bool:
    """Whether --compute is `measured`, in any spelling (check_plain takes any case)."""
    return isinstance(compute, str) and compute.strip().lower() == MEASURED


def shown(key: str, value: object) -> str:
    """An option as typed: `--calibrate`, `--timeout 60`, `--bucket-mb 2.5`."""
    flag = f"--{key.replace('_', '-')}"
    return flag if value is True else f"{flag} {value:g}" if isinstance(value, float) else \
        f"{flag} {typed(value)}" if isinstance(value, int) else f"{flag} {value}"


@dataclass(frozen=True, slots=True)
class Scope:
    """An option that acts on some backends only."""

    key: str
    """The option as run.json names it (`bucket_mb` for --bucket-mb)."""
    backends: tuple[str, ...]
    """Where it acts."""
    refusal: str
    """check_plain's line where it cannot act: {flag} (the option as typed), {backend}, {compute}."""
    bound: Callable[[object], bool] = given
    """Which of its values act on `backends` alone; the others act everywhere."""
    or_measured: bool = False
    """It acts on every backend under --compute measured as well."""

    def acts(self, value: object, backend: str, compute: object) -> bool:
        return not self.bound(value) or backend in self.backends or (self.or_measured and measured(compute))

    def refuse(self, value: object, backend: str, compute: object) -> str:
        return self.refusal.format(flag=shown(self.key, value), backend=backend, compute=compute)


SCOPES = (
    # a warm-up leaves measured times out: sim on a device measures none (0 leaves nothing out: it acts anywhere)
    Scope("warmup_steps", REAL, or_measured=True,
          refusal="{flag} does not apply on {backend} with --compute {compute}: every time is modelled, none "
                  "measured, so no step is left out of the timing medians; accepted with --compute measured or "
                  "--backend gloo|nccl (or 0)",
          bound=lambda v: given(v) and v != 0),
    # the real backends' processes: sim is one, and measures nothing
    Scope("ranks", REAL, "{flag} needs --backend gloo or nccl; sim is one process",
          bound=lambda v: v not in (None, 1)),  # one rank is sim's own layout
    Scope("timeout", REAL, "{flag} needs --backend gloo or nccl: sim is one process and waits on no collective"),
    Scope("iface", REAL, "{flag} needs --backend gloo or nccl: sim measures nothing"),
    Scope("calibrate", REAL, "{flag} needs --backend gloo or nccl: sim measures nothing"),
    # exchanges during backward: only sim runs them (gloo/nccl send after backward)
    Scope("overlap", ("sim",), "{flag} needs --backend sim: a {backend} run sends after backward and books the "
                               "times it measured", bound=lambda v: str(v).strip().lower() in PER_BUCKET_OVERLAPS),
    Scope("bucket_mb", ("sim",), "{flag} needs --backend sim: a {backend} run sends after backward, in no buckets"),
)
SCOPE = {s.key: s for s in SCOPES}


def acts(key: str, value: object, backend: str, compute: object) -> bool:
    """Whether option `key` (run.json's name) set to `value` acts on `backend` under --compute
    `compute`; an option SCOPES does not name acts everywhere."""
    return key not in SCOPE or SCOPE[key].acts(value, backend, compute)
