"""What the NCCL library cannot price as asked, refused in one line before anything is priced.

- `--algorithm NAME` under NCCL: NCCL chooses its own algorithm for every collective its tuning
  model knows (lionsim.network.nccl: ring or tree all-reduces, NVLS where the nodes have it, rings
  for the rest), and a named one it has (ring, tree) is priced as NCCL runs it. Another (Rabenseifner,
  recursive doubling, Bruck, binomial) would be priced by lionsim's textbook formulas and labelled
  nccl, though NCCL never runs it: refused, naming the libraries that do price it. An algorithm for
  the ops NCCL's model does not price (pairwise all-to-all: NCCL's point-to-point sends; the
  parameter server) is what auto prices there too, and is accepted.
- a profile's `reduce_GBps` (the link's reduction rate, gamma = 1 / it) under NCCL: NCCL's tuning
  model has no reduction term (its kernels reduce as they move the data, inside the bandwidth it
  models: tuning.cc), so it acts only on the reductions lionsim's own plans price, a hierarchical
  transport's phases in a node or across nodes. Where no run issues one on that link it would change
  nothing: refused, as a profile's [nccl] min_nchannels is where its fabric cannot act.
"""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.network import COLLECTIVE_ALGORITHMS
from lionsim.network.nccl import ALGORITHMS as NCCL_ALGORITHMS, NCCL_OPS
from lionsim.ranges import refusal
from lionsim.whole import Text

TEXTBOOK_LIBRARIES = "--traits ideal or mpi"
"""The libraries that price every registered algorithm as named (the alpha-beta formulas)."""
REDUCING_OPS = ("all_reduce", "reduce_scatter", "reduce")
"""The ops whose formulas carry a gamma term (lionsim.network.collectives)."""
SCOPE_OF_LINK = {"inter": "inter", "intra": "intra"}
"""A profile's link table -> the scope of the calls lionsim's plans price on it (calls.py)."""


def nccl_runs(name: str) -> bool:
    """Whether `--algorithm name` prices what NCCL runs (module doc)."""
    return name in NCCL_ALGORITHMS or not set(COLLECTIVE_ALGORITHMS.get(name).ops) & set(NCCL_OPS)


def check_nccl_algorithm(r, typed: object) -> None:
    """Refuse `--algorithm` (typed as `typed`, canonical in r.algorithm) that NCCL does not run where
    NCCL prices r's network (module doc)."""
    if r.network.traits.model != "nccl" or nccl_runs(r.algorithm):
        return
    names = ["auto", *(n for n in COLLECTIVE_ALGORITHMS.names() if nccl_runs(n))]
    accepted = f"{', '.join(names[:-1])} or {names[-1]}"
    ops = " and ".join(COLLECTIVE_ALGORITHMS.get(r.algorithm).ops)
    raise LionsimError(refusal(
        "--algorithm", Text(str(typed)),
        f"{accepted} with nccl; or {TEXTBOOK_LIBRARIES} for the textbook algorithms",
        f"{r.network.name} is priced by NCCL, which runs no {r.algorithm} {ops}: NCCL's all-reduce is a ring or "
        "a tree (NVLS / NVLS Tree on NVLink SHARP nodes), its other collectives rings"))


def check_reduce_rate(r, source: str) -> None:
    """Refuse a link's reduce_GBps where NCCL prices r's network and no run issues a reduction that
    lionsim's plans price on that link (module doc). `source`: the profile as --network named it."""
    if r.network.traits.model != "nccl":
        return
    stated = {name: link for name, link in (("inter", r.network.inter), ("intra", r.network.intra))
              if link is not None and link.gamma_s_per_byte > 0}
    if not stated:
        return
    from lionsim.estimate.probe import issued_calls

    reduced = {scope for op, scope in issued_calls(r) if op in REDUCING_OPS}
    for name, link in stated.items():
        if SCOPE_OF_LINK[name] in reduced:
            continue
        rate = 1.0 / (link.gamma_s_per_byte * 1e9)
        runs = ", ".join(run.label for run in r.runs)
        raise LionsimError(
            f"{source}: {name}.reduce_GBps = {rate:g} changes nothing here: NCCL prices this network and its "
            "tuning model has no reduction rate (its kernels reduce as they move the data), and no run "
            f"({runs}) reduces in a phase {'across' if name == 'inter' else 'inside'} nodes that lionsim's own "
            "plans price (a hierarchical transport's, -s NAME@hier:TRANSPORT, on nodes of several GPUs); "
            f"accepted here: no reduce_GBps, or {TEXTBOOK_LIBRARIES} (every reduction pays it)")
