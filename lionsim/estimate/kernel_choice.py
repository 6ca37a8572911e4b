"""`--kernels` and `--optimizer`: how estimate prices encode, decode, update and the optimizer's
passes. No torch: lionsim.estimate.plain refuses a bad form before torch loads, and resolve
(lionsim.estimate.config) builds the choice priced with the same functions."""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.compute.kernel_ops import OPTIMIZER_KINDS
from lionsim.compute.kernel_table import KernelTable
from lionsim.errors import LionsimError
from lionsim.ranges import refusal
from lionsim.registry import did_you_mean
from lionsim.whole import Text


@dataclass(frozen=True, slots=True)
class KernelChoice:
    """`--kernels` resolved: a table's rows for one device, or the ideal fused passes."""

    table: KernelTable | None
    """None: ideal fused passes."""
    device: str = ""
    """Whose rows price the passes."""

    def describe(self) -> str:
        """What estimate.csv's `kernels` column and the table's caption say."""
        return "ideal fused passes" if self.table is None else self.table.describe(self.device)


IDEAL_KERNELS = KernelChoice(None)
KERNEL_CHOICES = ("table, table:DEVICE (a device of the kernel table, e.g. table:cpu or table:v100-tf1.15) or "
                  "ideal")


def kernel_rows(text: object) -> str | None:
    """`--kernels` read: None for ideal, else the device whose table rows price the passes ("": the
    estimate's device); a bad form, or a DEVICE the table lacks, is one line."""
    from lionsim.compute.kernel_table import default_table

    choice = text.strip().lower() if isinstance(text, str) else ""
    if choice == "ideal":
        return None
    kind, colon, rows = choice.partition(":")
    if kind != "table" or (colon and not rows):
        raise LionsimError(f"bad --kernels {text!r}; accepted: {KERNEL_CHOICES}{did_you_mean(choice, ('table', 'ideal'))}")
    if rows and rows not in (devices := default_table().devices()):  # the option's line, not the file's path
        raise LionsimError(refusal("--kernels", Text(text), "table, ideal, or table:DEVICE with DEVICE one of: "
                                   f"{', '.join(devices)}") + did_you_mean(rows, devices))
    return rows


def resolve_kernels(text: object, device) -> KernelChoice:
    """`--kernels` (EstimateConfig.kernels) for an estimate on `device` (a lionsim.compute.Device): a
    device file's GPU, which the table has no rows for, gets rows derived by the rule of the table's
    unmeasured GPUs (lionsim.compute.derived_kernels)."""
    from lionsim.compute.derived_kernels import with_device
    from lionsim.compute.kernel_table import default_table

    rows = kernel_rows(text)
    if rows is None:
        return IDEAL_KERNELS
    if rows:
        table = default_table()
        table.for_device(rows)
        return KernelChoice(table, rows)
    return KernelChoice(with_device(default_table(), device), device.name)


def resolve_optimizer(text: object, ideal: bool) -> str:
    """`--optimizer` (EstimateConfig.optimizer) under `--kernels` (`ideal`: --kernels ideal)."""
    kind = text.strip().lower() if isinstance(text, str) else ""
    if kind not in OPTIMIZER_KINDS:
        raise LionsimError(f"bad --optimizer {text!r}; accepted: {', '.join(OPTIMIZER_KINDS)}"
                           f"{did_you_mean(kind, OPTIMIZER_KINDS)}")
    if ideal and kind != "fused":
        raise LionsimError(f"--optimizer {kind} prices torch's op chains with the kernel table; --kernels ideal "
                           "prices every pass as one fused kernel: give --kernels table (or --optimizer fused)")
    return kind
