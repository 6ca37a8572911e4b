"""DeMo (Peng, Quesnelle & Kingma 2024) against a plain reference written here: the orthonormal
DCT-II from its cosine formula (and scipy's), chunks as the authors pick them, top-k per chunk,
the sent part taken out of each worker's momentum, each coefficient averaged over the workers
that sent it, sign-SGD; plus its bytes."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.dct import ChunkedDCT, chunk_size, dct_matrix
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.reference.impl import sign

SHAPES = [(8, 6), (6,), (1, 1, 5)]  # a matrix, a vector, a 3-d tensor viewed as [1, 5]
TARGET, TOPK = 4, 3


def test_dct_is_scipys_orthonormal_dct_ii():
    scipy_fft = pytest.importorskip("scipy.fft")
    import numpy as np

    for n in (1, 2, 5, 8, 64):
        assert np.allclose(scipy_fft.dct(np.eye(n), norm="ortho", axis=0), dct_matrix(n, torch.float64).numpy())


def test_chunks_are_the_largest_divisor_not_above_the_target():
    for n in range(1, 200):
        for target in (1, 4, 7, 64):
            assert chunk_size(n, target) == max(d for d in range(1, n + 1) if n % d == 0 and d <= target)
    assert chunk_size(50257, 64) == 29 and chunk_size(97, 64) == 1  # GPT-2's vocabulary; a prime


def _cos(n):
    """The DCT-II basis written out: D[k][i] = sqrt(2/n) c_k cos(pi (2i + 1) k / 2n)."""
    return [[math.sqrt(2 / n) * (1 / math.sqrt(2) if k == 0 else 1.0) * math.cos(math.pi * (2 * i + 1) * k / (2 * n))
             for i in range(n)] for k in range(n)]


def _views():
    """(offset, rows, cols, chunk rows, chunk cols) per tensor, as the authors chunk a matrix."""
    out, offset = [], 0
    for shape in SHAPES:
        numel = math.prod(shape)
        rows = shape[0] if len(shape) > 1 else 1
        cols = numel // rows
        ca = max(d for d in range(1, rows + 1) if rows % d == 0 and d <= TARGET)
        cb = max(d for d in range(1, cols + 1) if cols % d == 0 and d <= TARGET)
        out.append((offset, rows, cols, ca, cb))
        offset += numel
    return out, offset


def _chunks(x, view):
    """Every chunk of one tensor: (list of its (i, j) cells, their block transform)."""
    offset, rows, cols, ca, cb = view
    da, db = _cos(ca), _cos(cb)
    for y in range(rows // ca):
        for z in range(cols // cb):
            cells = [(y * ca + i, z * cb + j) for i in range(ca) for j in range(cb)]
            yield cells, da, db


def forward(x, view):
    """{(chunk, k, l): coefficient} of one tensor."""
    offset, rows, cols, ca, cb = view
    out = {}
    for c, (cells, da, db) in enumerate(_chunks(x, view)):
        for k in range(ca):
            for l in range(cb):
                out[(c, k, l)] = sum(da[k][i % ca] * db[l][j % cb] * x[offset + i * cols + j] for i, j in cells)
    return out


def inverse(coef, view, total):
    """Parameter-space values of one tensor from {(chunk, k, l): coefficient} (missing: 0)."""
    offset, rows, cols, ca, cb = view
    out = [0.0] * total
    for c, (cells, da, db) in enumerate(_chunks(None, view)):
        for i, j in cells:
            out[offset + i * cols + j] = sum(da[k][i % ca] * db[l][j % cb] * coef.get((c, k, l), 0.0)
                                             for k in range(ca) for l in range(cb))
    return out


def reference(x, grads, lr, wd, decay):
    views, total = _views()
    workers = len(grads[0])
    delta = [[0.0] * total for _ in range(workers)]
    for g in grads:
        sent = []
        for i in range(workers):
            delta[i] = [decay * d + lr * v for d, v in zip(delta[i], g[i])]
            mine = {}
            for t, view in enumerate(views):
                coef = forward(delta[i], view)
                for c in {key[0] for key in coef}:
                    chunk = sorted(((key, v) for key, v in coef.items() if key[0] == c), key=lambda kv: -abs(kv[1]))
                    mine.update({(t, *key): v for key, v in chunk[:TOPK]})
            back = [sum(parts) for parts in zip(*(inverse({k[1:]: v for k, v in mine.items() if k[0] == t}, view, total)
                                                   for t, view in enumerate(views)))]
            delta[i] = [d - b for d, b in zip(delta[i], back)]
            sent.append(mine)
        mean = {key: sum(s[key] for s in sent if key in s) / sum(key in s for s in sent) for key in set().union(*sent)}
        update = [sum(parts) for parts in zip(*(inverse({k[1:]: v for k, v in mean.items() if k[0] == t}, view, total)
                                                 for t, view in enumerate(views)))]
        x = [xj * (1 - lr * wd) - lr * sign(u) for xj, u in zip(x, update)]
    return x


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_demo_equals_a_plain_reference(workers):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(SHAPES)])
    total = layout.numel
    gen = torch.Generator().manual_seed(workers)
    grads = [torch.randn(workers, total, generator=gen) for _ in range(4)]
    x0 = torch.randn(total, generator=gen)
    expected = reference(x0.double().tolist(), [g.double().tolist() for g in grads], 0.01, 0.1, 0.9)
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=0.01, weight_decay=0.1, betas=(0.9, 0.0), options={"demo.topk": TOPK, "demo.chunk": TARGET})
    strategy = STRATEGIES.get("demo")(cfg, layout, comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(strategy, TRANSPORTS.get("sparse-allgather")(), comm, g.clone(), x, step, Clock())
    assert x.tolist() == pytest.approx(expected, abs=1e-6)


def test_transform_round_trips_and_sends_top_k_per_chunk():
    t = ChunkedDCT([(12, 10), (7,), (64, 3, 2, 2)], 4)
    x = torch.randn(3, t.numel, generator=torch.Generator().manual_seed(0))
    c = t.encode(x)
    torch.testing.assert_close(t.decode(c), x, atol=1e-5, rtol=0)
    torch.testing.assert_close((c * c).sum(1), (x * x).sum(1))  # orthonormal: Parseval
    # (12, 10): chunks of 4 x 2 (15 of them, top 2 each); (7,): 7 chunks of 1; (64, 12): 4 x 4 (48 chunks)
    assert t.pairs(2) == 15 * 2 + 7 * 1 + 48 * 2 and t.topk(c, 2).shape == (3, t.pairs(2))


def test_demo_bytes_are_its_pairs_all_gathered():
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(SHAPES)])
    strategy = STRATEGIES.get("demo")(StrategyConfig(options={"demo.topk": TOPK, "demo.chunk": TARGET}), layout, SimComm(4))
    spec = strategy.payload_spec()
    # (8, 6): 4 x 3 chunks, 4 of them; (6,): 3 per chunk, 2 chunks; (1, 1, 5): chunks of 1, 5 of them
    assert spec.k == 4 * TOPK + 2 * TOPK + 5 * 1 and spec.over_senders
    calls = TRANSPORTS.get("sparse-allgather")().plan(spec, 4)
    assert [(c.op, c.nbytes) for c in calls] == [("all_gather", 4 * spec.k * 4)] * 2
