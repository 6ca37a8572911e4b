"""Majority vote of N packed sign vectors: bit-sliced counting on the packed words against
unpack -> sum -> sign, one thread, median of `repeats` (the answers compared every time)."""

from __future__ import annotations

from lionsim.perf.rows import Figure, by_case, versus


def bench_votes(counts: list[int], numel: int = 10**6, repeats: int = 3) -> list[Figure]:
    import torch

    from lionsim.aggregators.bitslice import vote_sum_packed
    from lionsim.packing import pack_signs, unpack_signs
    from lionsim.training.threads import torch_threads

    figures = []
    with torch_threads(1):
        for n_workers in counts:
            packed = pack_signs(torch.randn(n_workers, numel, generator=torch.Generator().manual_seed(n_workers)))
            fast = lambda: torch.sign(vote_sum_packed(packed, numel)[0])  # noqa: E731
            plain = lambda: torch.sign(unpack_signs(packed, numel, torch.int8).sum(0, dtype=torch.int32))  # noqa: E731
            assert torch.equal(fast(), plain()), "bit-sliced vote disagrees with unpack -> sum -> sign"
            figures += versus("votes", f"N={n_workers}", f"median of {repeats}; one thread; n = {numel:.0e}",
                              ("bitslice_s", fast), ("unpack_sum_s", plain), "unpack_sum_over_bitslice",
                              repeats, warmup=0)
    return figures


def print_votes(figures: list[Figure]) -> None:
    rows = by_case(figures)
    print(f"majority vote on packed signs ({figures[0].how}):")
    print(f"  {'N':>6} {'bit-sliced ms':>14} {'unpack-sum ms':>14} {'unpack / bit-sliced':>20}")
    for case, r in rows.items():
        print(f"  {case[2:]:>6} {r['bitslice_s'].value * 1e3:>14.1f} {r['unpack_sum_s'].value * 1e3:>14.1f} "
              f"{r['unpack_sum_over_bitslice'].value:>20.1f}")
