"""Muon (Jordan et al. 2024, github KellerJordan/Muon muon.py): gradients averaged by an
all-reduce, then momentum orthogonalised by Newton-Schulz per hidden matrix; AdamW for the
rest (vectors, embeddings, the head), as the authors' MuonWithAuxAdam.

    every worker sends g_i (fp32-allreduce); G = mean_i g_i
    per hidden matrix X (2 dims; a conv filter of 4 dims viewed as [shape[0], rest]; a tensor of 3
    dims a batch of shape[0] matrices, each orthogonalised on its own, as muon.py does):
        M <- beta M + (1 - beta) G                 (an EMA: the authors' lerp)
        U = (1 - beta) G + beta M                  (Nesterov, with the new M)
        O = NS5(U) * max(1, rows / cols) ** 0.5    (rows, cols: the last two dims, as muon.py)
        X <- X (1 - lr wd) - lr O
    every other tensor: AdamW at --muon-adamw-lr, betas and weight decay the strategy's, eps 1e-8
    (lionsim's one AdamW; muon.py's aux Adam: eps 1e-10, weight decay 0, lr 3e-4; docs/methods-2025-defaults.md)

NS5: X = U / (||U||_F + 1e-7) (transposed when tall), then 5 times A = X X^T,
X = a X + (b A + (c A) A) X with (a, b, c) = (3.4445, -4.7750, 2.0315), in bf16 as the
authors (--muon-precision fp32 for exact arithmetic); (c A) A in that order, as muon.py writes
it (MuLoCo's Muon computes c (A A): muloco uses that one). Its FLOPs, 4 m^2 n + 2 m^3 per
iteration (m <= n) and matrix, are priced in `estimate`'s update (Strategy.update_flops).

    muon-dist   the authors' distributed Muon: the hidden matrices, sorted by size (largest
                first), are dealt round-robin over the W workers; each worker orthogonalises
                only its own, then an all-gather of the updated matrices (padded to the
                largest worker's share) gives every worker all of them. Same result as muon,
                1/W of the Newton-Schulz work per worker, plus that all-gather (fp32).

Which tensors are hidden matrices: 2+ dims and a name without embed, tok, pos or head (the
authors' advice: embeddings and the output layer train better with AdamW). `estimate` applies the
same rule to a preset's tensor names (ModelShape.tensor_names) and a counted module's; with --params
alone, which names nothing, every 2+-dim tensor counts as a matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.optim.steps import MUON
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.form import TRAINING, between, integer, option
from lionsim.strategies.core.inner import InnerOptimizer
from lionsim.timing import Clock
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
"""(a, b, c) of muon.py's quintic iteration."""
NS_EPS = 1e-7
"""Added to the Frobenius norm before the division (a zero matrix gives a zero update)."""
NOT_HIDDEN = ("embed", "tok", "pos", "head")
"""Name parts of 2-D tensors that stay with AdamW (embeddings, positions, the output layer)."""
MAX_NS_STEPS = 100
"""The most --muon-ns-steps: the authors take 5, and the quintic has converged long before 100;
a step priced or run at 1e23 iterations never ends."""
NS_STEPS_WHY = "the authors use 5; 100 is far past where the iteration has converged"
PRECISIONS = {"bf16": torch.bfloat16, "fp32": torch.float32}
NS_WHY = "sets the Newton-Schulz arithmetic, whose products estimate prices at the device's bf16 peak either way"
"""Why estimate does not read --muon-precision (and MuLoCo's): Strategy.update_flops counts the products,
lionsim.steptime.work prices them at the device's peak, its bf16 tensor rate."""


def newton_schulz(update: Tensor, steps: int, dtype: torch.dtype,
                  coefficients: tuple[tuple[float, float, float], ...] | None = None, eps: float = NS_EPS,
                  product_first: bool = False) -> Tensor:
    """The approximate orthogonal factor of a matrix [rows, cols], or of each of a batch [..., rows,
    cols] (muon.py's zeropower_via_newtonschulz5); `coefficients`: one (a, b, c) per iteration (default:
    muon.py's each time). `product_first`: c (A A), as dion's Muon (which MuLoCo's copies), instead of
    muon.py's (c A) A: equal in exact arithmetic, a few percent of an update's largest entry apart in bf16."""
    x = update.to(dtype)
    tall = x.size(-2) > x.size(-1)
    if tall:
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + eps)
    for i in range(steps):
        a, b, c = coefficients[i] if coefficients else NS_COEFFICIENTS
        gram = x @ x.mT
        square = c * (gram @ gram) if product_first else (c * gram) @ gram
        x = a * x + (b * gram + square) @ x
    return x.mT if tall else x


def newton_schulz_flops(shape: tuple[int, ...], steps: int) -> float:
    """FLOPs of `steps` iterations on the matrices Muon makes of a tensor of `shape` (muon_matrices;
    a 2-dim shape is one matrix) (multiply-add = 2)."""
    batch, rows, cols = muon_matrices(shape)
    m, n = min(rows, cols), max(rows, cols)
    return batch * steps * (4.0 * m * m * n + 2.0 * m**3)


NS_LAUNCHES = (4, 8)
"""Kernels newton_schulz launches on a matrix (or a batch of them): 4 before the iterations (the cast to
bf16, the norm, + eps, the division) and 8 an iteration (3 products, 3 scalings, 2 sums); tests count
them with lionsim.training.counting.KernelCounter. On a GPU each costs the device's kernel_s (eager
dispatch): H200s took 0.41-0.49 ms a matrix of GPT-2 124M (768 x 768 to 768 x 3072, 5 iterations, 44
kernels; python -m lionsim.perf newton-schulz, docs/time-model-kernels.md), whose FLOPs take 0.03-0.10 ms."""


def newton_schulz_launches(steps: int) -> int:
    """Kernels `steps` iterations launch on one matrix (or one batch of them)."""
    return NS_LAUNCHES[0] + NS_LAUNCHES[1] * steps


def matrix_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    """A tensor of 2+ dims as one matrix [shape[0], the rest] (dion's and MuLoCo's view: its config
    flattens every 3+-dim tensor)."""
    return shape[0], math.prod(shape[1:])


def muon_matrices(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(batch, rows, cols): the matrices muon.py orthogonalises for a tensor of 2+ dims: a conv
    filter (4 dims) viewed as one [shape[0], rest]; any other as a batch of matrices over its last two
    dims (3 dims: shape[0] matrices of [shape[1], shape[2]]; muon.py's Newton-Schulz is batched)."""
    if len(shape) == 4:
        return (1, *matrix_shape(shape))
    return math.prod(shape[:-2]), shape[-2], shape[-1]


def hidden(name: str, shape: tuple[int, ...]) -> bool:
    """A hidden matrix: 2+ dims, not an embedding, position table or the head."""
    return len(shape) >= 2 and not any(part in name.lower() for part in NOT_HIDDEN)


def hidden_shapes(shapes: list[tuple[int, ...]], names: list[str] | None) -> list[tuple[int, ...]]:
    """The hidden matrices among tensors of `shapes`: by `names` where given, else every 2+-dim one."""
    return [s for i, s in enumerate(shapes) if (hidden(names[i], s) if names else len(s) >= 2)]


class AuxAdamW:
    """A strategy whose hidden matrices take its own rule and whose other tensors (its `rest`) an aux
    AdamW (Muon, Dion): Strategy.state_rows counts that AdamW's [k] moments as two whole rows, so its
    state_rows takes 2 x the share of the parameters the AdamW does not step back off. The share is
    the layout's own, or on estimate's stand-in layout (a parameter a tensor) the one spec_for found
    for the model's shapes (note_aux_share)."""

    aux_share: float | None = None
    """The share of the parameters the aux AdamW steps, as spec_for found it for a model's shapes."""

    def note_aux_share(self, shapes: list[tuple[int, ...]], hidden: list[tuple[int, ...]]) -> None:
        self.aux_share = 1 - sum(math.prod(s) for s in hidden) / sum(math.prod(s) for s in shapes)

    def state_rows(self) -> float:
        share = self.aux_share if self.aux_share is not None else self.rest.numel() / self.layout.numel
        return super().state_rows() - 2 * (1 - share)


@dataclass(frozen=True, slots=True)
class Matrix:
    """One hidden matrix of the flat layout."""

    offset: int
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def positions(self) -> slice:
        return slice(self.offset, self.offset + self.numel)


class Muon(AuxAdamW, Strategy):
    """Muon's update on the averaged gradient (muon and muon-dist differ in who computes it)."""

    payload_kind = "dense"
    default_transport = "fp32-allreduce"
    schedule = PER_BUCKET  # KellerJordan/Muon: the gradients averaged by DDP's buckets before Muon's
    # step (muon-dist's all-gather of the updated matrices, in the step, is an extra call: never hidden)
    shape_dependent = True  # its Newton-Schulz FLOPs depend on each matrix's shape
    defaults = Hyper(lr=0.02, weight_decay=0.0, betas=(0.9, 0.95))  # Muon's lr; betas: the aux AdamW's (muon.py)

    @dataclass(frozen=True, kw_only=True)
    class Options:
        momentum: float = option(0.95, flag="--muon-momentum", check=between(0, 1, high_open=True), priced=TRAINING)
        """beta of the momentum EMA (muon.py's 0.95); Nesterov as the authors."""
        ns_steps: int = option(5, flag="--muon-ns-steps", check=integer(1, MAX_NS_STEPS, why=NS_STEPS_WHY))
        """Newton-Schulz iterations per matrix and step (muon.py's 5)."""
        adamw_lr: float = option(3e-3, flag="--muon-adamw-lr", check=between(0, low_open=True), priced=TRAINING)
        """lr of the AdamW that steps the other tensors (lionsim's AdamW default; muon.py's is 3e-4)."""
        precision: str = option("bf16", flag="--muon-precision", accepted="bf16, fp32", choices=tuple(PRECISIONS),
                                check=lambda v: v in PRECISIONS, priced=TRAINING,
                                why=NS_WHY)
        """Arithmetic of the Newton-Schulz iteration: bf16 (the authors') or fp32."""

    # vit (the default bench: 100 steps, 8 workers x 32 images, 1 GbE, seed 0), final loss / eval accuracy at the
    # authors' lr 0.02, momentum 0.95, AdamW lr 3e-3 on the rest: 0.232 / 91.7% (AdamW: 0.600 / 79.5%); gpt: 0.729 /
    # 74.4% (AdamW: 1.770 / 45.2%). Nothing to tune.
    tuning: dict[str, dict] = {}
    bytes = StrategyBytes(
        0, 10 * F32, "no local rule (the gradient is sent); update: momentum reads G, M, writes M and U; Newton-Schulz "
        "reads U, writes O (its matrix products are priced as FLOPs); X reads p, O, writes p; AdamW on the rest is "
        "counted as if it read and wrote m, v everywhere. As kernels: the Muon step (lionsim.optim.steps.MUON); the "
        "AdamW on the vectors, a few per cent of a transformer's parameters, is left out",
        update_step=MUON,
    )

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.matrices: list[Matrix] = []
        rest = torch.ones(layout.numel, dtype=torch.bool)
        for i, (name, part) in enumerate(zip(layout.names, layout.slices)):
            if hidden(name, layout.shape(i)):
                self.matrices.append(Matrix(part.start, layout.shape(i)))
                rest[part] = False
        self.rest = torch.nonzero(rest).squeeze(1).to(layout.device)  # [k]: AdamW's positions
        self.momentum = self.zeros(1)[0]  # [P], one: every worker steps on the same mean
        h = self.hyper
        self.adamw = InnerOptimizer("adamw", self.opts.adamw_lr, h.weight_decay, h.betas, (int(self.rest.numel()),),
                                    layout.device)
        self.dtype = PRECISIONS[self.opts.precision]
        self.mine = self.matrices  # the matrices this process orthogonalises (muon-dist: its workers' share)

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        self.note_aux_share(shapes, self.hidden_shapes(shapes))
        return PayloadSpec(kind="dense", numel=sum(math.prod(s) for s in shapes))

    def hidden_shapes(self, shapes: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """The hidden matrices among `shapes`: by their names where known (tensor_names), else every
        2+-dim tensor (see the module doc)."""
        return hidden_shapes(shapes, self.tensor_names(shapes))

    def update_flops(self, shapes: list[tuple[int, ...]]) -> float:
        """Newton-Schulz on every hidden matrix."""
        return sum(newton_schulz_flops(s, self.opts.ns_steps) for s in self.hidden_shapes(shapes))

    def update_launches(self, shapes: list[tuple[int, ...]]) -> int:
        return len(self.hidden_shapes(shapes)) * newton_schulz_launches(self.opts.ns_steps)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        return Payload(self.payload_spec(), grads)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        mean = aggregate[0]
        lr, wd, beta = self.hyper.lr, self.hyper.weight_decay, self.opts.momentum
        for m in self.mine:
            g = mean[m.positions]
            buf = self.momentum[m.positions]
            buf.lerp_(g, 1 - beta)
            rows, cols = m.shape[-2], m.shape[-1]
            u = g.lerp(buf, beta)
            u = u.view(matrix_shape(m.shape)) if len(m.shape) == 4 else u.view(m.shape)  # as muon.py (muon_matrices)
            o = newton_schulz(u, self.opts.ns_steps, self.dtype)
            o = o * max(1.0, rows / cols) ** 0.5  # muon.py's scale, from the tensor's last two dims
            x = params[m.positions]
            x.mul_(1 - lr * wd).sub_(lr * o.float().reshape(-1))
        rest = params[self.rest]
        self.adamw.step(rest, mean[self.rest])
        params[self.rest] = rest


@STRATEGIES.register("muon")
class MuonAllReduce(Muon):
    name = "muon"
    summary = "Muon: gradients averaged, Newton-Schulz-orthogonalised momentum per hidden matrix, AdamW on the rest"


@STRATEGIES.register("muon-dist")
class MuonDistributed(Muon):
    name = "muon-dist"
    summary = "Muon, each worker orthogonalising 1/W of the matrices, then an all-gather of the updated matrices"

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.owners = owners([m.shape for m in self.matrices], self.workers)
        mine = range(comm.first_worker, comm.first_worker + self.local)
        self.mine = [m for m, owner in zip(self.matrices, self.owners) if owner in mine]
        self.share = gathered_share([m.shape for m in self.matrices], self.workers)

    def update_flops(self, shapes: list[tuple[int, ...]]) -> float:
        """The busiest worker's share of the Newton-Schulz work."""
        matrices = self.hidden_shapes(shapes)
        work = [0.0] * self.workers
        for s, owner in zip(matrices, owners(matrices, self.workers)):
            work[owner] += newton_schulz_flops(s, self.opts.ns_steps)
        return max(work)

    def update_launches(self, shapes: list[tuple[int, ...]]) -> int:
        """The busiest worker's matrices' kernels (the most matrices one worker owns)."""
        matrices = self.hidden_shapes(shapes)
        mine = [0] * self.workers
        for owner in owners(matrices, self.workers):
            mine[owner] += 1
        return max(mine) * newton_schulz_launches(self.opts.ns_steps)

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        """What it sends for tensors of these shapes; its all-gather is sized for them too (`estimate`
        applies the name rule where the model names its tensors: hidden_shapes)."""
        self.share = gathered_share(self.hidden_shapes(shapes), self.workers)
        return super().spec_for(shapes)

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        if self.workers > 1 and self.share:
            return [CollectiveCall("all_gather", F32 * self.workers * self.share, "muon matrices")]
        return []

    def next_change(self, step: int) -> int:
        """Every step's gather is the same call."""
        return super().next_change(step)

    def repeats(self) -> tuple[int, int] | None:
        """Every step's gather is the same call."""
        return super().repeats()

    def sync(self, comm: Comm, step: int, clock: Clock) -> None:
        """Every worker's updated matrices to every worker (each padded to the largest share)."""
        if self.workers == 1 or not self.matrices:
            return
        mine = range(comm.first_worker, comm.first_worker + self.local)
        params = self.params
        send = torch.zeros(self.local, self.share, device=params.device)
        for row, worker in enumerate(mine):
            own = [m for m, o in zip(self.matrices, self.owners) if o == worker]
            if own:
                flat = torch.cat([params[m.positions] for m in own])
                send[row, : flat.numel()] = flat
        with clock.section("collective"):
            got = comm.all_gather(send)[0]  # [W, share]
        filled = [0] * self.workers
        for m, owner in zip(self.matrices, self.owners):
            params[m.positions] = got[owner, filled[owner] : filled[owner] + m.numel]
            filled[owner] += m.numel

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        self.params = params  # the replica sync fills in
        super().apply(params, aggregate)


def owners(shapes: list[tuple[int, ...]], workers: int) -> list[int]:
    """The worker that orthogonalises each matrix: sorted by shape, largest first (muon.py sorts by
    torch.Size, lexicographically), dealt round-robin."""
    order = sorted(range(len(shapes)), key=lambda i: tuple(shapes[i]), reverse=True)
    out = [0] * len(shapes)
    for turn, i in enumerate(order):
        out[i] = turn % workers
    return out


def gathered_share(shapes: list[tuple[int, ...]], workers: int) -> int:
    """Elements each worker contributes to the all-gather: the largest worker's share (the others pad)."""
    shares = [0] * workers
    for shape, owner in zip(shapes, owners(shapes, workers)):
        shares[owner] += math.prod(shape)
    return max(shares)
