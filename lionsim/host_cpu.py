"""The CPU a run computed on, as far as its losses depend on it: the model (/proc/cpuinfo), its
feature flags and the kernels torch dispatches to on it (AVX2, AVX512, ...). Another CPU rounds
differently, so a run's record (run.json's host) and a regression baseline's fingerprint
(lionsim.regress.fingerprint) both say which."""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path


def _cpuinfo(keys: tuple[str, ...]) -> str:
    """The first /proc/cpuinfo value under one of `keys` ("" where there is none or no file)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in keys and value.strip():
                return value
    except OSError:
        pass
    return ""


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what the platform module says, else "unknown"."""
    model = _cpuinfo(("model name", "Model", "cpu model"))
    return " ".join(model.split()) if model else platform.processor() or "unknown"


def cpu_flags() -> str:
    """A short hash of the CPU's feature flags (/proc/cpuinfo), "unknown" without them: a
    virtual machine may call every generation "AMD EPYC", its flags tell them apart."""
    flags = _cpuinfo(("flags", "Features"))
    return hashlib.sha256(" ".join(sorted(flags.split())).encode()).hexdigest()[:12] if flags else "unknown"


def cpu_capability() -> str:
    """The CPU kernels torch dispatches to here (torch.backends.cpu.get_cpu_capability(): "AVX512")."""
    import torch

    try:
        return torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # torch < 2.1
        return "unknown"
