"""A device of one's own: `--device FILE.toml` (estimate), `--compute FILE.toml` (bench) and a network
profile's `device = "FILE.toml"` (estimate, comm) price a GPU lionsim has no preset for from its
datasheet figures, written as a preset's are:

    name = "a6000"              # optional; the file's stem if absent; not a preset's name
    source = "NVIDIA RTX A6000 datasheet: 309.7 TFLOPS tensor with sparsity, 768 GB/s, 48 GB"
    memory_TBps = 0.768         # peak memory bandwidth, 1e12 bytes/s (above 0, at most 1,000)
    memory_GB = 48              # capacity, GiB as GPU memory is (lionsim.compute.devices.GIB)
    mfu = 0.4                   # optional: model FLOPs utilisation reached in training (0, 1]
    memory_efficiency = 0.8     # optional: share of memory_TBps an elementwise pass reaches (0, 1]
    kernel_us = 10              # optional: least time one eager kernel costs, us (0 to 10,000)
    nvlink_GBps = 56.25         # optional: the GPU's link to its node's other GPUs, per direction
                                # at line rate; charged at the share NVLink reaches (ACHIEVED)
    [tflops]                    # peak DENSE tensor throughput per dtype, TFLOP/s (a datasheet's
    bfloat16 = 154.8            # "with sparsity" figure halved); bfloat16 or float16 required:
    float16 = 154.8             # the training dtype (bfloat16 where both are given)
    tf32 = 77.4                 # optional, as float32 and float8_e4m3fn

`source` is required: every figure lionsim prints says what it rests on. The optional keys take the
presets' defaults (lionsim.compute.devices: mfu 0.4, memory_efficiency 0.8, kernel_us 10). The
codec kernel table has no rows for such a device: estimate derives them from memory_TBps by the rule
of the table's unmeasured GPUs (lionsim.compute.derived_kernels). Every problem is one line naming
the file and the key (lionsim.network.keys), as a network profile's are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lionsim.compute.devices import ACHIEVED, DEVICES, GIB, KERNEL_S, TERA, Device, unknown_device
from lionsim.errors import LionsimError
from lionsim.network.keys import no_unknown, number
from lionsim.network.link import Link
from lionsim.text_formats import read_parsed

DTYPES = ("bfloat16", "float16", "tf32", "float32", "float8_e4m3fn")
"""The dtypes a [tflops] table may give, torch's names (and "tf32") as the presets use them."""
KEYS = ("name", "source", "memory_TBps", "memory_GB", "mfu", "memory_efficiency", "kernel_us", "nvlink_GBps",
        "tflops")
DEVICE_FILE = ("a TOML file with source, memory_TBps, memory_GB and [tflops] bfloat16 or float16 "
               "(docs/clusters.md, A device of your own)")
"""What a device file holds, in its refusals."""


def get_device(name: str, option: str = "") -> Device:
    """A preset by name (any case), or a device file's device (a name ending in .toml); an unknown
    name answered with every preset's name (devices.unknown_device). `option`: the option that
    named a file ("--device"), which a bad file's line begins with, as a bad --network file's does."""
    if is_device_file(name):
        try:
            return load_device(name)
        except LionsimError as e:
            if not option:
                raise
            raise LionsimError(f"bad {option}: {e}") from None
    if name in DEVICES:
        return DEVICES.get(name)
    raise LionsimError(unknown_device(name))


def check_profile_device(spec, network) -> None:
    """A network profile's `device` (loaded from --network `spec`) that lionsim does not know: one
    line naming the profile, wherever the profile is read (the network package cannot look devices
    up: lionsim.network.profile._device)."""
    if network.device.endswith(".toml"):  # a device file (profile._device made its path absolute)
        try:
            load_device(network.device)
        except LionsimError as e:
            raise LionsimError(f"bad --network {os.fspath(spec)}: its device file: {e}") from None
    elif network.device and network.device not in DEVICES:
        raise LionsimError(f"bad --network {os.fspath(spec)}: {unknown_device(network.device, 'accepted')}")


def is_device_file(text: str) -> bool:
    """Whether `text` names a device file rather than a preset: it ends in .toml."""
    return os.fspath(text).lower().endswith(".toml")


def load_device(path: str | os.PathLike[str]) -> Device:
    """The device `path` describes; one line naming the file where anything is wrong. It is not
    registered: the commands carry the Device (and a run records the file's path), so a device
    file never shadows a preset or outlives its command."""
    where = Path(path)
    if where.is_dir():
        raise LionsimError(f"bad device file {where}: it is a folder; accepted: {DEVICE_FILE}")
    device = device_from_dict(read_parsed(where, "toml", "device file", DEVICE_FILE), source=str(where),
                              default_name=where.stem)
    if device.name in DEVICES:  # a preset's name would price it with the preset's kernel rows
        raise LionsimError(f"{where}: name {device.name!r} is a preset's (`lionsim devices`); accepted: a name "
                           "of your own")
    return device


def device_from_dict(data: Any, *, source: str, default_name: str) -> Device:
    """A device file's table checked key by key, as a Device."""
    if not isinstance(data, dict) or not data:
        raise LionsimError(f"{source}: it holds no keys; accepted: {DEVICE_FILE}")
    no_unknown(data, KEYS, "", source)
    name = _text(data, "name", source, default_name).strip().lower()
    if not name:
        raise LionsimError(f"{source}: 'name' is empty; accepted: a name such as \"a6000\"")
    described = _text(data, "source", source, None).strip()
    if not described:
        raise LionsimError(f"{source}: 'source' is empty; accepted: the datasheet the figures come from")
    tflops = data.get("tflops")
    if not isinstance(tflops, dict):
        raise LionsimError(f"{source}: missing table [tflops]; accepted: peak dense TFLOP/s per dtype, "
                           f"{', '.join(DTYPES)} (bfloat16 or float16 required)")
    no_unknown(tflops, DTYPES, "tflops.", source)
    rates = {dtype: number(tflops, dtype, source, low=0.0, open_low=True, high=1e6, prefix="tflops")
             for dtype in tflops}  # in the file's order
    training = next((dtype for dtype in ("bfloat16", "float16") if dtype in rates), None)
    if training is None:
        raise LionsimError(f"{source}: [tflops] needs bfloat16 or float16 (the training dtype's peak); it has "
                           f"{', '.join(rates) or 'none'}")
    nvlink = number(data, "nvlink_GBps", source, low=0.0, open_low=True, high=1e6, default=0.0)
    return Device(
        name=name, source=described, dtype_tflops=tuple(rates.items()), peak_flops=rates[training] * TERA,
        memory_bandwidth_Bps=number(data, "memory_TBps", source, low=0.0, open_low=True, high=1e3) * 1e12,
        memory_bytes=number(data, "memory_GB", source, low=0.0, open_low=True, high=1e6) * GIB,
        mfu=number(data, "mfu", source, low=0.0, open_low=True, high=1.0, default=0.4),
        memory_efficiency=number(data, "memory_efficiency", source, low=0.0, open_low=True, high=1.0, default=0.8),
        kernel_s=number(data, "kernel_us", source, low=0.0, high=1e4) / 1e6 if "kernel_us" in data else KERNEL_S,
        intra_link=Link.from_units(alpha_us=1.0, bandwidth_GBps=nvlink * ACHIEVED) if nvlink else None,
        description=f"{source}: {described}",
    )


def _text(data: dict, key: str, source: str, default: str | None) -> str:
    if key not in data:
        if default is None:
            raise LionsimError(f"{source}: missing key '{key}'; accepted: {DEVICE_FILE}")
        return default
    if not isinstance(data[key], str):
        raise LionsimError(f"{source}: '{key}' = {data[key]!r} is not text; accepted: a quoted string")
    return data[key]


def known_device(compute: object) -> Device | None:
    """A run's recorded --compute as a Device: a preset, or a device file still readable; None for
    measured, an unknown name, or a file gone since (a report reads what it can)."""
    if not isinstance(compute, str) or compute == "measured" or not (is_device_file(compute) or compute in DEVICES):
        return None
    try:
        return get_device(compute)
    except LionsimError:
        return None


def device_shown(compute: object, known: Device | None = None) -> object:
    """A run's recorded --compute as its notes name it: a device file by its device's name (the file's
    stem where it cannot be read now), anything else as it is. `known`: known_device(compute), where
    the caller read it already."""
    if not isinstance(compute, str) or not is_device_file(compute):
        return compute
    device = known if known is not None else known_device(compute)
    return device.name if device is not None else Path(compute).stem
