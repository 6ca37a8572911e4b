"""Index -> batch views of a dataset kept in memory (compact dtypes, normalized per batch)."""

from __future__ import annotations

from torch import Tensor


class ArraySource:
    """Samples stored as rows of `inputs` (any dtype, e.g. uint8 images) with integer labels.

    `take` returns float32 inputs standardized as (x - mean) / std; storing raw uint8 and
    normalizing 32 samples at a time keeps a 50k-image set at 150 MB instead of 600 MB.
    """

    def __init__(self, inputs: Tensor, labels: Tensor, mean: Tensor, std: Tensor) -> None:
        self.inputs = inputs
        self.labels = labels
        self.mean = mean.float()
        self.inv_std = 1.0 / std.float()

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, idx: Tensor) -> tuple[Tensor, Tensor]:
        return (self.inputs[idx].float() - self.mean) * self.inv_std, self.labels[idx]


class WindowSource:
    """Next-token windows of a token stream: sample s is (tokens[s : s+T], tokens[s+1 : s+T+1])."""

    def __init__(self, tokens: Tensor, context: int) -> None:
        if len(tokens) < context + 1:
            raise ValueError(f"{len(tokens)} tokens are fewer than one window of {context + 1}")
        self.tokens = tokens
        self.context = context
        self._windows = tokens.unfold(0, context + 1, 1)  # (len - T, T + 1) view, no copy

    def __len__(self) -> int:
        return len(self._windows)

    def take(self, idx: Tensor) -> tuple[Tensor, Tensor]:
        w = self._windows[idx]  # (B, T + 1)
        return w[:, :-1], w[:, 1:]


class Subset:
    """Chosen samples of another source, re-indexed 0..len-1."""

    def __init__(self, source: ArraySource | WindowSource, idx: Tensor) -> None:
        self.source = source
        self.idx = idx

    def __len__(self) -> int:
        return len(self.idx)

    def take(self, idx: Tensor) -> tuple[Tensor, Tensor]:
        return self.source.take(self.idx[idx])


def standardize_stats(x: Tensor, dims: tuple[int, ...], chunk: int = 4096) -> tuple[Tensor, Tensor]:
    """Mean and standard deviation of `x` over `dims` (dim 0 must be among them), kept as singleton
    dims and with dim 0 dropped, so they broadcast against one sample. Accumulated in float64,
    chunk by chunk, so a uint8 dataset is never copied to float whole."""
    total: Tensor | float = 0.0
    total_sq: Tensor | float = 0.0
    count = 0
    for part in x.split(chunk):
        p = part.double()
        s = p.sum(dim=dims, keepdim=True)
        total = total + s
        total_sq = total_sq + (p * p).sum(dim=dims, keepdim=True)
        count += p.numel() // s.numel()
    mean = total / count
    std = (total_sq / count - mean * mean).clamp_min(1e-12).sqrt()
    return mean.squeeze(0).float(), std.squeeze(0).float()
