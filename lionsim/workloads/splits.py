"""Splitting a labelled training set into per-worker shards: `iid` and `dirichlet:ALPHA`.

`dirichlet:ALPHA` is the usual label-skew partition (Hsu et al. 2019; NIID-Bench, Li et al.
2022): for each class, draw worker proportions p ~ Dir(ALPHA * 1_W) and cut that class's
shuffled samples by p. Small ALPHA gives each worker few classes; large ALPHA tends to iid.
As in NIID-Bench, a worker that already holds its 1/W share of the data gets no more of the
following classes (keeps shard sizes usable), and the draw is repeated, up to
`DIRICHLET_DRAWS` times, until every worker holds at least `min_size` samples.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from lionsim.errors import LionsimError
from lionsim.forms import parse_split
from lionsim.workloads.seeding import numpy_generator

DIRICHLET_DRAWS = 100


def split_indices(labels: Tensor, workers: int, split: str, seed: int, *, min_size: int = 1) -> list[Tensor]:
    """Partition sample indices 0..len(labels)-1 into `workers` shards (sorted int64 tensors).

    The shards are disjoint and cover every sample. `iid`: a seeded permutation cut into
    shards whose sizes differ by at most one. Every shard must hold at least `min_size`
    samples (the per-worker batch size), else LionsimError with the numbers.
    """
    parsed = parse_split(split)
    n = int(labels.numel())
    if workers < 1:
        raise LionsimError(f"workers must be >= 1, got {workers}")
    if n < workers * min_size:
        raise LionsimError(
            f"{n} training samples cannot give each of {workers} workers {min_size} samples "
            f"(needs {workers * min_size}); use fewer workers or a smaller batch size"
        )
    if parsed.kind == "iid":
        perm = torch.from_numpy(numpy_generator(seed, "split", "iid").permutation(n))
        return [shard.sort().values for shard in torch.tensor_split(perm, workers)]
    return _dirichlet(labels, workers, parsed.alpha, seed, min_size, split)


def _dirichlet(labels: Tensor, workers: int, alpha: float, seed: int, min_size: int, split: str) -> list[Tensor]:
    rng = numpy_generator(seed, "split", "dirichlet")
    y = labels.cpu().numpy()
    for _ in range(DIRICHLET_DRAWS):
        shards = _dirichlet_draw(y, workers, alpha, rng)
        if shards is not None and min(len(s) for s in shards) >= min_size:
            return [torch.from_numpy(np.sort(s)).long() for s in shards]
    raise LionsimError(
        f"data split {split!r} left a worker with fewer than {min_size} of {len(y)} samples in "
        f"{DIRICHLET_DRAWS} draws ({workers} workers); raise ALPHA, use fewer workers or a smaller batch size"
    )


def _dirichlet_draw(y: np.ndarray, workers: int, alpha: float, rng: np.random.Generator) -> list[np.ndarray] | None:
    """One label-skewed partition of indices 0..len(y)-1, or None if a class found no open worker."""
    parts: list[list[np.ndarray]] = [[] for _ in range(workers)]
    sizes = np.zeros(workers, dtype=np.int64)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        p = rng.dirichlet(np.full(workers, alpha))
        p = p * (sizes < len(y) / workers)  # full workers take no more (NIID-Bench balancing)
        if not p.sum() > 0:  # tiny alpha can underflow every open worker's share to 0
            return None
        cuts = (np.cumsum(p / p.sum()) * len(idx)).astype(np.int64)[:-1]
        for w, part in enumerate(np.split(idx, cuts)):
            parts[w].append(part)
            sizes[w] += len(part)
    return [np.concatenate(p) for p in parts]
