"""Dion (Ahn et al. 2025, github microsoft/dion dion_simple.py, dion_reference.py): a low-rank,
orthonormalised update per hidden matrix from one power iteration on each worker's own momentum,
error feedback keeping what was not sent. A worker sends (m + n) r floats per m x n matrix.

    per hidden matrix X [m, n] (2+ dims viewed as [shape[0], rest]), r = ceil(f min(m, n)):
        M_i <- M_i + g_i                                   (each worker its own momentum)
        P = orth(mean_i M_i Q)        [m, r]               (all-reduce of P, Gram-Schmidt)
        R = mean_i M_i^T P            [n, r]               (all-reduce of R)
        M_i <- M_i - (1 - mu) P R^T                        (error feedback: mu of the sent part stays)
        Q <- R / (||R_j|| + 1e-8) per column               (the next step's warm start)
        X <- X (1 - lr wd) - lr sqrt(m / n) P Q^T
    a matrix with (m + n) r >= m n is not worth compressing: its gradient is averaged whole and
    the same steps run on the mean (dion_simple); every other tensor (vectors, embeddings, the
    head): averaged whole, then AdamW at --dion-adamw-lr.

The workers' mean momentum follows dion_simple on the mean gradient exactly (everything is
linear; the authors' README says so). The exchange is lowrank-allreduce's (PowerSGD's): P, then
R, then the rest, in three fp32 all-reduces; it orthonormalises Q before M Q, which leaves the
span and so P unchanged. As dion_simple, P is m x r for a wide matrix (m < n) too: dion.py and
dion_reference.py run a wide matrix transposed (P n x r, Q m x r), which changes its update (the
same bytes: (m + n) r either way); Q starts as a standard normal draw from the run's seed. Where
the mean R is all zero (a matrix nobody has a gradient for) Q is kept, as dion.py's guard does.
Power iteration and QR cost 8 m n r + 4 m r^2 FLOPs per matrix and step, priced in `estimate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import stream
from lionsim.optim.steps import ADAMW
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.form import TRAINING, between, option
from lionsim.strategies.core.inner import InnerOptimizer
from lionsim.strategies.muon import AuxAdamW, hidden, hidden_shapes, matrix_shape
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, Payload, PayloadSpec
from lionsim.transports.lowrank_allreduce import LowRank, Matrix, orthogonalize_

EPS = 1e-8
"""Added to each column norm of R (dion's epsilon)."""


def dion_rank(rows: int, cols: int, fraction: float) -> int:
    """r = ceil(fraction x min(m, n)), at most min(m, n) (dion.py's rank_fraction, rank_multiple_of 1)."""
    return min(math.ceil(fraction * min(rows, cols)), rows, cols)


def compressed(rows: int, cols: int, rank: int) -> bool:
    """Worth sending as factors: (m + n) r < m n (dion.py's rule)."""
    return (rows + cols) * rank < rows * cols


def dion_flops(shape: tuple[int, ...], fraction: float) -> float:
    """Power iteration (M Q, M^T P), error feedback (P R^T) and update (P Q^T): 8 m n r; QR: 4 m r^2."""
    m, n = matrix_shape(shape)
    r = dion_rank(m, n, fraction)
    return 8.0 * m * n * r + 4.0 * max(m, n) * r * r


@STRATEGIES.register("dion")
class Dion(AuxAdamW, Strategy):
    name = "dion"
    summary = "Dion: rank-r orthonormal update per matrix from each worker's momentum (P, R all-reduced), error feedback"
    payload_kind = "lowrank"
    default_transport = "lowrank-allreduce"
    schedule = AFTER_BACKWARD  # microsoft/dion: P and R all-reduced inside the optimizer's step, after backward
    shape_dependent = True
    defaults = Hyper(lr=0.02, weight_decay=0.01, betas=(0.9, 0.95))  # configs/dion_160m.yaml's lr, wd; the AdamW's betas

    @dataclass(frozen=True, kw_only=True)
    class Options:
        rank_fraction: float = option(0.25, flag="--dion-rank-fraction", check=between(0, 1, low_open=True))
        """r / min(m, n) per matrix (1: full rank, the gradient averaged whole). microsoft/dion train.py's default
        is 0.125; lionsim keeps 0.25, better on vit's 64-wide matrices (docs/methods-2025-defaults.md)."""
        mu: float = option(0.95, flag="--dion-mu", check=between(0, 1, high_open=True),
                         priced=TRAINING)
        """Share of the sent low-rank part kept in the momentum (dion's mu, 0.95)."""
        adamw_lr: float = option(3e-3, flag="--dion-adamw-lr", check=between(0, low_open=True), priced=TRAINING)
        """lr of the AdamW stepping vectors, embeddings and the head (lionsim's AdamW default; train.py: the base lr
        on the embedding, lr / sqrt(d) on the head, betas (0.95, 0.98), no weight decay)."""

    # vit (the default bench: 100 steps, 8 workers x 32 images, 1 GbE, seed 0), final loss / eval accuracy at rank
    # fraction 0.25, mu 0.95 (AdamW: 0.600 / 79.5%): lr 1e-2 (dion.py's default): 0.692 / 80.4%; 2e-2 (the authors'
    # 160M config, kept as `defaults`): 0.359 / 87.2%, the target loss 0.855 at step 69; 5e-2: 0.380 / 84.8%.
    tuning: dict[str, dict] = {}
    bytes = StrategyBytes(
        3 * F32, 12 * F32, "rule reads g, M, writes M (the payload); update: error feedback reads M and the "
        "approximation, writes M; P Q^T is written, then X reads p and it, writes p; AdamW on the rest counted "
        "everywhere (m, v read and written); the factor products are priced as FLOPs",
        update_step=ADAMW,  # AdamW counted everywhere, as the ideal passes count it
        # M += g (read 8, write 4) into the payload
        rule_ops=(stream(3 * F32, "M += g, the payload"),),
        # the error feedback M -= (1 - mu) P Q^T (P Q^T written: 4; the update: 8, 4), then X -= lr s P Q^T
        # (8, 4) and its scale (4, 4)
        update_ops=(stream(4 + 12, "P Q^T written, then M -= (1 - mu) P Q^T", 2),
                    stream(12 + 8, "X -= lr x scale x P Q^T", 2)),
    )

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        fraction = self.opts.rank_fraction
        draws = torch.Generator().manual_seed(cfg.seed)
        self.matrices: list[Matrix] = []  # sent as factors
        self.whole: list[tuple[Matrix, Tensor]] = []  # hidden, but averaged whole: (matrix, its Q)
        self.qs: list[Tensor] = []
        other = torch.ones(layout.numel, dtype=torch.bool)
        for i, (name, part) in enumerate(zip(layout.names, layout.slices)):
            if not hidden(name, layout.shape(i)):
                continue
            rows, cols = matrix_shape(layout.shape(i))
            r = dion_rank(rows, cols, fraction)
            matrix = Matrix(part.start, rows, cols, r)
            q = torch.randn(cols, r, generator=draws).to(layout.device)  # every matrix draws, in order
            if compressed(rows, cols, r):
                self.matrices.append(matrix)
                self.qs.append(q)
                other[part] = False
            else:
                self.whole.append((matrix, q))
        rest = other.clone()
        for m, _ in self.whole:
            rest[m.offset : m.offset + m.rows * m.cols] = False
        self.sent_whole = torch.nonzero(other).squeeze(1).to(layout.device)  # the transport's rest
        self.rest = torch.nonzero(rest).squeeze(1).to(layout.device)  # AdamW's positions
        self.momentum = self.zeros()  # [w, P]: M_i on the matrices (identical rows where averaged whole)
        self.ps: list[Tensor] = []
        self.old_qs: list[Tensor] = []
        h = self.hyper
        self.adamw = InnerOptimizer("adamw", self.opts.adamw_lr, h.weight_decay, h.betas, (int(self.rest.numel()),),
                                    layout.device)

    def payload_spec(self) -> PayloadSpec:
        return self._spec(self.layout.numel, [(m.rows, m.cols, m.rank) for m in self.matrices])

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        """Every hidden matrix (by name where the model says them: Muon's rule) as factors."""
        matrices, kept = [], hidden_shapes(shapes, self.tensor_names(shapes))
        self.note_aux_share(shapes, kept)
        for s in kept:
            rows, cols = matrix_shape(s)
            r = dion_rank(rows, cols, self.opts.rank_fraction)
            if compressed(rows, cols, r):
                matrices.append((rows, cols, r))
        return self._spec(sum(math.prod(s) for s in shapes), matrices)

    @staticmethod
    def _spec(numel: int, matrices: list[tuple[int, int, int]]) -> PayloadSpec:
        inside = sum(m * n for m, n, _ in matrices)
        return PayloadSpec(kind="lowrank", numel=numel, uncompressed=numel - inside,
                           factors=(sum(m * r for m, _, r in matrices), sum(n * r for _, n, r in matrices)),
                           columns=sum(r for _, _, r in matrices), matrices=len(matrices))

    def update_flops(self, shapes: list[tuple[int, ...]]) -> float:
        return sum(dion_flops(s, self.opts.rank_fraction) for s in hidden_shapes(shapes, self.tensor_names(shapes)))

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        values = grads.clone()  # the rest travels as gradients
        for m in self.matrices:
            part = slice(m.offset, m.offset + m.rows * m.cols)
            self.momentum[:, part] += grads[:, part]
            values[:, part] = self.momentum[:, part]
        self.old_qs = [q.clone() for q in self.qs]  # kept where the mean R is all zero
        self.ps = []
        return Payload(self.payload_spec(), values, extra={"lowrank": LowRank(self.matrices, self.sent_whole,
                                                                               self.qs, self.ps)})

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        mean = aggregate[0]
        mu = self.opts.mu
        alone = not self.ps  # one worker: no exchange ran, its own M came back whole
        for k, (m, q, old) in enumerate(zip(self.matrices, self.qs, self.old_qs)):
            part = slice(m.offset, m.offset + m.rows * m.cols)
            p, approx = self._power(m, q) if alone else (self.ps[k], mean[part])  # approx: P R^T
            self.momentum[:, part] -= (1 - mu) * approx
            self._step(params, m, p, q, old)
        for m, q in self.whole:  # dion_simple on the mean gradient
            part = slice(m.offset, m.offset + m.rows * m.cols)
            self.momentum[:, part] += mean[part]
            old = q.clone()
            p, approx = self._power(m, q)
            self.momentum[:, part] -= (1 - mu) * approx
            self._step(params, m, p, q, old)
        rest = params[self.rest]
        self.adamw.step(rest, mean[self.rest])
        params[self.rest] = rest

    def _power(self, m: Matrix, q: Tensor) -> tuple[Tensor, Tensor]:
        """One power iteration on the (shared) momentum of matrix m, here: P, and P R^T flat; q becomes R."""
        buf = self.momentum[0, m.offset : m.offset + m.rows * m.cols].view(m.rows, m.cols)
        p = orthogonalize_(buf @ orthogonalize_(q.clone()))
        r = buf.T @ p
        q.copy_(r)
        return p, (p @ r.T).reshape(-1)

    def _step(self, params: Tensor, m: Matrix, p: Tensor, q: Tensor, old: Tensor) -> None:
        """q holds R: normalise its columns into the next Q, then step X by P Q^T."""
        if not bool(q.any()):  # nobody's momentum had a gradient: keep Q, no update (dion.py's guard)
            q.copy_(old)
            p = torch.zeros_like(p)
        q.div_(q.norm(dim=0, keepdim=True) + EPS)
        h = self.hyper
        x = params[m.offset : m.offset + m.rows * m.cols]
        x.mul_(1 - h.lr * h.weight_decay).sub_((p @ q.T).reshape(-1), alpha=h.lr * math.sqrt(m.rows / m.cols))
