"""Whether a priced run fits on its worker: weights, gradients and optimizer state against the
device's memory, per worker (estimate.csv's `memory_bytes` and `memory_fits`, the note under the
table).

    memory_bytes = P x (WEIGHT_BYTES + GRAD_BYTES + STATE_BYTES x state rows)

state rows: the strategy's own count (Strategy.state_rows: AdamW's two moments, Lion's and SGD
momentum's one, an error-feedback buffer, a local-step method's replica and its inner
optimizer's state), read from the strategy the probe built. Every value is float32, as lionsim's
strategies hold them and its kernel model prices them (lionsim.optim.steps: 4 bytes a value): a
bf16 or fp8 all-reduce casts a bucket for the wire, it keeps no bf16 copy of the gradients.
Activations are not counted (they depend on the batch, the sequence and checkpointing; a batch
whose lower bound, beside this state, outgrows the device gets a caption line:
lionsim.estimate.activation_note), so a run
that fits here may still not; one that does not fit here cannot run unsharded, whatever its
batch. A worker of several devices (--replica-gpus G) holds G devices' memory. Device memory is
binary (a datasheet's "80 GB" is 80 GiB; lionsim.compute.devices.GIB), so the note prints both
figures in GiB; the few per cent ECC and the runtime reserve are not modelled. The estimate is
not refused: the price of a run that needs sharding still says what its exchange costs.
"""

from __future__ import annotations

from lionsim.numbers import binary_bytes_text

WEIGHT_BYTES = 4
"""Bytes a parameter's weight takes (float32)."""
GRAD_BYTES = 4
"""Bytes a parameter's gradient takes (float32)."""
STATE_BYTES = 4
"""Bytes of each row of optimizer state per parameter (float32)."""


def worker_bytes(params: int, state_rows: float) -> int:
    """Bytes one worker holds for weights, gradients and optimizer state (module doc)."""
    return round(params * (WEIGHT_BYTES + GRAD_BYTES + STATE_BYTES * state_rows))


def worker_text(row: dict) -> str:
    """What one worker of `row` (an estimate row: device, replica_gpus) is made of, as the memory
    notes say it: "one h100", or "a worker of 2 x h100"."""
    g = int(row.get("replica_gpus", 1) or 1)
    return f"one {row['device']}" if g == 1 else f"a worker of {g} x {row['device']}"


def fits_note(rows) -> str:
    """The line under the table naming the runs that do not fit on their worker (`rows`: estimate rows
    with MEMORY_COLUMNS, device, replica_gpus, strategy, transport); "" where all fit."""
    over = [r for r in rows if not r["memory_fits"]]
    if not over:
        return ""
    first = over[0]
    device = worker_text(first)
    # both in binary units, as GPU memory is sized: "108 GB" beside "80 GiB" would read as two conventions
    gib = binary_bytes_text
    needs = ", ".join(f"{r['strategy']}@{r['transport']} needs {gib(r['memory_bytes'])}" for r in over)
    return (f"does not fit on {device} ({gib(first['device_memory_bytes'])}): {needs} a worker for weights, "
            "gradients and optimizer state (float32), before activations; shard it (ZeRO/FSDP) or pick a larger "
            "device")


def fits_line(rows) -> str:
    """The caption's line where every run fits: the largest need beside the worker's memory (a user
    choosing a GPU reads it without --format csv); "" where some run does not fit (fits_note)."""
    if not rows or any(not r["memory_fits"] for r in rows):
        return ""
    most = max(rows, key=lambda r: r["memory_bytes"])
    gib = binary_bytes_text
    return (f"fits on {worker_text(most)} ({gib(most['device_memory_bytes'])}): at most {gib(most['memory_bytes'])} "
            f"a worker ({most['strategy']}@{most['transport']}) for weights, gradients and optimizer state "
            "(float32), before activations")


MEMORY_COLUMNS = ["memory_bytes", "device_memory_bytes", "memory_fits"]
"""estimate.csv's: bytes a worker holds for weights, gradients and optimizer state (module doc); the
memory of the device(s) a worker is made of; whether the first fits in the second."""


def memory_columns(params: int, state_rows: float, device_bytes: float, replica_gpus: int) -> dict:
    """A row's MEMORY_COLUMNS."""
    need, held = worker_bytes(params, state_rows), device_bytes * replica_gpus
    return {"memory_bytes": need, "device_memory_bytes": held, "memory_fits": need <= held}
