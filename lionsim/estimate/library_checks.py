"""What the network's library cannot price as asked, refused in one line before anything is priced
(estimate; comm takes the --algorithm check too).

- `--algorithm NAME` that the library does not run: a library declares, per op whose algorithm it
  chooses itself, what it runs that op by (Traits.runs_op): NCCL's tuning model a ring or a tree
  all-reduce (NVLS where the nodes have it) and rings for its other collectives
  (lionsim.network.nccl.RUNS); gloo the algorithm its traits pin for each op it has (a flat ring;
  pairwise all-to-all; the parameter server), never lionsim's hierarchical plans. Another algorithm
  for such an op (Rabenseifner, recursive doubling, Bruck, binomial; a tree under gloo) would be
  priced by lionsim's textbook formulas in a row labelled with that library, though it never runs
  it: refused, naming the libraries that do price it (ideal and mpi, which declare nothing: lionsim's
  cheapest plans, any algorithm as named). An algorithm only for ops the library leaves to lionsim's
  plans (pairwise all-to-all under NCCL: its point-to-point sends) is what auto prices there too.
- a profile's `reduce_GBps` (the link's reduction rate, gamma = 1 / it) under NCCL: NCCL's tuning
  model has no reduction term (its kernels reduce as they move the data, inside the bandwidth it
  models: tuning.cc), so it acts only on the reductions lionsim's own plans price, a hierarchical
  transport's phases in a node or across nodes. Where no run issues one on that link it would change
  nothing: refused, as a profile's [nccl] min_nchannels is where its fabric cannot act.
"""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS
from lionsim.ranges import refusal
from lionsim.whole import Text

TEXTBOOK_LIBRARIES = "--traits ideal or mpi"
"""The libraries that price every registered algorithm as named (the alpha-beta formulas)."""
REDUCING_OPS = ("all_reduce", "reduce_scatter", "reduce")
"""The ops whose formulas carry a gamma term (lionsim.network.collectives)."""
SCOPE_OF_LINK = {"inter": "inter", "intra": "intra"}
"""A profile's link table -> the scope of the calls lionsim's plans price on it (calls.py)."""


def refused_ops(traits, name: str) -> list[str]:
    """The ops of algorithm `name` that the library of `traits` runs by another algorithm (module
    doc); [] where it runs `name` as named."""
    return [op for op in COLLECTIVE_ALGORITHMS.get(name).ops if name not in (traits.runs_op(op) or (name,))]


def spelled(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def check_library_algorithm(network, algorithm: str, typed: object) -> None:
    """Refuse `--algorithm` (typed as `typed`) that the library pricing `network` does not run
    (module doc); auto, and every algorithm under a library that declares nothing, pass."""
    if algorithm == AUTO:
        return
    name = COLLECTIVE_ALGORITHMS.get(algorithm).name  # an unknown name: one line with the list
    traits = network.traits
    ops = refused_ops(traits, name)
    if not ops:
        return
    accepted = [AUTO, *(n for n in COLLECTIVE_ALGORITHMS.names() if not refused_ops(traits, n))]
    by: dict[tuple[str, ...], list[str]] = {}  # ops run alike said once: "its broadcast and reduce as ring"
    for op in ops:
        by.setdefault(traits.runs_op(op), []).append(op)
    runs = "; ".join(f"it runs its {' and '.join(same)} as {spelled(list(algos))}" for algos, same in by.items())
    raise LionsimError(refusal(
        "--algorithm", Text(str(typed)),
        f"{spelled(accepted)} with {traits.name}; or {TEXTBOOK_LIBRARIES} for the textbook algorithms",
        f"{network.name} is priced by {traits.name}, which runs no {name} {' or '.join(ops)}: {runs}"))


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
