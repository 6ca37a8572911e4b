"""The sign and code codecs against numpy on 10^8 elements, on an idle and on a busy machine.

Two settings, each the median of `repeats` calls after one dropped:
    1 thread        torch.set_num_threads(1)
    busy core       torch's default thread count while another process spins on one core
                    (`python -c "while True: pass"`), the case where a parallel region per
                    chunk stalls (numpy is single-threaded in both)
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager, nullcontext

from lionsim.perf.rows import Figure, by_case, versus

SPIN = "while True: pass"


@contextmanager
def busy_core():
    """Another process holding one core for the duration."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def _pairs(numel: int):
    """(name, ours, numpy's like-for-like) on the same 10^8-element data."""
    import numpy as np
    import torch

    from lionsim.packing import pack_codes, pack_signs, unpack_bools, unpack_codes, unpack_signs

    x = torch.randn(numel, generator=torch.Generator().manual_seed(0))
    xn = x.numpy()
    packed = pack_signs(x)
    pn = packed.numpy()
    codes = torch.randint(0, 4, (numel,), generator=torch.Generator().manual_seed(1))
    codes2 = pack_codes(codes, 2)
    cn = codes.numpy()  # int64, as the transports hand codes over
    return [
        ("pack_signs vs numpy.packbits(x > 0)", lambda: pack_signs(x), lambda: np.packbits(xn > 0)),
        ("unpack_bools vs numpy.unpackbits", lambda: unpack_bools(packed, numel), lambda: np.unpackbits(pn)),
        ("unpack_signs (+-1 float32) vs numpy.unpackbits(p) * 2 - 1",
         lambda: unpack_signs(packed, numel), lambda: np.unpackbits(pn).astype(np.float32) * 2 - 1),
        # numpy has no field packer: its nearest is packbits of the codes' bit planes
        ("pack_codes 2-bit vs numpy.packbits(bit planes)", lambda: pack_codes(codes, 2),
         lambda: np.packbits(np.stack([cn >> 1 & 1, cn & 1], axis=-1).astype(np.uint8))),
        ("unpack_codes 2-bit vs numpy.unpackbits -> fields", lambda: unpack_codes(codes2, numel, 2),
         lambda: np.unpackbits(codes2.numpy()).reshape(-1, 2) @ np.array([2, 1], dtype=np.uint8)),
    ]


def bench_codecs(numel: int = 10**8, repeats: int = 5) -> list[Figure]:
    import torch

    from lionsim.training.threads import torch_threads

    figures = []
    default_threads = torch.get_num_threads()
    for setting, threads, load in (("1 thread", 1, nullcontext), (f"{default_threads} threads, a core busy",
                                                                  default_threads, busy_core)):
        with torch_threads(threads), load():
            for name, ours, theirs in _pairs(numel):
                figures += versus("codecs", f"{name} [{setting}]",
                                  f"median of {repeats} after 1 dropped; {setting}; {numel:.0e} elements",
                                  ("ours_s", ours), ("numpy_s", theirs), "numpy_over_ours", repeats)
    return figures


def print_codecs(figures: list[Figure]) -> None:
    rows = by_case(figures)
    how = figures[0].how.split("; ")
    print(f"codecs against numpy ({how[-1]}, {how[0]}; numpy/ours > 1: ours faster):")
    width = max(len(case) for case in rows)
    for case, r in rows.items():
        print(f"  {case:<{width}} ours {r['ours_s'].value * 1e3:9.3f} ms  numpy {r['numpy_s'].value * 1e3:9.3f} ms  "
              f"x {r['numpy_over_ours'].value:5.2f}")
