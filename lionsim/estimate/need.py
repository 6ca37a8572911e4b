"""`lionsim estimate --need utilisation=U`: the inter-node bandwidth each strategy needs for
compute to be U of its step.

Compute utilisation as the local-step papers define it (Douillard et al. 2025, Streaming DiLoCo,
Figure 4: "a compute utilization of 0.8 means 80% of the time is spent in computation, and 20%
in communication"): the share of the step a worker spends on its own work (forward, backward,
its codec, its optimizer steps), the rest being spent waiting for the network (or, with
--compute-spread, for the slowest worker). For one strategy the step is a function of the inter
link's bandwidth B (GB/s, per node on a two-level network, its efficiency folded in, as `--sweep
bandwidth=` sets it: what the link moves; the link's own rate that moves B at the network's
efficiency, B / efficiency, is link_needed_GBps, lionsim.reports.rates):

    u(B) = 1 - (comm_exposed_s(B) + wait_s) / step_s(B)        (estimate's columns; busy_share)

(It was compute_s / step_s, forward + backward alone, which held a method whose optimizer step
takes a twentieth of the step below 95% at any bandwidth: the papers' compute model has no
optimizer time, and a worker running its optimizer is not waiting for the link.)

u need not rise with B under NCCL: NCCL's tuning model ranks its algorithms with the link's rate
(the NIC speed the system reports: NVIDIA/nccl src/graph/topo.cc sets the NET node's bandwidth
from the network plug-in's `speed`, which the socket transport reads from /sys/class/net/<nic>/speed),
while the fabric prices what the transport moves (lionsim.network.nccl, fabrics). A faster link can
flip a call to an algorithm the fabric prices slower (over sockets, a ring to a tree once the link
passes the cap; on InfiniBand, where NCCL's latencies and LL128 differ from the fitted ones), and
the step rises. Between flips u never falls (a faster link shortens or keeps every exchange, the
overlap hides at least as much, the work is the same). So the lowest B with u(B) = U is found by
scanning a geometric grid (SCAN_PER_DECADE points a decade from TINY_GBPS to HUGE_GBPS) for the
first rate that reaches U, then bisecting on log B between it and the grid point before:

- no grid rate reaches U: the best of them is the best any link gives (the per-call latencies, the
  intra-node hops and a fabric's throughput cap remain), and the strategy cannot reach U at any
  bandwidth: bandwidth_needed_GBps is NaN and `need_note` says how close it comes, and why
  where a fabric's cap is what stops it (`capped_note`).
- u at TINY_GBPS already at or above U (a strategy that sends nothing across nodes, or what
  need_rows answers for one node, which the command refuses: with_need): it needs no inter-node
  bandwidth, 0.
- otherwise bisection between the first grid rate that reaches U and the one before it, until the
  bracket's upper end is within REL_TOL of its lower end; the upper end (a bandwidth that reaches
  U) is the answer. A window of rates reaching U that opens and closes again between two grid
  points (two flips within 15% of each other) would be missed: NCCL's choice for a call flips
  a few times over the whole range, where the window would need two.

A local-step strategy's row is the mean step of a round of H steps (estimate.table), so its
u is the round's compute share, as the DiLoCo papers state compute utilisation.

B is the link's rate. Under NCCL a fabric may move less than the link (lionsim.network.fabrics:
EFA's share of it; the socket transport caps a node at channels x 0.98 GB/s whatever the link),
and `--need` keeps the network's fabric as it is and searches every rate, since NCCL keeps choosing
on the link's rate beyond the cap: a target that needs more than the cap gives is unreachable, and
the note says the cap is the reason and its remedies: more channels (a profile's `[nccl]
min_nchannels`, lionsim.network.sockets) raise the sockets fabric's cap, and an RDMA fabric
(`fabric = "ib"` in a profile) has none.
"""

from __future__ import annotations

import dataclasses
import math

from lionsim.estimate.config import Resolved
from lionsim.estimate.library_note import cap_reason
from lionsim.estimate.plain import Need
from lionsim.estimate.sweep import check_crosses_nodes, with_bandwidth
from lionsim.estimate.table import estimate_rows

HUGE_GBPS = 1e9
"""Stands for infinite bandwidth: an exabyte a second, where no exchange lasts a picosecond."""
TINY_GBPS = 1e-9
"""Stands for no bandwidth: one byte a second."""
SCAN_PER_DECADE = 16
"""Grid rates a decade the scan prices (15% apart) before bisecting: module doc."""
REL_TOL = 1e-6
"""The bisection stops when the bracket's ends are within this fraction of each other."""
MAX_ITERATIONS = 200
"""log2(ln(one grid step) / ln(1 + REL_TOL)) is about 18: far more than enough, a guard only."""
COLUMNS = ["bandwidth_needed_GBps", "link_needed_GBps", "need_utilisation", "need_note"]
"""The columns --need adds to estimate.csv: bandwidth_needed_GBps what the inter link moves,
link_needed_GBps the link's own rate that moves it at the network's efficiency (the same at 1)."""


def busy_share(row) -> float:
    """The share of a priced step (an estimate row) the worker spends on its own work: not waiting
    for the network (comm_exposed_s) nor for the slowest worker (wait_s); module doc."""
    return 1.0 - (row["comm_exposed_s"] + row["wait_s"]) / row["step_s"]


def utilisation_at(r: Resolved, gbps: float) -> float:
    """busy_share of `r`'s one run with the inter link at `gbps` GB/s."""
    (row,) = estimate_rows(r, r.workers, with_bandwidth(r.network, gbps))
    return busy_share(row)


def _cap(r: Resolved):
    """The network's fabric when it caps a node's throughput under NCCL across nodes, else None."""
    network = r.network
    if network.traits.model != "nccl" or network.nodes(r.workers) <= 1:
        return None
    fabric = network.nccl_fabric()
    return None if math.isinf(fabric.cap_GBps) else fabric


def percent(value: float, target: float) -> str:
    """`value` as a percentage with the fewest decimals (one at least) that keep it on its own side
    of `target`: 89.96% against a 90% target, never "90.0%" (which would read as reaching it)."""
    for digits in range(1, 7):
        text = f"{value:.{digits}%}"
        shown = float(text[:-1]) / 100
        if (shown < target) == (value < target) and (shown == target) == (value == target):
            return text
    return f"{value:.6%}"


def target_text(target: float) -> str:
    """The target U as typed, in percent: 0.955 is 95.5%, not a rounded 96%."""
    return f"{target * 100:.6g}%"


def uncapped_note(r: Resolved, gbps: float) -> str:
    """Where the answer lies above what this network's fabric moves a node under NCCL, on a library
    the model gives no cap (ideal, gloo: a preset that says "NCCL over sockets"): say so, as that
    bandwidth is out of reach for NCCL on it. "" otherwise (a capped library's search stops at the cap)."""
    network = r.network
    if network.traits.model == "nccl" or network.nodes(r.workers) <= 1 or not gbps > 0:
        return ""
    fabric = network.nccl_fabric()
    if math.isinf(fabric.cap_GBps) or gbps <= fabric.cap_GBps:
        return ""
    return (f"above NCCL's cap here: NCCL's {fabric.name} transport moves at most {fabric.cap_GBps:g} GB/s a node "
            f"on this network (--traits nccl prices that cap); the {network.traits.name} library priced here has none")


def capped_note(r: Resolved, best: float, target: float) -> str:
    """Why a target is out of reach where the network's fabric caps a node's throughput (module
    doc); "" where no cap applies."""
    fabric = _cap(r)
    if fabric is None:
        return ""
    return f"unreachable, compute at most {percent(best, target)} of the step: " + cap_reason(fabric.name, fabric.cap_GBps)


def shared_reason(row) -> str:
    """The part of an estimate row's need_note every capped run on its network shares (cap_reason,
    after ": "), "" where the note has none: a table prints it once under the rows."""
    fabric, note = row.get("fabric"), row.get("need_note")
    if not isinstance(fabric, str) or not fabric or not isinstance(note, str):
        return ""
    reason = cap_reason(fabric, row["fabric_cap_GBps"])
    return reason if note.endswith(": " + reason) else ""


def footnoted(rows: list[dict]) -> tuple[list[str], list[str]]:
    """Each row's need_note as its table cell, and the reasons the cells mark [1], [2], ... (each said
    once under the table): a note's part after ": " that two or more rows share (a fabric's cap,
    `shared_reason`, even on one row), or a whole note two or more rows share."""
    from collections import Counter

    notes = [row.get("need_note") if isinstance(row.get("need_note"), str) else "" for row in rows]
    tails = [shared_reason(row) or note.partition(": ")[2] for row, note in zip(rows, notes)]
    tail_count, note_count = Counter(filter(None, tails)), Counter(filter(None, notes))
    reasons: dict[str, int] = {}  # reason -> its number
    cells = []
    for row, note, tail in zip(rows, notes, tails):
        if tail and (tail_count[tail] > 1 or shared_reason(row)):
            head, reason = note[:-len(tail) - 2], tail
        elif note and note_count[note] > 1:
            head, reason = "", note
        else:
            cells.append(note)
            continue
        number = reasons.setdefault(reason, len(reasons) + 1)
        cells.append(f"{head} [{number}]" if head else f"[{number}]")
    return cells, list(reasons)


def scan_grid(top: float = HUGE_GBPS) -> list[float]:
    """The rates the scan prices: SCAN_PER_DECADE a decade, geometric, from TINY_GBPS to `top`."""
    points = math.ceil(math.log10(top / TINY_GBPS) * SCAN_PER_DECADE)
    return [TINY_GBPS * (top / TINY_GBPS) ** (i / points) for i in range(points + 1)]


def solve(utilisation, target: float, capped=lambda best, target: "", top: float = HUGE_GBPS) -> tuple[float, str]:
    """(the lowest bandwidth in GB/s at which `utilisation(B)` reaches `target`, note) for a
    `utilisation` on (0, top] that never falls between a few downward steps (module doc: NCCL's
    choice flips); (NaN, why) where no bandwidth reaches it (`capped(best, target)`: the reason
    where it is a fabric's cap, else "")."""
    grid = scan_grid(top)
    shares = []  # priced up to the first grid rate that reaches the target: the rest are not needed
    for rate in grid:
        shares.append(utilisation(rate))
        if shares[-1] >= target:
            break
    if shares[0] >= target:
        return 0.0, "needs no inter-node bandwidth"
    first = len(shares) - 1 if shares[-1] >= target else None
    if first is None:
        best = max(shares)
        return math.nan, (capped(best, target) or
                          f"unreachable: compute is at most {percent(best, target)} of the step at any bandwidth")
    lo, hi = grid[first - 1], grid[first]  # utilisation(lo) < target <= utilisation(hi)
    for _ in range(MAX_ITERATIONS):
        if hi <= lo * (1.0 + REL_TOL):
            break
        mid = math.sqrt(lo * hi)
        if utilisation(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi, ""


def need_rows(r: Resolved, need: Need) -> list[dict]:
    """One record per run of `r`: the bandwidth it needs for `need`, and a note where it has one."""
    records = []
    for run in r.runs:
        # each run alone, its steady step only (no whole run, no baseline to find among the others)
        alone = dataclasses.replace(r, runs=[run], baseline=None, run_steps=None, run_tokens=None,
                                    convergence=None)
        gbps, note = solve(lambda b, alone=alone: utilisation_at(alone, b), need.utilisation,
                           lambda best, target, alone=alone: capped_note(alone, best, target))
        note = note or uncapped_note(alone, gbps)
        records.append({"bandwidth_needed_GBps": gbps, "link_needed_GBps": gbps / r.network.inter.efficiency,
                        "need_utilisation": need.utilisation, "need_note": note})
    return records


def with_need(frame, r: Resolved, need: Need):
    """`frame` (estimate's rows for `r`, in run order) with the --need columns; refused where every
    worker sits on one node (check_crosses_nodes: every run would need 0 GB/s)."""
    check_crosses_nodes(r, f"--need utilisation={need.utilisation:g}", "solves for the inter-node link's bandwidth")
    out = frame.copy()
    records = need_rows(r, need)
    for name in COLUMNS:
        out[name] = [rec[name] for rec in records]
    return out
