"""Plain reference of MuLoCo, read from the authors' code (github facebookresearch/MuLoCo @475bbf4): DiLoCo
with the dion-style Muon inner optimizer and QuantizedOuterSGD (row-wise statistical 2-bit quantizer + error
feedback, all-gather, optional re-quantization of the mean, outer Nesterov SGD); the quantizer and the outer
round were checked against QuantizedOuterSGD. Independent of lionsim: tests compare lionsim to it.

ref_muloco(worker_grads, params0, steps, H, ...) -> (trajectory, bytes_per_step)
  worker_grads: list over W of list over steps of list-of-tensors, or grad_fn(worker, step, local_params) (pass W=).
  params0: list of tensors; 2-D (ndim>=2) -> Muon unless use_muon says otherwise, others -> AdamW.
  skip: set of param indices sent unquantized without EF (norms / embeddings / output.weight in the paper runs).
  quantize: "row_wise_statistical" | "statistical" | None (plain fp32 mean, no EF).
  trajectory: global params after every step (they move only at syncs).
  bytes_per_step[t][w] = dict(message=bytes of this worker's all-gathered message, ring_allgather=(W-1)*message).
"""
from __future__ import annotations

import math

import torch

NS_CONSTS = [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
             (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)]


def skipped(names, skip_norm=True, skip_embedding=True):
    """Indices QuantizedOuterSGD sends unquantized, by its name rule (_save_grads): "norm" in the name
    (skip_norm_quantization), "embedding" or "output.weight" in it (skip_embedding_quantization)."""
    return {i for i, name in enumerate(names)
            if (skip_norm and "norm" in name) or (skip_embedding and ("embedding" in name or "output.weight" in name))}


def ns_dion(G, eps=1e-8, dtype=torch.bfloat16):
    X = G.to(dtype)
    tall = G.size(-2) > G.size(-1)
    if tall:
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + eps)
    for a, b, c in NS_CONSTS:
        A = X @ X.mT
        B = b * A + c * (A @ A)
        X = a * X + B @ X
    return X.mT if tall else X


def q_rowwise(x: torch.Tensor, n_bins=4, rng=6.0, rowwise=True):
    """Returns (codes, shifts, lookups) of BatchedRowiseQuantizationCompressor (or the per-tensor one)."""
    rows = x.reshape(1, -1) if (x.ndim == 1 or not rowwise) else x.reshape(x.shape[0], -1)
    R, n = rows.shape
    offset = n_bins // 2
    codes = torch.empty_like(rows, dtype=torch.long)
    shifts = torch.empty(R, dtype=rows.dtype)
    lookups = torch.zeros(R, n_bins, dtype=rows.dtype)
    for r in range(R):
        row = rows[r]
        shift = row.mean()
        c = row - shift
        sigma = c.norm() / math.sqrt(max(n - 1, 1))
        scale = rng * sigma / n_bins
        if scale == 0 or torch.isnan(scale) or torch.isinf(scale):
            scale = torch.tensor(1.0, dtype=rows.dtype)
        q = torch.clamp(torch.round(c / scale + offset), 0, n_bins - 1).long()
        for b in range(n_bins):
            m = q == b
            if m.any():
                lookups[r, b] = c[m].mean()
        codes[r], shifts[r] = q, shift
    return codes, shifts, lookups


def dq_rowwise(x_shape, codes, shifts, lookups):
    out = torch.stack([lookups[r][codes[r]] + shifts[r] for r in range(codes.shape[0])])
    return out.reshape(x_shape)


def message_bytes(shape, n_bins=4, rowwise=True):
    numel = int(torch.tensor(shape).prod()) if len(shape) else 1
    bits = max(1, (n_bins - 1).bit_length())
    bits = 1 if bits <= 1 else 2 if bits <= 2 else 4 if bits <= 4 else 8
    per_byte = 8 // bits
    packed = math.ceil(numel / per_byte)
    rows = shape[0] if (len(shape) > 1 and rowwise) else 1
    meta = (3 + len(shape) + rows * (1 + n_bins)) * 4 if rowwise else (2 + len(shape) + 1 + n_bins) * 4
    return packed + meta


def muloco_outer(theta, local, err, outer_buf, outer_lr=0.8, outer_momentum=0.9, outer_nesterov=True,
                 quantize="row_wise_statistical", n_bins=4, q_range=6.0, error_decay=0.9, ef_alpha=1.0,
                 use_ef=True, skip=(), simulate_quantization_after_reduce=True):
    """One QuantizedOuterSGD round. theta: list of global tensors; local[w]: worker w's params after the
    inner phase; err[w][i], outer_buf[i] are updated in place (lists). Returns (new theta, bytes row)."""
    W, P = len(local), len(theta)
    theta = list(theta)
    row = [dict(message=0, ring_allgather=0) for _ in range(W)]
    rowwise = quantize == "row_wise_statistical"
    for i in range(P):
        recs = []
        for w in range(W):
            delta = theta[i] - local[w][i]                    # previous global - local
            if quantize is None or i in skip:
                recs.append(delta)
                nb = delta.numel() * 4 + 4
            elif use_ef:
                if error_decay != 1.0:
                    err[w][i] = err[w][i] * error_decay
                err[w][i] = err[w][i] + outer_lr * delta      # e <- decay*e + lr*Delta  (outer lr!)
                c, sh, lk = q_rowwise(err[w][i], n_bins, q_range, rowwise)
                rec = dq_rowwise(err[w][i].shape, c, sh, lk)
                err[w][i] = err[w][i] - ef_alpha * rec
                recs.append(rec)
                nb = message_bytes(tuple(delta.shape), n_bins, rowwise)
            else:
                c, sh, lk = q_rowwise(delta, n_bins, q_range, rowwise)
                recs.append(dq_rowwise(delta.shape, c, sh, lk))
                nb = message_bytes(tuple(delta.shape), n_bins, rowwise)
            row[w]["message"] += nb
            row[w]["ring_allgather"] += (W - 1) * nb
        agg = torch.stack(recs).mean(dim=0)
        if quantize is not None and i not in skip and simulate_quantization_after_reduce:
            c, sh, lk = q_rowwise(agg, n_bins, q_range, rowwise)
            agg = dq_rowwise(agg.shape, c, sh, lk)
        d = agg
        if outer_momentum != 0:                               # torch SGD: buf = g first, then mu*buf + g
            outer_buf[i] = agg.clone() if outer_buf[i] is None else outer_momentum * outer_buf[i] + agg
            d = agg + outer_momentum * outer_buf[i] if outer_nesterov else outer_buf[i]
        theta[i] = theta[i] - outer_lr * d
    return theta, row


def ref_muloco(worker_grads, params0, steps, H=30, inner_lr=0.02, mu=0.9, nesterov=False, inner_wd=1e-4,
               adjust_lr="spectral_norm", adam_betas=(0.9, 0.99), adam_eps=1e-8, use_muon=None,
               outer_lr=0.8, outer_momentum=0.9, outer_nesterov=True, quantize="row_wise_statistical",
               n_bins=4, q_range=6.0, error_decay=0.9, ef_alpha=1.0, use_ef=True, skip=(),
               simulate_quantization_after_reduce=True, ns_dtype=torch.bfloat16, W=None):
    grad_fn = worker_grads if callable(worker_grads) else None
    if grad_fn is None:
        W = len(worker_grads)
    theta = [p.clone().double() for p in params0]
    P = len(theta)
    if use_muon is None:
        use_muon = [p.ndim >= 2 for p in theta]
    local = [[t.clone() for t in theta] for _ in range(W)]
    M = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    V = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    err = [[torch.zeros_like(t) for t in theta] for _ in range(W)]
    outer_buf = [None] * P
    nstep = [0] * W
    traj, log = [[t.clone() for t in theta]], []
    for s in range(steps):
        for w in range(W):                                   # inner step (Muon / AdamW)
            g = grad_fn(w, s, [x.clone() for x in local[w]]) if grad_fn else worker_grads[w][s]
            nstep[w] += 1
            for i in range(P):
                gi = g[i].double()
                if use_muon[i]:
                    M[w][i] = mu * M[w][i] + gi
                    U = mu * M[w][i] + gi if nesterov else M[w][i]
                    O = ns_dion(U.reshape(U.shape[0], -1), dtype=ns_dtype).reshape(U.shape).double()
                    fo, fi = theta[i].shape[:2]
                    alr = inner_lr * math.sqrt(fo / fi) if adjust_lr == "spectral_norm" else \
                        inner_lr * 0.2 * math.sqrt(max(fo, fi)) if adjust_lr == "rms_norm" else inner_lr
                    local[w][i] = local[w][i] * (1 - inner_lr * inner_wd) - alr * O
                else:
                    b1, b2 = adam_betas
                    M[w][i] = b1 * M[w][i] + (1 - b1) * gi
                    V[w][i] = b2 * V[w][i] + (1 - b2) * gi * gi
                    mh, vh = M[w][i] / (1 - b1 ** nstep[w]), V[w][i] / (1 - b2 ** nstep[w])
                    local[w][i] = local[w][i] * (1 - inner_lr * inner_wd) - inner_lr * mh / (vh.sqrt() + adam_eps)
        row = [dict(message=0, ring_allgather=0) for _ in range(W)]
        if (s + 1) % H == 0:                                  # outer step
            theta, row = muloco_outer(theta, local, err, outer_buf, outer_lr, outer_momentum, outer_nesterov,
                                      quantize, n_bins, q_range, error_decay, ef_alpha, use_ef, skip,
                                      simulate_quantization_after_reduce)
            for w in range(W):
                local[w] = [t.clone() for t in theta]
        traj.append([t.clone() for t in theta])
        log.append(row)
    return traj, log

