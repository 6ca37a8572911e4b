"""Copied from the method notes' ref_sparseloco.py (checked there against CCLoco's CCLoco.step, the
SparseLoCo authors' code), changed only to take the float dtype of its params (`dtype`: lionsim
computes in float32, so a test compares code for code). Plain reference of SparseLoCo (CCLoco/SparseLoCo code: chunked top-k + 2-bit statistical
quantization + error feedback, outer SGD) on W workers.  See sparseloco.md.

ref_sparseloco(worker_grads, params0, steps, H, ...) -> (trajectory, bytes_per_step)
  worker_grads: list over W of list over steps of list-of-tensors, or callable
                grad_fn(worker, step, local_params) -> list of tensors (then pass W=).
  params0: list of 1-D / 2-D tensors (or one flat tensor).
  Inner optimizer: "sgd" (plain, inner_lr) or "adamw" (torch AdamW semantics).
  k_rule: "ccloco" (CCLoco HEAD, square + rate_2d) or "gist" (SparseLoCo gist class); see sparseloco.md.
  aggregate: "contributors" (the code: mean over the workers that selected a position) or "mean_W"
             (the paper's written (1/R) sum_r; unverified which the paper's runs used -> the code's).
  trajectory: global params after every step (between syncs the global params do not move).
  bytes_per_step[t][w] = dict(packed=bits-exact compact message bytes, as_coded=int64 idx + uint8 codes
                              + fp32 shift/lookup, n_values=number of (idx,val) pairs); zeros on local steps.
"""
from __future__ import annotations

import math

import torch


def smaller_split(n: int, close_to: int) -> int:
    """_get_smaller_split: largest divisor of n that is <= close_to (n if none larger...)."""
    divs = sorted(d for d in range(1, n + 1) if n % d == 0)
    for ix, v in enumerate(divs):
        if v == close_to:
            return v
        if v > close_to:
            return v if ix == 0 else divs[ix - 1]
    return n


def chunk_view(x: torch.Tensor, chunk_size: int, oned_target=None):
    """Returns (chunks [C, L], info) and an inverse via unchunk. 1-D: chunks of smaller_split(n, oned_target)."""
    if x.ndim == 1:
        s = smaller_split(x.shape[0], oned_target or chunk_size)
        return x.reshape(-1, s).clone(), ("1d", x.shape, s)
    h, w = smaller_split(x.shape[0], chunk_size), smaller_split(x.shape[1], chunk_size)
    Y, X = x.shape[0] // h, x.shape[1] // w
    t = x.reshape(Y, h, X, w).permute(0, 2, 1, 3).reshape(Y * X, h * w)   # (y h)(x w) -> y x (h w)
    return t.clone(), ("2d", x.shape, (h, w))


def unchunk(c: torch.Tensor, info):
    kind, shape, s = info
    if kind == "1d":
        return c.reshape(shape).clone()
    h, w = s
    Y, X = shape[0] // h, shape[1] // w
    return c.reshape(Y, X, h, w).permute(0, 2, 1, 3).reshape(shape).clone()


def topk_chunk(row: torch.Tensor, k: int):
    """Top-k |x| in one chunk; deterministic tie-break: lower index first (torch's is unspecified)."""
    order = sorted(range(row.numel()), key=lambda j: (-abs(float(row[j])), j))
    return order[:k]


def quantize(vals: torch.Tensor, n_bins: int, rng_sigmas: float):
    """Statistical quantizer of TopKCompressor._quantize over all selected values of one tensor.
    Mirrors the code's dtypes: codes and the lookup table are computed in fp32 (as in CCLoco), the
    shift in the input dtype. Returns (codes, shift, lookup); dequantised = (lookup[q] + shift).to(dtype)."""
    offset = n_bins // 2
    shift = vals.mean()
    c = vals - shift
    sigma = c.norm() / math.sqrt(c.numel() - 1) if c.numel() > 1 else torch.tensor(0.0, dtype=vals.dtype)
    scale = rng_sigmas * sigma / n_bins
    if scale == 0 or torch.isnan(scale) or torch.isinf(scale):
        scale = torch.tensor(1.0, dtype=vals.dtype)
    q = torch.clamp(torch.round(c.float() / scale + offset), 0, n_bins - 1).long()
    lookup = torch.zeros(n_bins, dtype=torch.float32)
    for b in range(n_bins):
        m = q == b
        if m.any():
            lookup[b] = c.float()[m].sum() / m.sum()
    return q, shift, lookup


def dequantize(q, shift, lookup, dtype):
    return (lookup[q] + shift).to(dtype)


def chunk_k(ndim: int, L: int, top_k: int, chunk_size: int, k_rule: str) -> int:
    """k per chunk.  k_rule="ccloco": CCLoco HEAD (5bfce52) with train.py defaults chunk_strat="square",
    oned_chunk_strat="rate_2d": 2-D -> k = top_k; 1-D -> k = max(1, round(L*top_k/chunk_size**2)).
    k_rule="gist": SparseLoCo class in the Nov-2025 gist: k = max(1, round(L*top_k/chunk_size**2)) always.
    Then clamped to [1, L] (TopKCompressor._clamp_topk).  Python round = banker's rounding."""
    if k_rule == "gist" or ndim == 1:
        k = int(max(1.0, round(L * top_k / chunk_size ** 2)))
    else:
        k = top_k
    return min(max(k, 1), L)


def compress(e: torch.Tensor, top_k: int, chunk_size: int, use_quant: bool, n_bins: int, rng_sigmas: float,
             k_rule: str = "ccloco"):
    """Returns (idx [C,k] list-of-lists, dequantised values [C,k], info, k, chunk_len)."""
    oned_target = chunk_size ** 2 if k_rule == "ccloco" else chunk_size     # rate_2d: 1-D target chunk 4096
    ch, info = chunk_view(e, chunk_size, oned_target)
    C, L = ch.shape
    k = chunk_k(e.ndim, L, top_k, chunk_size, k_rule)
    idx = [topk_chunk(ch[c], k) for c in range(C)]
    vals = torch.stack([ch[c, idx[c]] for c in range(C)])
    if use_quant:
        q, shift, lookup = quantize(vals.flatten(), n_bins, rng_sigmas)
        vals = dequantize(q, shift, lookup, vals.dtype).reshape(C, k)
    return idx, vals, info, k, L


def ref_sparseloco(worker_grads, params0, steps, H=15, outer_lr=1.0, error_decay=0.95, top_k=32,
                   chunk_size=64, use_quantization=True, quantization_bins=4, quantization_range=6.0,
                   outer_momentum=0.0, outer_wd=0.0, inner="sgd", inner_lr=1e-3, inner_betas=(0.9, 0.999),
                   inner_eps=1e-8, inner_wd=0.0, k_rule="ccloco", aggregate="contributors", W=None,
                   dtype=torch.float64):
    grad_fn = worker_grads if callable(worker_grads) else None
    if grad_fn is None:
        W = len(worker_grads)
    flat_in = isinstance(params0, torch.Tensor)
    theta = [params0.clone().to(dtype)] if flat_in else [p.clone().to(dtype) for p in params0]
    P = len(theta)
    local = [[t.clone() for t in theta] for _ in range(W)]
    err = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    mom = [torch.zeros_like(t) for t in theta]
    am = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    av = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    inner_t = [0] * W
    traj = [[t.clone() for t in theta]]
    log = []
    for s in range(steps):
        # ---- inner step on every worker
        for w in range(W):
            g = grad_fn(w, s, [x.clone() for x in local[w]]) if grad_fn else worker_grads[w][s]
            if flat_in and isinstance(g, torch.Tensor):
                g = [g]
            inner_t[w] += 1
            for i in range(P):
                gi = g[i].to(dtype)
                if inner == "sgd":
                    local[w][i] = local[w][i] - inner_lr * gi
                else:
                    b1, b2 = inner_betas
                    local[w][i] = local[w][i] * (1 - inner_lr * inner_wd)
                    am[w][i] = b1 * am[w][i] + (1 - b1) * gi
                    av[w][i] = b2 * av[w][i] + (1 - b2) * gi * gi
                    mh = am[w][i] / (1 - b1 ** inner_t[w])
                    vh = av[w][i] / (1 - b2 ** inner_t[w])
                    local[w][i] = local[w][i] - inner_lr * mh / (vh.sqrt() + inner_eps)
        row = [dict(packed=0, as_coded=0, n_values=0) for _ in range(W)]
        if (s + 1) % H == 0:
            # ---- outer step (p.grad = saved global - local is formed BEFORE the decoupled wd)
            saved = [t.clone() for t in theta]
            for i in range(P):
                theta[i] = theta[i] * (1 - outer_lr * outer_wd)
                msgs = []
                for w in range(W):
                    delta = saved[i] - local[w][i]          # pseudo-gradient (gradient sign)
                    err[w][i] = error_decay * err[w][i] + outer_lr * delta if error_decay != 1.0 \
                        else err[w][i] + outer_lr * delta
                    idx, vals, info, k, L = compress(err[w][i], top_k, chunk_size, use_quantization,
                                                     quantization_bins, quantization_range, k_rule)
                    rec = torch.zeros(len(idx), L, dtype=theta[i].dtype)
                    for c in range(len(idx)):
                        rec[c, idx[c]] = vals[c]
                    err[w][i] = err[w][i] - unchunk(rec, info)
                    msgs.append((idx, vals))
                    nv = len(idx) * k
                    bits_idx = math.ceil(math.log2(L)) if L > 1 else 0
                    bits_val = math.ceil(math.log2(quantization_bins)) if use_quantization else 32
                    extra = (quantization_bins + 1) * 4 if use_quantization else 0
                    row[w]["n_values"] += nv
                    row[w]["packed"] += math.ceil(nv * (bits_idx + bits_val) / 8) + extra
                    row[w]["as_coded"] += nv * (8 + (1 if use_quantization else 4)) + extra
                # aggregate: mean over the workers that selected each position
                C = len(msgs[0][0])
                tot = torch.zeros(C, L, dtype=theta[i].dtype)
                cnt = torch.zeros(C, L, dtype=theta[i].dtype)
                for idx, vals in msgs:
                    for c in range(C):
                        for j, pos in enumerate(idx[c]):
                            tot[c, pos] += vals[c, j]
                            cnt[c, pos] += 1
                if aggregate == "contributors":      # code: scatter_reduce(mean, include_self=False)
                    agg = torch.where(cnt > 0, tot / cnt.clamp(min=1), torch.zeros_like(tot))
                else:                                # "mean_W": the paper's written formula (1/R) sum_r
                    agg = tot / W
                g = unchunk(agg, info)
                # torch SGD (weight_decay=0 inside SGD): momentum buffer b = g first time, then mu*b + g
                if outer_momentum != 0:
                    mom[i] = g.clone() if s + 1 == H else outer_momentum * mom[i] + g
                    g = mom[i]
                theta[i] = theta[i] - outer_lr * g
            for w in range(W):
                local[w] = [t.clone() for t in theta]
        traj.append([t.clone() for t in theta])
        log.append(row)
    if flat_in:
        traj = [tp[0] for tp in traj]
    return traj, log


if __name__ == "__main__":
    torch.manual_seed(0)
    assert smaller_split(768, 64) == 64 and smaller_split(100, 64) == 50 and smaller_split(97, 64) == 1
    x = torch.randn(128, 192)
    ch, info = chunk_view(x, 64)
    assert ch.shape == (6, 4096) and torch.equal(unchunk(ch, info), x)
    assert torch.equal(ch[1].reshape(64, 64), x[:64, 64:128])          # tile (y=0, x=1)
    # quantizer: 4 bins, codes in 0..3, constant input exact
    q, sh, lk = quantize(torch.full((10,), 3.0, dtype=torch.float64), 4, 6.0)
    assert torch.all(q == 2) and float(dequantize(q, sh, lk, torch.float64)[0]) == 3.0
    # W=1, no quantization, k = all -> exact DiLoCo with outer lr 1: theta follows the local replica
    g1 = [[[torch.randn(8, 8)] for _ in range(4)]]
    tr, by = ref_sparseloco(g1, [torch.zeros(8, 8)], 4, H=2, top_k=64 * 64, chunk_size=64,
                            use_quantization=False, inner_lr=0.1)
    exp = -0.1 * (g1[0][0][0] + g1[0][1][0] + g1[0][2][0] + g1[0][3][0]).double()
    assert torch.allclose(tr[4][0], exp, atol=1e-12)
    assert by[0][0]["packed"] == 0 and by[1][0]["n_values"] == 64
    # EF conservation on one worker: transmitted + residual == accumulated
    W = 3
    gs = [[[torch.randn(128, 64), torch.randn(64)] for _ in range(2)] for _ in range(W)]
    tr, by = ref_sparseloco(gs, [torch.zeros(128, 64), torch.zeros(64)], 2, H=2, top_k=32, error_decay=0.95)
    # bytes: 2-D: 2 chunks x 32 values x (12+2) bits = 112 B (+20 B table); 1-D: 1 chunk of 64, k=1: 1*(6+2) bits -> 1 B (+20)
    assert by[1][0]["packed"] == 112 + 20 + 1 + 20, by[1][0]
    assert by[1][0]["n_values"] == 2 * 32 + 1
    nz = (tr[2][0] != 0).sum().item()
    assert 32 * 2 <= nz <= 3 * 32 * 2          # union of the W workers' selections
    print("ref_sparseloco self-check OK")
