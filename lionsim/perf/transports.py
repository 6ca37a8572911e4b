"""Measured comm per step of each vote transport against fp32-allreduce on 2 gloo ranks, beside
the bytes ratio and what the network model (a preset or a `comm --fit` profile) predicts."""

from __future__ import annotations

from lionsim.perf.rows import Figure, by_case


def bench_transports(profile: str, numel: int, iters: int) -> list[Figure]:
    from lionsim.measure.transports import TransportConfig, measure_transports, transport_table
    from lionsim.network import load_network

    net = load_network(profile)
    cfg = TransportConfig(numel=numel, iters=iters)
    how = (f"{cfg.ranks} gloo ranks, {numel / 1e6:g}M parameters, median of {iters} steps (slowest rank); "
           f"model: {net.name}; x = fp32-allreduce / transport")
    figures = []
    for r in transport_table(cfg, measure_transports(cfg), net):
        for metric in ("wire_bytes", "bytes_ratio", "comm_s", "comm_ratio", "aggregate_s", "aggregate_ratio",
                       "model_s", "model_ratio", "model_error"):
            figures.append(Figure("transports", f"{r['transport']} ({r['calls']})", metric, r[metric], how))
    return figures


def print_transports(figures: list[Figure]) -> None:
    rows = by_case(figures)
    print(f"transports: {figures[0].how}")
    print(f"  {'transport':<38} {'wire MB':>8} {'bytes x':>8} {'comm ms':>8} {'comm x':>7} "
          f"{'aggr ms':>8} {'aggr x':>7} {'model ms':>9} {'model x':>8} {'model err':>9}")
    for case, r in rows.items():
        print(f"  {case:<38} {r['wire_bytes'].value / 1e6:>8.2f} {r['bytes_ratio'].value:>8.1f} {r['comm_s'].value * 1e3:>8.1f} "
              f"{r['comm_ratio'].value:>7.1f} {r['aggregate_s'].value * 1e3:>8.1f} {r['aggregate_ratio'].value:>7.1f} "
              f"{r['model_s'].value * 1e3:>9.1f} {r['model_ratio'].value:>8.1f} {r['model_error'].value:>+9.0%}")
