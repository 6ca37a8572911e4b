"""Chunked orthonormal DCT of a flat parameter vector, per tensor: DeMo's transform (Peng,
Quesnelle & Kingma 2024).

Each tensor is viewed as a matrix [a, b] (its first dimension by the rest; a vector of n as
[1, n]) and cut into blocks of ca x cb, with ca (cb) the largest divisor of a (b) not above
the target chunk (64 in DeMo; a prime dimension past it gives chunks of 1: no transform, every
coordinate its own chunk). Each block X becomes D_ca X D_cb^T, D_n the orthonormal DCT-II
matrix; the flat coefficient vector holds each tensor's blocks one after another, each block's
ca cb coefficients contiguous, so "top-k per chunk" is a top-k over one contiguous run. The
transform is orthonormal: decode(encode(x)) = x, and it keeps sums of squares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor


def dct_matrix(n: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """D [n, n], the orthonormal DCT-II: D[k, i] = sqrt(2/n) c_k cos(pi (2i + 1) k / 2n), c_0 = 1/sqrt(2)."""
    k = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(n, dtype=torch.float64).unsqueeze(0)
    d = math.sqrt(2 / n) * torch.cos(math.pi * (2 * i + 1) * k / (2 * n))
    d[0] /= math.sqrt(2)
    return d.to(dtype)


def chunk_size(n: int, target: int) -> int:
    """The largest divisor of n that is at most `target` (DeMo's _get_smaller_split)."""
    return max(d for d in range(1, min(n, target) + 1) if n % d == 0)


@dataclass(frozen=True, slots=True)
class Block:
    """One tensor's place in the flat vector and its blocking."""

    offset: int
    rows: int
    cols: int
    chunk_rows: int
    chunk_cols: int

    @property
    def numel(self) -> int:
        return self.rows * self.cols

    @property
    def chunk(self) -> int:
        """Coefficients per chunk."""
        return self.chunk_rows * self.chunk_cols

    @property
    def chunks(self) -> int:
        return self.numel // self.chunk


class ChunkedDCT:
    """The transform of a model's flat [w, P] vectors, given its tensors' shapes."""

    def __init__(self, shapes: list[tuple[int, ...]], target: int, device: torch.device | str = "cpu") -> None:
        self.blocks, offset = [], 0
        for shape in shapes:
            numel = math.prod(shape)
            rows = shape[0] if len(shape) > 1 else 1
            cols = numel // rows
            self.blocks.append(Block(offset, rows, cols, chunk_size(rows, target), chunk_size(cols, target)))
            offset += numel
        self.numel = offset
        self.device = device

    @cached_property
    def bases(self) -> dict[int, Tensor]:
        """The DCT matrix of each chunk size, made on first use: pricing asks only numel and pairs of
        a transform built for a model's shapes (DeMo.spec_for), once per estimate row."""
        sizes = {s for b in self.blocks for s in (b.chunk_rows, b.chunk_cols)}
        return {n: dct_matrix(n).to(self.device) for n in sizes}

    def _blocks(self, x: Tensor, b: Block) -> Tensor:
        """x [w, P] -> tensor b's blocks [w, a/ca, ca, b/cb, cb] (a view)."""
        part = x[:, b.offset : b.offset + b.numel]
        return part.reshape(x.shape[0], b.rows // b.chunk_rows, b.chunk_rows, b.cols // b.chunk_cols, b.chunk_cols)

    def encode(self, x: Tensor) -> Tensor:
        """x [w, P] -> coefficients [w, P] (each chunk contiguous)."""
        out = torch.empty_like(x)
        for b in self.blocks:
            ra, rb = self.bases[b.chunk_rows], self.bases[b.chunk_cols]
            coef = torch.einsum("wyixj,ki,lj->wyxkl", self._blocks(x, b), ra, rb)  # D_ca X D_cb^T per block
            out[:, b.offset : b.offset + b.numel] = coef.reshape(x.shape[0], -1)
        return out

    def decode(self, c: Tensor) -> Tensor:
        """coefficients [w, P] -> x [w, P]: X = D_ca^T C D_cb per block."""
        out = torch.empty_like(c)
        for b in self.blocks:
            ra, rb = self.bases[b.chunk_rows], self.bases[b.chunk_cols]
            w = c.shape[0]
            coef = c[:, b.offset : b.offset + b.numel].reshape(
                w, b.rows // b.chunk_rows, b.cols // b.chunk_cols, b.chunk_rows, b.chunk_cols)
            x = torch.einsum("wyxkl,ki,lj->wyixj", coef, ra, rb)
            out[:, b.offset : b.offset + b.numel] = x.reshape(w, -1)
        return out

    def topk(self, c: Tensor, k: int) -> Tensor:
        """int64 [w, K]: the positions of the min(k, chunk) largest |coefficients| of every chunk."""
        picked = []
        for b in self.blocks:
            per = c[:, b.offset : b.offset + b.numel].reshape(c.shape[0], b.chunks, b.chunk)
            top = per.abs().topk(min(k, b.chunk), dim=-1, sorted=False).indices  # [w, chunks, k']
            starts = torch.arange(b.chunks, device=c.device).unsqueeze(1) * b.chunk + b.offset
            picked.append((top + starts).reshape(c.shape[0], -1))
        return torch.cat(picked, dim=1)

    def pairs(self, k: int) -> int:
        """K: (index, value) pairs a worker sends at top-k per chunk."""
        return sum(b.chunks * min(k, b.chunk) for b in self.blocks)
