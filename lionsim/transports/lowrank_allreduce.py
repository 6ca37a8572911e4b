"""lowrank-allreduce: PowerSGD's exchange (Vogels, Karimireddy & Jaggi 2019),
for the `lowrank` payload: each worker's error-compensated gradient M_i, cut into the
matrices worth compressing (`LowRank.matrices`) and the rest.

    the rest (vectors, small matrices): all-reduce, / N                     (all-reduce 1)
    per matrix, with Q [m, r] from the previous step (warm start), orthogonalized:
        P_i = M_i Q                  [n, r]   all-reduce (sum) over workers  (all-reduce 2)
        P <- Gram-Schmidt(sum P_i)   orthonormal columns
        Q_i = M_i^T P                [m, r]   all-reduce, / N                (all-reduce 3)
        the approximation of mean_i M_i: P Q^T; Q is kept for the next step
        a P that is exactly zero (M_i Q sums to zero, as a zero M does) keeps the previous Q:
        Q = M^T 0 would be zero, and from a zero Q every later P, Q and approximation stays
        zero while the error feedback grows without bound

All P's travel in one all-reduce and all Q's in another, as torch's powerSGD_hook batches
them per bucket; every float is fp32. torch's hook (read in torch 2.x) has no guard for a zero P:
with warm start it never draws Q again (with its default epsilon 0 a zero column turns NaN), so
there a zero M stalls that matrix for good. The strategy keeps the error M_i - P Q^T. A `dense`
payload (PowerSGD's warm-up steps) is averaged by one fp32 all-reduce; the transport carries
only `lowrank` strategies (check() refuses a dense one).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec

EPSILON = 1e-8
"""Added to each column's norm in Gram-Schmidt: a zero column (a matrix whose gradient is all
zero, as an unused embedding) then stays zero instead of turning NaN. torch's hook defaults to
0 and advises "a small value such as 1e-8" (its orthogonalization_epsilon)."""


@dataclass(frozen=True, slots=True)
class Matrix:
    """One compressed tensor: positions offset .. offset + rows * cols of the flat vector, viewed
    as [rows, cols] (the tensor's first dimension by the rest, as torch's hook views it)."""

    offset: int
    rows: int
    cols: int
    rank: int
    """r = min(rows, cols, the requested rank)."""


@dataclass(slots=True)
class LowRank:
    """What the transport needs besides the values: the matrices, the rest, the Q's it updates."""

    matrices: list[Matrix]
    rest: Tensor
    """int64 [k]: flat positions averaged whole."""
    qs: list[Tensor]
    """Q [cols, rank] per matrix, shared by every worker; replaced in place each step."""
    ps: list[Tensor] | None = None
    """Given a list: filled with each matrix's shared orthonormal P [rows, rank] (Dion reads them)."""


def orthogonalize_(m: Tensor, epsilon: float = EPSILON) -> Tensor:
    """Gram-Schmidt on the columns of m [..., n, r], in place: each column normalised (norm +
    epsilon), then removed from the columns after it (torch's _orthogonalize_gram_schmidt)."""
    for i in range(m.shape[-1]):
        col = m[..., i : i + 1]
        col /= torch.linalg.vector_norm(col, dim=-2, keepdim=True) + epsilon
        if i + 1 < m.shape[-1]:
            rest = m[..., i + 1 :]
            rest -= (col * rest).sum(dim=-2, keepdim=True) * col
    return m


@TRANSPORTS.register("lowrank-allreduce")
class LowRankAllReduce(Transport):
    name = "lowrank-allreduce"
    carries = ("lowrank",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # torch's powerSGD_hook compresses each bucket's matrices, each on its own
    summary = "PowerSGD: all-reduce of rank-r factors P then Q per matrix (fp32), the rest averaged whole"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        if spec.kind == "dense":  # the warm-up: plain averaging
            with section(clock, "collective"):
                return comm.all_reduce(payload.values.float()) / workers
        low: LowRank = payload.extra["lowrank"]
        values = payload.values  # [w, P]
        w = values.shape[0]
        views = [values[:, m.offset : m.offset + m.rows * m.cols].view(w, m.rows, m.cols) for m in low.matrices]
        with section(clock, "encode"):
            ps = [torch.matmul(v, orthogonalize_(q)) for v, q in zip(views, low.qs)]  # [w, n, r] each
            p_flat = _flat(ps, w, values)
            rest = values[:, low.rest]
        with section(clock, "collective"):
            rest_sum = comm.all_reduce(rest) if rest.numel() else rest
            p_sum = comm.all_reduce(p_flat) if p_flat.numel() else p_flat
        with section(clock, "decode"):
            out = torch.empty(values.shape[1], dtype=values.dtype, device=values.device)  # [P], the same for all
            out[low.rest] = rest_sum[0] / workers
            shared = _split(p_sum[0], [(m.rows, m.rank) for m in low.matrices])
            for p in shared:
                orthogonalize_(p)
            if low.ps is not None:
                low.ps[:] = shared
            qs = [torch.matmul(v.transpose(1, 2), p) for v, p in zip(views, shared)]  # [w, m, r] each
        with section(clock, "collective"):
            q_flat = _flat(qs, w, values)
            q_sum = comm.all_reduce(q_flat) if q_flat.numel() else q_flat
        with section(clock, "decode"):
            for m, p, q_old, q in zip(low.matrices, shared, low.qs, _split(q_sum[0] / workers, [(m.cols, m.rank) for m in low.matrices])):
                q_old.copy_(torch.where(p.any(), q, q_old))  # on the device: no host sync per matrix
                out[m.offset : m.offset + m.rows * m.cols] = (p @ q.T).reshape(-1)
        return out.unsqueeze(0).expand(w, -1)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        if spec.kind == "dense":
            return [CollectiveCall("all_reduce", 4 * spec.numel, "gradients (warm-up)")]
        p, q = spec.factors
        calls = [CollectiveCall("all_reduce", 4 * spec.uncompressed, "uncompressed")] if spec.uncompressed else []
        if p:
            calls += [CollectiveCall("all_reduce", 4 * p, "P"), CollectiveCall("all_reduce", 4 * q, "Q")]
        return calls

    def footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        # A rank too high for every matrix is clamped per matrix, as PyTorch's reference does
        # (torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook: matrix_approximation_rank =
        # min(n, m, rank), compressed only where _should_compress says it saves), not refused; so
        # the reader learns here why such a run sends as much as an fp32 all-reduce.
        if spec.kind != "lowrank" or spec.matrices or not spec.numel:
            return ""
        return (f"{self.name}: no matrix is sent as factors at this rank (rank-r factors of an n x m matrix "
                "save floats only well below min(n, m)), so every tensor is averaged whole in fp32, "
                "as an fp32 all-reduce of the gradients would: nothing is compressed.")

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        if spec.kind == "dense":
            return 32.0, 32.0
        bits = 32.0 * (spec.uncompressed + sum(spec.factors)) / spec.numel
        return bits, bits

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        if spec.kind == "dense":  # the warm-up steps: an fp32 all-reduce
            return TransportBytes(pack=0.0, unpack=0.0, aggregate=F32)
        # P = M Q reads M; Q = M^T P reads M again; P Q^T writes the average (the factors are r/n of it)
        return TransportBytes(pack=F32, unpack=2 * F32, aggregate=F32, **lowrank_ops(spec))


GRAM_SCHMIDT_OPS = (3, 4)
"""Kernels orthogonalize_ launches per column (norm, + epsilon, /=) and per column but the last,
removing it from the later ones (x, sum, x, -=): 7 r - 4 for a matrix of rank r."""
GRAM_SCHMIDT_MAX_RANK = 2
"""torch's powerSGD_hook (_orthogonalize) runs Gram-Schmidt only at rank <= 2 (or in half
precision) and torch.linalg.qr above; microsoft/dion orthogonalizes P by a QR per matrix too."""
QR_OPS = 2
"""Kernels of one fp32 QR per matrix, at least: LAPACK's geqrf then orgqr (torch.linalg.qr's two
steps; cuSOLVER splits each into panels, uncounted here, so this is a floor). Its FLOPs are the
strategy's to declare (Dion's update_flops counts 4 m r^2 per matrix)."""


def orthogonalize_ops(spec: PayloadSpec) -> int:
    """Kernels one orthogonalization of every factor launches: Gram-Schmidt column by column where the
    mean rank is at most GRAM_SCHMIDT_MAX_RANK, else a QR per matrix (what torch's hook chooses)."""
    columns, matrices = spec.columns, max(1, spec.matrices)
    if columns <= GRAM_SCHMIDT_MAX_RANK * matrices:
        return max(1, GRAM_SCHMIDT_OPS[0] * columns + GRAM_SCHMIDT_OPS[1] * max(0, columns - spec.matrices))
    return QR_OPS * matrices


def lowrank_ops(spec: PayloadSpec) -> dict:
    """The GPU path's kernels (aggregate above; torch's PowerSGD hook runs the same steps), per parameter:
    the products read the matrices (memory-bound at low rank: each reads M, writes r/n of it; one
    product per matrix), the average is written and copied into place, the rest is gathered and
    scattered back; each orthogonalization (Q, then P) moves a factor's few bytes in the launches
    orthogonalize_ops counts, priced at the kernel table's orthogonalize row (a framework that runs it
    elsewhere, TensorFlow 1.15 on the host, has a row of its own)."""
    n, compressed = spec.numel, spec.numel - spec.uncompressed
    share, rest = compressed / n, spec.uncompressed / n
    p, q = (f / n for f in spec.factors)
    matrices, orth = max(1, spec.matrices), orthogonalize_ops(spec)
    pack = (Op("float-pass", F32 * share + 4 * p, "P = M Q per matrix (reads M, writes P)", matrices),
            Op("orthogonalize", 3 * 4 * q, "Q orthogonalized (Gram-Schmidt at rank <= 2, else a QR per matrix)", orth),
            stream(8 * p + (8 + 4 + 4) * rest, "the P's flattened into one buffer; the rest gathered by index "
                   "(int64 index, read 4, write 4)", 2))
    unpack = (stream(16 * rest, "the rest / N scattered into place (int64 index, read 4, write 4)", 2),
              Op("orthogonalize", 3 * 4 * p + 8 * p, "the summed P split per matrix and orthogonalized", orth),
              Op("float-pass", F32 * share + 4 * q, "Q = M^T P per matrix (reads M, writes Q)", matrices),
              stream(8 * q + 12 * q, "the Q's flattened, / N, kept where P is nonzero", 3),
              Op("float-pass", (4 + 8) * share, "P Q^T per matrix, written and copied into the average "
                 "(write 4; read 4, write 4)", 2 * matrices))
    return dict(pack_ops=pack, unpack_ops=unpack)


def _flat(parts: list[Tensor], w: int, like: Tensor) -> Tensor:
    """[w, *] pieces -> one [w, total] buffer (one collective for all of them)."""
    if not parts:
        return like.new_zeros(w, 0)
    return torch.cat([p.reshape(w, -1) for p in parts], dim=1)


def _split(flat: Tensor, shapes: list[tuple[int, int]]) -> list[Tensor]:
    """One flat [total] buffer -> fresh [rows, rank] matrices."""
    out, offset = [], 0
    for rows, rank in shapes:
        out.append(flat[offset : offset + rows * rank].reshape(rows, rank).clone())
        offset += rows * rank
    return out
