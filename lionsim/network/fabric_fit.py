"""Fit a fabric's figures (fabrics.py) to published nccl-tests sweeps.

For one fabric, the free figures are (fabrics.py):

- ib: the three hop latencies and LL128's share of NCCL's modelled bandwidth (the presets' IB
  links are already achieved rates, so no share of the link);
- efa: one extra per hop over ib's (EFA with GPUDirect RDMA is RDMA with a longer path) and the
  share of the link it moves;
- efa-host: Simple's hop latency and the per-node cap (data through host memory), on the sweeps
  of networks that state no host rate of their own; a network that does (nccl.bounce_GBps,
  lionsim.network.sockets) has that one figure fitted on its own fit sweeps, beside the fabric's
  fitted hop (`fit_hosts`);
- sockets: LL's and Simple's hop latencies, the rate per socket-transport channel (each sweep's
  network states the channels it ran, lionsim.network.sockets, so its per-node cap is channels x
  the rate) and LL's share of NCCL's modelled bandwidth (LL's flags halve
  what each 8-byte word carries; through a socket it gets less still).

Each candidate
prices every row of the fabric's fit sweeps as `lionsim comm --traits nccl` would (NCCL's
choice by its own constants, priced on the candidate), and the fit minimises the mean over
sweeps of each sweep's mean squared log error (so a sweep of 30 rows and one of a single row
weigh the same), by Nelder-Mead on the logarithms of the figures (numpy only), from a fixed
start: the result is deterministic. Figures are rounded to two significant digits.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

from lionsim.errors import LionsimError
from lionsim.network.fabrics import FABRICS, Fabric
from lionsim.network import nccl
from lionsim.whole_nodes import fills_nodes, node_count


def _round2(x: float) -> float:
    """Two significant digits."""
    return float(f"{x:.2g}")


def _sweep_pricer(sweep) -> Callable[..., np.ndarray]:
    """log(priced / published) for every row of `sweep`, as a function of the fabric and, where
    given, the host rate its network states (nccl.bounce_GBps) in place of the profile's."""
    from lionsim.network.profile import load_network

    network = load_network(sweep.network)
    g = network.workers_per_node
    if not fills_nodes(sweep.workers, g):  # lionsim's own record is wrong, not anything the user typed
        raise LionsimError(f"internal error: published sweep {sweep.key}'s record (lionsim.published.sweeps) has "
                           f"{sweep.workers} workers, which do not fill whole nodes of its network {network.name} "
                           f"({g} a node)")
    m = node_count(sweep.workers, g)
    intra = network.intra if g > 1 else None
    inter = network.inter_link()
    sizes, published = zip(*sorted(sweep.times_us().items()))
    published_s = np.array(published) * 1e-6

    def log_errors(fabric: Fabric, bounce_GBps: float | None = None) -> np.ndarray:
        host = network if bounce_GBps is None else dataclasses.replace(
            network, sockets=dataclasses.replace(network.sockets, bounce_GBps=bounce_GBps))
        run = host.on_fabric(fabric)  # the sweep's own NCCL settings (sockets' channels, a host's rate)
        priced = [nccl.pick("all_reduce", s, sweep.workers, m, intra, inter, fabric=run,
                            version=network.sockets.release, nvls=network.nvls).time_s for s in sizes]
        return np.log(np.array(priced) / published_s)

    return log_errors


def _parameters(name: str, ib: Fabric) -> tuple[Callable[[np.ndarray], Fabric], np.ndarray]:
    """(log figures -> Fabric, the starting log figures) for fabric `name`; `ib`: the fitted ib,
    which efa builds on (fabrics.py)."""
    base = FABRICS.get(name)
    e = np.exp
    if name == "ib":  # the three hops and LL128's bandwidth share
        return (lambda x: dataclasses.replace(base, hop_us=tuple(float(v) for v in e(x[:3])),
                                              protocol_share=(1.0, min(1.0, float(e(x[3]))), 1.0))), \
            np.log([5.0, 8.5, 14.0, 0.8])
    if name == "efa":  # ib's hops plus one extra per hop, ib's protocol shares; the link's share
        return (lambda x: dataclasses.replace(base, hop_us=tuple(h + float(e(x[0])) for h in ib.hop_us),
                                              share=min(1.0, float(e(x[1]))), protocol_share=ib.protocol_share)), \
            np.log([15.0, 0.5])
    if name == "efa-host":  # Simple only: its hop and the per-node cap
        return (lambda x: dataclasses.replace(base, hop_us=(float(e(x[0])),) * 3, cap_GBps=float(e(x[1])))), \
            np.log([30.0, 3.0])
    if name == "sockets":  # LL's hop (LL128 off), Simple's, the rate per channel and LL's bandwidth share
        return (lambda x: dataclasses.replace(base, hop_us=(float(e(x[0])),) * 2 + (float(e(x[1])),),
                                              channel_GBps=float(e(x[2])),
                                              protocol_share=(min(1.0, float(e(x[3]))), 1.0, 1.0))), \
            np.log([40.0, 80.0, 0.75, 0.5])
    raise ValueError(f"no fit for fabric {name!r}")


def nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, *, step: float = 0.3, iterations: int = 2000,
                tolerance: float = 1e-10) -> np.ndarray:
    """The minimum of f near x0 by the Nelder-Mead simplex (standard coefficients 1, 2, 0.5, 0.5)."""
    n = len(x0)
    simplex = [np.array(x0, float)] + [np.array(x0, float) + step * np.eye(n)[i] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = np.argsort(values)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        fr = f(reflected)
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - simplex[-1])
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (x - simplex[0]) for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    return simplex[int(np.argmin(values))]


def fit(name: str, sweeps: Sequence, ib: Fabric | None = None) -> Fabric:
    """Fabric `name` with its figures fitted to `sweeps` (every row; module doc), rounded; efa
    builds on `ib` (default: the ib in fabrics.py)."""
    make, x0 = _parameters(name, ib or FABRICS.get("ib"))
    pricers = [_sweep_pricer(s) for s in sweeps]
    if not pricers:
        raise ValueError(f"no fit sweeps for fabric {name!r}")

    def loss(x: np.ndarray) -> float:
        fabric = make(x)
        return float(np.mean([np.mean(p(fabric) ** 2) for p in pricers]))

    best = make(nelder_mead(loss, x0))
    hop = tuple(_round2(h) for h in best.hop_us)
    cap = best.cap_GBps if math.isinf(best.cap_GBps) else _round2(best.cap_GBps)
    keys = ", ".join(s.key for s in sweeps)
    channel = None if best.channel_GBps is None else _round2(best.channel_GBps)
    return dataclasses.replace(best, hop_us=hop, share=_round2(best.share), cap_GBps=cap, channel_GBps=channel,
                               protocol_share=tuple(_round2(v) for v in best.protocol_share), fitted_on=keys)


FITTED = ("ib", "efa", "efa-host", "sockets")
"""The fabrics fitted to sweeps, in fitting order (efa builds on ib)."""


def states_host(sweep) -> bool:
    """Whether the sweep's network states its own host rate (nccl.bounce_GBps)."""
    from lionsim.network.profile import load_network

    return load_network(sweep.network).sockets.bounce_GBps is not None


def fit_all(sweeps: Sequence) -> dict[str, Fabric]:
    """Every fitted fabric on its "fit" sweeps (efa on the ib just fitted), leaving out those whose
    network states its own host rate (fit_hosts fits that)."""
    out: dict[str, Fabric] = {}
    for name in FITTED:
        mine = [s for s in sweeps if s.fabric == name and s.role == "fit" and not states_host(s)]
        out[name] = fit(name, mine, out.get("ib"))
    return out


def fit_hosts(sweeps: Sequence, fabrics: dict[str, Fabric]) -> dict[str, float]:
    """Each network that states a host rate (nccl.bounce_GBps): that rate fitted on its "fit" sweeps
    (the mean over them of each one's mean squared log error, as `fit`), with its fabric's fitted
    figures otherwise; by network path, rounded to two significant digits."""
    by_network: dict[str, list] = {}
    for s in sweeps:
        if s.role == "fit" and states_host(s):
            by_network.setdefault(s.network, []).append(s)
    out: dict[str, float] = {}
    for network, mine in by_network.items():
        fabric = fabrics[mine[0].fabric]
        pricers = [_sweep_pricer(s) for s in mine]

        def loss(x: np.ndarray) -> float:
            bounce = float(np.exp(x[0]))
            return float(np.mean([np.mean(p(fabric, bounce) ** 2) for p in pricers]))

        out[network] = _round2(float(np.exp(nelder_mead(loss, np.log([fabric.cap_GBps]))[0])))
    return out
