"""Count what a chain of torch ops moves: the brute-force reference for the pass counts that
strategies and transports declare (Strategy.bytes, Transport.wire_bytes) and for the optimizer
steps (lionsim.steptime.optimizer_steps).

`count(fn)` runs `fn` (on CPU tensors; the same ops a CUDA tensor takes) under a dispatch mode
and adds up, per op that launches a kernel:

- read: every distinct tensor argument (an operand passed twice, as in addcmul_(g, g), is one
  read: the second load of the same address comes from cache);
- written: every argument the op's schema marks as written (in-place and foreach ops) and every
  fresh output it allocates.

Views (reshape, as_strided) move nothing and launch nothing. Ops on tensors of at most one
element (a step counter, a norm's scalar) are the host's bookkeeping, not a pass over the
parameters: they are left out of the bytes and the ops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


@dataclass(frozen=True, slots=True)
class Counted:
    nbytes: int
    """Bytes read and written in all."""
    ops: int
    """Ops that moved them (kernels a GPU launches, one per foreach op)."""
    names: tuple[str, ...]
    """The ops, in order."""


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _size(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class _Counter(TorchDispatchMode):
    def __init__(self, bucket: Callable[[], str] = lambda: "") -> None:
        super().__init__()
        self.bucket = bucket
        self.nbytes: dict[str, int] = {}
        self.names: dict[str, list[str]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.is_view or _Paused.depth:
            return out
        schema = func._schema
        inputs, written = [], []
        for i, arg in enumerate(schema.arguments):
            value = kwargs.get(arg.name) if arg.kwarg_only or i >= len(args) else args[i]
            tensors = _tensors(value)
            inputs += tensors
            if arg.alias_info is not None and arg.alias_info.is_write:
                written += tensors
        written_ids = {id(t) for t in written}
        fresh = [t for t in _tensors(out) if id(t) not in written_ids
                 and not any(t.untyped_storage().data_ptr() == w.untyped_storage().data_ptr() for w in written)]
        if max((t.numel() for t in inputs + fresh), default=0) <= 1:
            return out  # host bookkeeping (step counts, scalars)
        seen, reads = set(), 0
        for t in inputs:
            key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape))
            if t.numel() > 1 and key not in seen:
                seen.add(key)
                reads += _size(t)
        key = self.bucket()
        self.nbytes[key] = self.nbytes.get(key, 0) + reads + sum(_size(t) for t in written + fresh if t.numel() > 1)
        self.names.setdefault(key, []).append(func.__name__)
        return out


def count(fn: Callable[[], object]) -> Counted:
    """What `fn`'s torch ops move (module doc)."""
    with _Counter() as counter:
        fn()
    return Counted(counter.nbytes.get("", 0), len(counter.names.get("", [])), tuple(counter.names.get("", [])))


class _Paused:
    """Ops run inside it (a stand-in collective's own tensor copies) are not counted."""

    depth = 0

    def __enter__(self):
        _Paused.depth += 1

    def __exit__(self, *exc):
        _Paused.depth -= 1


class OneRank:
    """One worker of `world_size` (a Comm, lionsim.backends.comm): what a rank of a real run
    holds, so the ops a transport runs are one worker's. Its collectives return tensors of the
    right shape and dtype (every worker sending what this one sent) and are not counted."""

    def __init__(self, world_size: int, workers_per_node: int = 1) -> None:
        self.world_size, self.local_workers, self.first_worker = world_size, 1, 0
        self.ranks, self.workers_per_node = world_size, workers_per_node

    def all_reduce(self, x, op="sum"):
        with _Paused():
            return x.clone()

    def all_gather(self, x):
        with _Paused():
            return x.unsqueeze(1).repeat(1, self.world_size, *([1] * (x.dim() - 1)))

    def all_to_all(self, x):
        with _Paused():
            return x.clone()

    def gather(self, x, root=0):
        with _Paused():
            return x.repeat(self.world_size, *([1] * (x.dim() - 1)))

    def broadcast(self, x, root=0, like=None):
        with _Paused():
            return (x if x is not None else like).unsqueeze(0).clone()

    def exchange_control(self, x):
        with _Paused():
            return x.repeat(self.world_size, *([1] * (x.dim() - 1)))

    def max_over_ranks(self, x):
        return x

    def nodes(self):
        raise NotImplementedError("a hierarchical transport's node groups are not modelled by OneRank")

    def take_log(self):
        return []


def count_step(strategy: str, transport: str, workers: int, shapes: list[tuple[int, ...]],
               options: dict | None = None, steps: int = 3) -> dict[str, Counted]:
    """What one worker of `workers` moves in its last of `steps` training steps on parameter tensors
    of `shapes`, running the GPU paths (lionsim.packing.reference_paths): "rule" (the strategy's
    encode), "pack" and "unpack" (the transport's encode and decode sections), "update" (apply).
    A step that sends nothing (a local step) has no pack or unpack."""
    from lionsim.packing import reference_paths
    from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
    from lionsim.timing import Clock
    from lionsim.transports import TRANSPORTS

    layout = ParamLayout.of([(f"p{i}", torch.zeros(s)) for i, s in enumerate(shapes)])
    comm = OneRank(workers)
    g = torch.Generator().manual_seed(0)
    params = torch.randn(layout.numel, generator=g)
    strat = STRATEGIES.get(strategy)(StrategyConfig(options=dict(options or {})), layout, comm)
    wire = TRANSPORTS.get(transport)()
    clock = Clock()
    names = {"encode": "pack", "decode": "unpack"}
    counter = _Counter(lambda: names.get(clock.current(), clock.current()))
    with reference_paths():
        for step in range(1, steps + 1):
            grads = torch.randn(1, layout.numel, generator=g)
            last = step == steps
            with counter if last else _Paused():
                counter.bucket = lambda: "rule"
                with clock.section("encode"):
                    payload = strat.encode(grads, params, comm, clock)
                counter.bucket = lambda: names.get(clock.current(), clock.current())
                aggregate = None if payload is None else wire.aggregate(payload, comm, clock)
                counter.bucket = lambda: "update"
                strat.apply(params, aggregate)
                strat.sync(comm, step, clock)
    return {k: Counted(counter.nbytes[k], len(counter.names[k]), tuple(counter.names[k])) for k in counter.nbytes
            if k != "collective"}
