"""What strategies hand to transports. Every tensor has a leading local-worker dim [w, ...].

Each payload kind says how its parts combine; a transport declares the kinds it carries
(its `carries`), and a strategy/transport pair is valid only when the kinds match.

    dense         float values, averaged                        (gradients)
    votes         +1/0/-1 int8 votes (0 abstains), combined by a VoteRule  (Distributed Lion, signum)
    levels        small signed ints |l| <= max_level, summed    (Lion Cub L1 levels, TernGrad)
    scaled-signs  +1/-1 signs with a float scale per tensor, averaged  (EF-signSGD)
    sparse        (index, value) pairs, k per worker, averaged over all N workers (DGC) or over
                  the workers that sent each index (DeMo's DCT coefficients)
    scaled-levels signed ints |l| <= max_level with a float scale per tensor, averaged  (QSGD)
    onebit        +1/-1 signs with one float scale per worker, compressed-averaged with
                  server error feedback  (1-bit Adam; its warm-up steps send `dense`)
    lowrank       float matrices averaged through rank-r factors P, Q (two all-reduces) and
                  the tensors not worth compressing averaged whole  (PowerSGD; its warm-up
                  steps send `dense`)

Each kind is registered in PAYLOAD_KINDS with what lionsim needs of it besides its transports
(PayloadKind: the aggregate of a lone worker, the bytes its local rule writes): a plug-in that
needs a new kind registers one beside its strategy and transport (docs/writing-a-strategy.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import Tensor

from lionsim.aggregators import VOTE_RULES, VoteRule
from lionsim.registry import Registry


@dataclass(frozen=True, slots=True, kw_only=True)
class PayloadSpec:
    """The shape of a payload without its data: enough to price it with no training."""

    kind: str
    """A name of PAYLOAD_KINDS."""
    numel: int
    """Parameters carried."""
    rule: VoteRule | None = None
    """votes: how they combine."""
    abstain: bool = False
    """votes: some worker abstained (a zero vote) this step, so the transport also carried who
    voted. Set by the transport (lionsim.transports.abstain) on the spec the step is priced by."""
    max_level: int = 1
    """levels: the largest |level| a worker sends."""
    segments: int = 0
    """scaled-signs: number of tensors (one float scale each)."""
    k: int = 0
    """sparse: pairs each worker sends."""
    over_senders: bool = False
    """sparse: each position is the mean over the workers that sent it (DeMo), not over all N (DGC)."""
    factors: tuple[int, int] = (0, 0)
    """lowrank: floats of P and of Q summed over the compressed matrices (sum n r, sum m r)."""
    uncompressed: int = 0
    """lowrank: parameters averaged whole (vectors, matrices not worth compressing)."""
    columns: int = 0
    """lowrank: factor columns summed over the compressed matrices (sum r): Gram-Schmidt runs its
    kernels column by column, so they and the matrices set its launches."""
    matrices: int = 0
    """lowrank: matrices sent as factors."""
    hidden_steps: int = 0
    """Steps of compute its exchange runs behind: the result is used that many steps after it is
    sent (Streaming DiLoCo's tau), so a step waits only for what those steps do not hide."""
    hidden_pieces: tuple[tuple[tuple[float, float], ...], ...] = ()
    """A payload whose result only a later step's forward reads (Streaming DiLoCo's fragments): for
    each fragment a send may be (a send is one of them; a priced step is their mean), its parts
    [a, b) of the model as shares of it in forward order (one for a run of consecutive tensors, one
    per tensor for a strided fragment). Its exchange also hides behind the rest of backward and the
    next forward up to each part (lionsim.steptime.timeline.PricedStep.hidden). Empty: none."""


@dataclass(slots=True)
class Payload:
    """One step's payload: the spec plus the tensors (leading dim w)."""

    spec: PayloadSpec
    values: Tensor
    """dense: float [w, n]; votes: int8 [w, n] in {-1, 0, +1}; levels: int [w, n]; scaled-signs: int8 [w, n];
    sparse: float [w, k] values."""
    scales: Tensor | None = None
    """scaled-signs: float32 [w, T], one scale per tensor."""
    segment_ids: Tensor | None = None
    """scaled-signs: int64 [n], the tensor each parameter belongs to."""
    indices: Tensor | None = None
    """sparse: int64 [w, k] positions of `values`."""
    extra: dict = field(default_factory=dict)


# Signed dtypes that both gloo and NCCL can all-reduce, narrowest first: no int16, which
# neither backend sums (gloo raises "Invalid scalar type"), so int8 widens straight to int32.
_REDUCIBLE_INTS = (torch.int8, torch.int32, torch.int64)


def container_dtype(max_abs_sum: int) -> torch.dtype:
    """The narrowest all-reducible signed dtype holding sums up to +/-max_abs_sum:
    int8 while <= 127, then int32 (never int16), int64 past 2**31 - 1."""
    for dtype in _REDUCIBLE_INTS:
        if max_abs_sum <= torch.iinfo(dtype).max:
            return dtype
    raise ValueError(f"no integer container holds sums up to {max_abs_sum}")


def combine_alone(payload: Payload) -> Tensor:
    """The aggregate when a single worker takes part: nothing is sent, its own payload decoded."""
    return PAYLOAD_KINDS.get(payload.spec.kind).alone(payload)


@dataclass(frozen=True, slots=True)
class PayloadKind:
    """What lionsim needs of a payload kind besides the transports that carry it."""

    summary: str
    """One line: what it holds and how workers' payloads combine."""
    alone: Callable[[Payload], Tensor]
    """The aggregate [w, n] when a single worker takes part (nothing is sent: its payload decoded)."""
    written: Callable[[PayloadSpec], float]
    """Bytes per parameter the local rule writes as the payload (lionsim.steptime.passes)."""
    decoded: float = 1.0
    """Bytes per parameter of a lone worker's aggregate, which its update reads (its payload as is)."""
    values: str = "any"
    """The dtype of a payload's `values` (lionsim.transports.checks holds plug-ins to it): "float",
    "integer", or "any" (a plug-in's kind that declares none)."""
    lacks: Callable[[PayloadSpec], str] | None = None
    """What a spec of this kind lacks that its transports read ("" when nothing): a plug-in strategy's
    spec is held to it when its file loads (lionsim.plugins), and wherever a command reads a spec
    (spec_problem). None: a spec of this kind needs nothing beyond its kind and numel."""


PAYLOAD_KINDS: Registry[PayloadKind] = Registry("payload kind")
"""Every payload kind (module doc); a strategy's payload_kind and a transport's carries name them."""


def _as_float(payload: Payload) -> Tensor:
    return payload.values.float()


def _scaled(payload: Payload) -> Tensor:
    return payload.values * payload.scales[:, payload.segment_ids]


def _votes_alone(payload: Payload) -> Tensor:  # a zero vote abstains: nobody voted there
    return payload.spec.rule.result(payload.values, 1, voted=payload.values != 0)


def accepted_rules() -> str:
    """The vote rules a votes spec accepts, as a strategy writes them: `MajorityVote()` (mavo), ..."""
    return ", ".join(f"{cls.__name__}() ({name})" for name, cls in VOTE_RULES.items())


def _votes_lack(spec: PayloadSpec) -> str:
    if isinstance(spec.rule, VoteRule):
        return ""
    has = "no rule" if spec.rule is None else f"rule {spec.rule!r}, not a VoteRule"
    return (f"a votes spec with {has}; accepted: PayloadSpec(kind='votes', numel=..., rule=R), R one of "
            f"lionsim.aggregators' vote rules: {accepted_rules()}")


def _sparse_lack(spec: PayloadSpec) -> str:
    if isinstance(spec.k, int) and 1 <= spec.k <= spec.numel:
        return ""
    return (f"a sparse spec with k={spec.k!r} of numel={spec.numel:,}; accepted: PayloadSpec(kind='sparse', "
            "numel=N, k=K), 1 <= K <= N, the pairs each worker sends (at another size than its own, the "
            "strategy's spec_scaled says its K there: docs/writing-a-strategy.md)")


def spec_problem(spec: PayloadSpec) -> str:
    """What `spec` lacks that its kind's transports read, in words ("" when nothing: a kind with no
    `lacks`, or one nobody registered, which the strategy's own checks refuse)."""
    kind = PAYLOAD_KINDS.get(spec.kind) if spec.kind in PAYLOAD_KINDS else None
    return kind.lacks(spec) if kind is not None and kind.lacks is not None else ""


def _sparse_alone(payload: Payload) -> Tensor:
    dense = torch.zeros(payload.values.shape[0], payload.spec.numel, device=payload.values.device)
    return dense.scatter_add_(1, payload.indices, payload.values.float())


def _one_byte(spec: PayloadSpec) -> float:
    return 1.0  # an int8 vote, level or sign per parameter


PAYLOAD_KINDS.add("dense", PayloadKind("float values, averaged (gradients)", _as_float, lambda spec: 0.0, 4.0,
                                       values="float"))
PAYLOAD_KINDS.add("votes", PayloadKind("+1/0/-1 int8 votes combined by a vote rule", _votes_alone, _one_byte,
                                       values="integer", lacks=_votes_lack))
PAYLOAD_KINDS.add("levels", PayloadKind("small signed integer levels, summed", _as_float, _one_byte, values="integer"))
PAYLOAD_KINDS.add("scaled-signs", PayloadKind("signs with a float scale per tensor, averaged", _scaled, _one_byte, 4.0,
                                              values="integer"))
PAYLOAD_KINDS.add("sparse", PayloadKind(
    "(index, value) pairs, averaged over all workers or over those that sent each index", _sparse_alone,
    lambda spec: 12.0 * spec.k / spec.numel, 4.0, values="float",  # int64 index + float32 value per pair
    lacks=_sparse_lack))
PAYLOAD_KINDS.add("scaled-levels", PayloadKind("signed levels with a float scale per tensor, averaged", _scaled,
                                               _one_byte, values="integer"))
PAYLOAD_KINDS.add("onebit", PayloadKind("signs with one float scale per worker, compressed-averaged", _as_float,
                                        _one_byte, values="integer"))
PAYLOAD_KINDS.add("lowrank", PayloadKind("float matrices averaged through rank-r factors", _as_float, _one_byte,
                                         values="float"))
