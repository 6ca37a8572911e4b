"""MuLoCo (Therien et al. 2025, github facebookresearch/MuLoCo: torchtitan's QuantizedOuterSGD and
its Muon): DiLoCo (lionsim.strategies.local_steps) with Muon as every worker's inner optimizer and
a 2-bit outer pseudo-gradient with error feedback.

    every step, worker i on its own replica theta_i (nothing sent):
        hidden matrix:  M_i <- mu M_i + g_i;  theta_i <- theta_i (1 - lr wd) - lr sqrt(fan_out / fan_in) NS(M_i)
        the rest:       AdamW, the strategy's betas ((0.9, 0.99), the paper's config), lr and weight decay
    every H-th step (a sync):
        coded tensor:   e_i <- decay e_i + outer_lr (theta - theta_i)     (error feedback)
                        m_i = Q(e_i); e_i <- e_i - deQ(m_i)               (2-bit row-wise codes)
                        every m_i all-gathered; D = deQ(Q(mean_i deQ(m_i)))
        norms, embeddings, the head:  D = mean_i (theta - theta_i), fp32
        theta <- Nesterov SGD step on D (outer lr, outer momentum); theta_i <- theta

Which tensors are coded: every one but the norms (a name part with "norm", or starting with ln or
bn) and the embeddings, position tables and head (a name with embed, tok, pos or head), biases
included, as QuantizedOuterSGD with skip_norm_quantization and skip_embedding_quantization (its
rule: "norm" in the name; "embedding" or "output.weight" in it). `estimate` applies the rule to a
preset's tensor names and a counted module's; with --params alone it codes every 2+-dim tensor and
sends the vectors in fp32.

Q, row-wise statistical with 4 bins (BatchedRowiseQuantizationCompressor(4, 6)): per row of the
tensor viewed as [shape[0], rest] (a vector: one row), shift = its mean, sigma its centred norm /
sqrt(n - 1), code = clamp(round((x - shift) / (1.5 sigma) + 2), 0, 3); each code decodes to the
mean of the row's centred values with that code, plus the shift. A worker's message per m x n
matrix: ceil(m n / 4) bytes of codes and (5 + 5 m) floats (header, shifts, four lookups a row); per
vector of n: ceil(n / 4) bytes and 9 floats.
As the authors' code, the error buffer holds outer_lr x the pseudo-gradient and the outer step
multiplies by outer_lr again; the mean is re-quantised (simulate_quantization_after_reduce).
The inner Muon is dion's (torchtitan experiments): SGD-style momentum without Nesterov, five
Newton-Schulz iterations with their own coefficients, in bf16, b A + c (A A) in that order (muon's
is (c A) A: lionsim.strategies.muon.newton_schulz, product_first), on each 3+-dim tensor viewed as
[shape[0], rest] (the paper config's flatten). Its FLOPs are priced in every step of `estimate`,
local or not.

The codes and lookup tables travel in two all-gathers the strategy issues (extra_calls); the
rest's pseudo-gradient is the transport's payload (fp32-allreduce). So `bits` in the tables
counts only that payload; sent / wire_bytes count everything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_codes, unpack_codes
from lionsim.compute.kernel_ops import stream
from lionsim.optim.steps import MUON, SGD_NESTEROV
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.form import PAST_WARMUP, TRAINING, between, option
from lionsim.strategies.core.inner import InnerOptimizer
from lionsim.strategies.local_steps import AuthorsH, LocalSteps
from lionsim.strategies.muon import (NOT_HIDDEN, NS_WHY, PRECISIONS, hidden, hidden_shapes, matrix_shape,
                                     newton_schulz, newton_schulz_flops, newton_schulz_launches)
from lionsim.strategies.core import options as shared
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec

NS_COEFFICIENTS = ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                   (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012))
"""dion's Newton-Schulz, one (a, b, c) per iteration."""
NS_EPS = 1e-8
BINS, RANGE = 4, 6.0
"""Codes per row (2 bits) and the range in sigmas the bins span (the paper's 2-bit runs)."""
CODE_BITS = 2


def rows_cols(shape: tuple[int, ...]) -> tuple[int, int]:
    """A tensor as the quantizer's rows: [shape[0], rest], a vector (or a scalar) one row."""
    return (1, math.prod(shape)) if len(shape) < 2 else matrix_shape(shape)


def norm(name: str) -> bool:
    """A normalisation layer's tensor: a dotted part of its name with "norm" in it, or starting with ln or bn."""
    return any("norm" in part or part.startswith(("ln", "bn")) for part in name.lower().split("."))


def coded(name: str) -> bool:
    """Sent in 2-bit codes with error feedback: neither a norm nor an embedding, position table or head."""
    return not norm(name) and not any(part in name.lower() for part in NOT_HIDDEN)


@dataclass(frozen=True, slots=True)
class Part:
    """One tensor of the flat layout (a hidden matrix of the inner Muon, or a tensor sent coded)."""

    offset: int
    shape: tuple[int, ...]

    @property
    def rows(self) -> int:
        return rows_cols(self.shape)[0]

    @property
    def cols(self) -> int:
        return rows_cols(self.shape)[1]

    @property
    def positions(self) -> slice:
        return slice(self.offset, self.offset + math.prod(self.shape))


def quantize(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Row-wise 4-bin codes of x [..., rows, cols]: (codes int64, shifts [..., rows], lookups [..., rows, 4])."""
    n = x.shape[-1]
    shift = x.mean(-1, keepdim=True)
    c = x - shift
    sigma = c.norm(dim=-1, keepdim=True) / math.sqrt(max(n - 1, 1))
    scale = RANGE * sigma / BINS
    scale = torch.where((scale == 0) | ~torch.isfinite(scale), torch.ones_like(scale), scale)
    codes = torch.clamp(torch.round(c / scale + BINS // 2), 0, BINS - 1).long()
    hits = torch.nn.functional.one_hot(codes, BINS).to(x.dtype)  # [..., rows, cols, 4]
    counts = hits.sum(-2)
    sums = (hits * c.unsqueeze(-1)).sum(-2)
    lookups = torch.where(counts > 0, sums / counts.clamp_min(1), torch.zeros_like(sums))
    return codes, shift.squeeze(-1), lookups


def dequantize(codes: Tensor, shifts: Tensor, lookups: Tensor) -> Tensor:
    return lookups.gather(-1, codes) + shifts.unsqueeze(-1)


def message_bytes(shape: tuple[int, ...]) -> tuple[int, int]:
    """(code bytes, table bytes) of one worker's message for a tensor (the authors' bitpack and
    float32 metadata: ndim, shape, dtype, rows, then a shift and four lookups per row)."""
    rows = rows_cols(shape)[0]
    return math.ceil(math.prod(shape) * CODE_BITS / 8), 4 * (3 + len(shape) + rows * (1 + BINS))


class InnerMuon:
    """Each worker's inner optimizer on its own replica [w, P]: Muon on the hidden matrices, AdamW on the rest."""

    def __init__(self, parts: list[Part], rest: Tensor, lr: float, weight_decay: float,
                 betas: tuple[float, float], momentum: float, local: int, numel: int, device: torch.device,
                 dtype: torch.dtype) -> None:
        self.parts, self.rest, self.dtype = parts, rest, dtype
        self.lr, self.weight_decay, self.momentum = lr, weight_decay, momentum
        self.state = [torch.zeros(local, numel, device=device)]  # [w, P]: Muon's momentum (per_parameter_state)
        self.adamw = InnerOptimizer("adamw", lr, weight_decay, betas, (local, int(rest.numel())), device)

    def step(self, replicas: Tensor, grads: Tensor) -> None:
        w = replicas.shape[0]
        buf = self.state[0]
        for p in self.parts:
            m = buf[:, p.positions]
            m.mul_(self.momentum).add_(grads[:, p.positions])
            o = newton_schulz(m.view(w, p.rows, p.cols), len(NS_COEFFICIENTS), self.dtype, NS_COEFFICIENTS, NS_EPS,
                              product_first=True)
            x = replicas[:, p.positions]
            x.mul_(1 - self.lr * self.weight_decay)
            x.sub_(o.float().reshape(w, -1), alpha=self.lr * math.sqrt(p.shape[0] / p.shape[1]))
        rest = replicas[:, self.rest]
        self.adamw.step(rest, grads[:, self.rest])
        replicas[:, self.rest] = rest


@STRATEGIES.register("muloco")
class MuLoCo(LocalSteps):
    name = "muloco"
    summary = "MuLoCo: H inner Muon steps per worker, then a Nesterov outer step on 2-bit row-wise pseudo-gradients (EF)"
    # the inner Muon's lr (muloco-1) and weight decay (the class default of the MuLoCo code's Muon; its paper configs
    # use 1e-4 to 1.25e-3), the inner AdamW's betas (config/diloco/2x_4gpu_muloco_quantized_outer.py: beta1 0.9,
    # beta2 0.99); docs/methods-2025-defaults.md compares each with the authors'
    defaults = Hyper(lr=0.02, weight_decay=0.01, betas=(0.9, 0.99))
    shape_dependent = True  # its messages and Newton-Schulz FLOPs depend on each matrix's shape
    authors_h = AuthorsH("30", "MuLoCo, arXiv 2505.23725: facebookresearch/MuLoCo "
                               "config/diloco/2x_4gpu_muloco_quantized_outer.py")  # its default: no note

    @dataclass(frozen=True, kw_only=True)
    class Options:
        local_steps: int = shared.local_steps(30)
        """H, the inner steps each worker takes on its own replica between syncs (the paper's 30)."""
        outer_lr: float = shared.outer_lr(0.8)
        """lr of the outer Nesterov step; it also scales what enters the error buffer (the paper's 0.8)."""
        outer_momentum: float = shared.outer_momentum(0.9)
        """Nesterov momentum of the outer step (the paper's 0.9)."""
        inner_momentum: float = option(0.9, flag="--muloco-inner-momentum",
                                       check=between(0, 1, high_open=True), priced=TRAINING)
        """mu of the inner Muon's momentum (the paper's configs: 0.9)."""
        error_decay: float = option(0.9, flag="--muloco-error-decay", check=between(0, 1), priced=TRAINING,
                                    acts=PAST_WARMUP)
        """Decay of each worker's error buffer at a sync (the paper's 0.9)."""
        precision: str = option("bf16", flag="--muloco-precision", accepted="bf16, fp32", choices=tuple(PRECISIONS),
                                check=lambda v: v in PRECISIONS, priced=TRAINING, why=NS_WHY)
        """Arithmetic of the inner Newton-Schulz iteration: bf16 (the authors') or fp32."""

    # vit (the default bench: 100 steps, 8 workers x 32 images, 1 GbE, seed 0), final loss / eval accuracy (AdamW:
    # 0.600 / 79.5%), inner lr 0.02, inner weight decay 1e-4 (the paper's): the paper's outer step (H = 30, lr 0.8,
    # Nesterov 0.9): 2.030 / 15.9% (three syncs in 100 steps); DiLoCo's measured outer step (lr 1.0, momentum 0.3,
    # lionsim.strategies.local_steps) at H = 5: 0.660 / 81.1%, the target 0.855 at step 92, 61.4 kB a step; at H = 2:
    # 0.482 / 82.3%, the target at step 73, 154 kB a step (kept for vit and gpt). With weight decay 0.01 (the
    # defaults): vit 0.535 / 79.3%, the target at step 73; gpt 0.973 / 69.3% (AdamW: 1.770 / 45.2%). Since its
    # biases travel coded and its Newton-Schulz computes c (A A) (2026-11-28): vit 0.520 / 85.6%, the target at
    # step 78, 152 kB a step; weight decay 1e-4: 0.546 / 86.3% (0.01 kept); gpt 0.977 / 69.8%.
    tuning = {"vit": {"local_steps": 2, "outer_lr": 1.0, "outer_momentum": 0.3},
              "gpt": {"local_steps": 2, "outer_lr": 1.0, "outer_momentum": 0.3}}
    bytes = StrategyBytes(
        16 * F32, 6 * F32, "rule: the inner step (reads g, p_i, M_i, writes p_i, M_i; Newton-Schulz reads M_i, writes O, "
        "its products priced as FLOPs), then reads p, p_i, e_i, writes e_i; the codes read e_i, the decode writes deQ, "
        "e_i -= deQ reads and writes e_i; update as diloco",
        rule_step=MUON, update_step=SGD_NESTEROV,
        # at a sync, eager per matrix: delta (read 8, write 4), e *= decay, e += lr delta (4, 4; 8, 4), the
        # quantization (its scale pass reads 4; codes: e / scale, round, clamp, to int8: 4, 4 each but the
        # last, 4, 1), the decode (1, 4; x scale: 4, 4) and e -= it (8, 4)
        rule_ops=(stream(12 + 8 + 12 + 4 + 8 * 3 + 5 + 5 + 8 + 12, "delta, error feedback, quantize and decode",
                         10, per_tensor=9),),
        update_ops=(stream(2 * F32, "p copied into the replica p_i (read 4, write 4)"),),
    )
    def kernel_bytes(self):
        """Its inner step is Muon's whatever --inner-optimizer says (that option is LocalSteps')."""
        return self.bytes

    local_step_bytes = 7 * F32
    """A local step: the inner Muon step (reads g, p_i, M_i, writes p_i, M_i; Newton-Schulz reads M_i, writes O)."""

    def __init__(self, cfg, layout, comm) -> None:
        Strategy.__init__(self, cfg, layout, comm)
        self.local_steps = self.opts.local_steps
        self.outer_lr = float(self.opts.outer_lr)
        self.outer_momentum = float(self.opts.outer_momentum)
        tensors = [(name, Part(s.start, layout.shape(i))) for i, (name, s) in enumerate(zip(layout.names, layout.slices))]
        self.parts = [p for name, p in tensors if hidden(name, p.shape)]  # the inner Muon's matrices
        self.coded = [p for name, p in tensors if coded(name)]  # sent in 2-bit codes with error feedback
        self.raw = self._positions(self.coded, layout)  # [k]: sent whole (fp32, no error feedback)
        h = self.hyper
        self.inner = InnerMuon(self.parts, self._positions(self.parts, layout), h.lr, h.weight_decay, h.betas,
                               self.opts.inner_momentum, self.local, layout.numel, layout.device,
                               PRECISIONS[self.opts.precision])
        self.muon_momentum = self.inner.state[0]  # found by per_parameter_state
        self.error = self.zeros()  # [w, P]: e_i on the coded tensors
        self.outer_buf = self.zeros(1)[0]
        self.steps = 0
        self.sizes = self._sizes([p.shape for p in self.coded])
        self.quantized: Tensor | None = None

    @staticmethod
    def _positions(parts: list[Part], layout) -> Tensor:
        """The flat positions outside these parts: [k]."""
        outside = torch.ones(layout.numel, dtype=torch.bool)
        for p in parts:
            outside[p.positions] = False
        return torch.nonzero(outside).squeeze(1).to(layout.device)

    @classmethod
    def extra_rows(cls, cfg) -> int:
        """The replica, Muon's momentum and the error buffer (AdamW's second row on the rest is small)."""
        return 2

    @classmethod
    def steps_per_sync(cls, cfg) -> int:
        return cls.resolve_options(cfg).local_steps

    @staticmethod
    def _sizes(shapes: list[tuple[int, ...]]) -> tuple[int, int]:
        """(code bytes, table bytes) of one worker's message for these hidden matrices."""
        sizes = [message_bytes(s) for s in shapes]
        return sum(c for c, _ in sizes), sum(t for _, t in sizes)

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=int(self.raw.numel()))

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        """The coded tensors' codes and tables (the all-gathers, sized for them) and the rest in fp32:
        by name where the model says them (coded), else every 2+-dim tensor coded and every vector sent
        whole (--params names nothing; a LLaMA's vectors are all norms)."""
        names = self.tensor_names(shapes)
        sent_coded = [coded(names[i]) if names else len(s) >= 2 for i, s in enumerate(shapes)]
        self.sizes = self._sizes([s for s, c in zip(shapes, sent_coded) if c])
        return PayloadSpec(kind="dense", numel=sum(math.prod(s) for s, c in zip(shapes, sent_coded) if not c))

    def update_flops(self, shapes: list[tuple[int, ...]]) -> float:
        """The inner Muon's Newton-Schulz on its hidden matrices, every step."""
        return sum(newton_schulz_flops(matrix_shape(s), len(NS_COEFFICIENTS))
                   for s in hidden_shapes(shapes, self.tensor_names(shapes)))

    def update_launches(self, shapes: list[tuple[int, ...]]) -> int:
        return len(hidden_shapes(shapes, self.tensor_names(shapes))) * newton_schulz_launches(len(NS_COEFFICIENTS))

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        if self.workers == 1 or step % self.local_steps or not self.sizes[0]:
            return []  # (a pure function of the step: `estimate --steps` asks it of every step of a run)
        codes, tables = self.sizes
        return [CollectiveCall("all_gather", self.workers * codes, "2-bit codes", dtype="uint8"),
                CollectiveCall("all_gather", self.workers * tables, "row tables")]

    def next_change(self, step: int) -> int:
        """A round's: its gathers come with its sync step."""
        return super().next_change(step)

    def repeats(self) -> tuple[int, int] | None:
        """A round: its sync step's gathers, as every sync's."""
        return super().repeats()

    def encode_outer(self, delta: Tensor, comm: Comm, clock: Clock) -> Payload:
        w = delta.shape[0]
        codes, shifts, lookups = [], [], []
        for p in self.coded:
            e = self.error[:, p.positions]
            e.mul_(self.opts.error_decay).add_(delta[:, p.positions], alpha=self.outer_lr)
            c, s, lk = quantize(e.view(w, p.rows, p.cols))
            e.sub_(dequantize(c, s, lk).reshape(w, -1))
            codes.append(c.reshape(w, -1))
            shifts.append(s)
            lookups.append(lk.reshape(w, -1))
        if self.coded:
            self.quantized = self._exchange(torch.cat(codes, 1), torch.cat([*shifts, *lookups], 1), comm, clock)
        return Payload(self.payload_spec(), delta[:, self.raw].contiguous())

    def _exchange(self, codes: Tensor, tables: Tensor, comm: Comm, clock: Clock) -> Tensor:
        """Every worker's codes and tables all-gathered; the mean of their decodings, re-quantised: [P_q]."""
        n = codes.shape[1]
        with clock.section("collective"):
            packed = comm.all_gather(pack_codes(codes, CODE_BITS))[0]  # [W, bytes]
            tables = comm.all_gather(tables)[0]  # [W, rows * 5]
        with clock.section("decode"):
            codes = unpack_codes(packed, n, CODE_BITS)  # [W, P_q]
            rows = sum(p.rows for p in self.coded)
            shifts, lookups = tables[:, :rows], tables[:, rows:]
            total = []
            code_at = row_at = 0
            for p in self.coded:
                c = codes[:, code_at : code_at + p.rows * p.cols].view(-1, p.rows, p.cols)
                s = shifts[:, row_at : row_at + p.rows]
                lk = lookups[:, BINS * row_at : BINS * (row_at + p.rows)].view(-1, p.rows, BINS)
                mean = dequantize(c, s, lk).mean(0)
                total.append(dequantize(*quantize(mean)).reshape(-1))  # re-quantised, as the authors simulate
                code_at += p.rows * p.cols
                row_at += p.rows
            return torch.cat(total)

    def outer_gradient(self, aggregate: Tensor) -> Tensor:
        out = torch.empty(self.layout.numel, device=aggregate.device)
        out[self.raw] = aggregate[0]
        for p, start in zip(self.coded, self._starts()):
            out[p.positions] = self.quantized[start : start + math.prod(p.shape)]
        return out

    def _starts(self) -> list[int]:
        starts, at = [], 0
        for p in self.coded:
            starts.append(at)
            at += math.prod(p.shape)
        return starts
