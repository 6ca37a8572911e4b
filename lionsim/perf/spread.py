"""Uneven workers' cost to the simulator: booking a run's steps with a --compute-spread against
booking them without, per step (lionsim.training.booking: each step draws its W factors and
times the step at the slowest and the median worker). The target: under 10 ms a step at W = 1000
with lognormal:SIGMA. The record is a stand-in of STEPS steps of dlion-mavo over a2a-1bit (no
training: the training is the same with or without the spread; only the booking differs)."""

from __future__ import annotations

from lionsim.perf.rows import Figure, by_case, median_seconds

STEPS = 50
SPEC = "lognormal:0.3"


def bench_spread(counts: list[int], repeats: int = 5, steps: int = STEPS) -> list[Figure]:
    from lionsim.aggregators import MajorityVote
    from lionsim.compute import DEVICES
    from lionsim.engine import Sent
    from lionsim.network import load_network
    from lionsim.runs import RunSpec
    from lionsim.steptime import OverlapConfig
    from lionsim.steptime.spread import ComputeSpread
    from lionsim.strategies.core.base import Hyper
    from lionsim.training.booking import Booking, book_run
    from lionsim.training.compute_figure import ComputeFigure
    from lionsim.training.loop import RunRecord, StepRecord
    from lionsim.transports import TRANSPORTS, PayloadSpec

    params = 10**6
    spec = PayloadSpec(kind="votes", numel=params, rule=MajorityVote())
    figures = []
    for workers in counts:
        record = RunRecord(run=RunSpec("dlion-mavo", "a2a-1bit"), hyper=Hyper(1e-3, 0.0, (0.9, 0.99)),
                           transport=TRANSPORTS.get("a2a-1bit")(), spec=spec, params=params,
                           steps=[StepRecord(i, 1.0, Sent(spec), {}) for i in range(1, steps + 1)])

        def booking(spread: ComputeSpread | None) -> Booking:
            return Booking(network=load_network("10gbe"), overlap=OverlapConfig(), backend="sim", workers=workers,
                           compute=ComputeFigure(flops=6.0 * params * 1024, kernels=100), device=DEVICES.get("h100"),
                           warmup=3, ranks=1, spread=spread)

        even = booking(None)
        # a fresh spread each time: nothing cached from an earlier booking
        uneven = lambda: book_run(record, booking(ComputeSpread.parse([SPEC], seed=0)), workers)  # noqa: E731
        t_even, _ = median_seconds(lambda: book_run(record, even, workers), repeats)
        t_uneven, _ = median_seconds(uneven, repeats)
        how = f"median of {repeats} bookings of {steps} steps after 1 dropped; {SPEC}; a2a-1bit, 10^6 parameters"
        case = f"N={workers}"
        figures += [Figure("spread", case, "even_ms_per_step", 1e3 * t_even / steps, how),
                    Figure("spread", case, "uneven_ms_per_step", 1e3 * t_uneven / steps, how),
                    Figure("spread", case, "extra_ms_per_step", 1e3 * (t_uneven - t_even) / steps, how)]
    return figures


def print_spread(figures: list[Figure]) -> None:
    rows = by_case(figures)
    print(f"booking a step with --compute-spread against without ({figures[0].how}):")
    print(f"  {'N':>6} {'even ms/step':>13} {'uneven ms/step':>15} {'extra ms/step':>14}   target: extra < 10 ms")
    for case, r in rows.items():
        print(f"  {case[2:]:>6} {r['even_ms_per_step'].value:>13.3f} {r['uneven_ms_per_step'].value:>15.3f} "
              f"{r['extra_ms_per_step'].value:>14.3f}")
