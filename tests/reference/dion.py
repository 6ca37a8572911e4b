"""Plain reference of Dion, read from the authors' code (github microsoft/dion @0a059a4: dion_simple.py
algorithm; data-parallel compressed sync as in dion_reference.py with power_iters=1, Householder QR),
checked against dion_simple over 4 steps. Independent of lionsim: tests compare lionsim to it.

ref_dion(worker_grads, params0, steps, lr, ...) -> (trajectory, bytes_per_step)
  worker_grads: list over W workers of list over steps of list-of-tensors, or callable
                grad_fn(worker, step, params) -> list of tensors (then pass W=).
  params0: list of tensors. 2-D tensors use Dion unless use_dion says otherwise; others use
           `scalar_opt` ("adamw" or "lion").
  mode: "compressed"  -> decoupled momentum per worker, all-reduce(avg) of P then of R
                         (used for a matrix iff rank_fraction<1 and (m+n)r < m n, as in dion.py;
                          compressed=True/False forces it on/off)
        otherwise the gradient is all-reduced (avg) and one momentum is kept (dion_simple on mean grad).
  transpose: False = dion_simple (P is m x r, Q n x r); True = dion.py (run on M^T when m < n).
  zero_guard: True = dion.py fix_all_zero_or_nan (keep old Q if M == 0); False = dion_simple.
  returns trajectory (steps+1 lists of tensors) and bytes_per_step[t][w] = dict(
      payload = values this worker contributes to its all-reduces * elem_bytes,
      ring    = 2 (W-1)/W * payload  (ring all-reduce wire bytes sent)).
"""
from __future__ import annotations

import math

import torch


def _rank(m, n, rank_fraction, rank_multiple_of=1, rank_abs=None):
    if rank_abs is not None:                       # dion_simple: absolute rank
        return min(rank_abs, min(m, n))
    r = rank_fraction * min(m, n)
    r = rank_multiple_of * math.ceil(r / rank_multiple_of)
    return int(min(r, m, n))


def ref_dion(worker_grads, params0, steps, lr=0.01, mu=0.95, betas=(0.9, 0.95), weight_decay=0.01,
             rank_fraction=1.0, rank_multiple_of=1, rank_abs=None, epsilon=1e-8, scalar_opt="adamw",
             use_dion=None, transpose=False, zero_guard=True, compressed=None, seed=0,
             elem_bytes=4, W=None):
    grad_fn = worker_grads if callable(worker_grads) else None
    if grad_fn is None:
        W = len(worker_grads)
    assert W
    X = [p.clone().double() for p in params0]      # float64 for a clean reference
    n_p = len(X)
    if use_dion is None:
        use_dion = [x.ndim == 2 for x in X]
    gen = torch.Generator().manual_seed(seed)
    st = {}
    for i in range(n_p):
        if use_dion[i]:
            m, n = X[i].shape
            r = _rank(m, n, rank_fraction, rank_multiple_of, rank_abs)
            tr = transpose and m < n
            qrows = m if tr else n
            comp = compressed if compressed is not None else (rank_fraction < 1 and (m + n) * r < m * n and rank_abs is None)
            st[i] = dict(r=r, tr=tr, comp=comp,
                         Q=torch.randn(qrows, r, generator=gen).double(),   # same on all workers (adapted: a float32 draw, as lionsim draws it)
                         M=[torch.zeros_like(X[i]) for _ in range(W)] if comp else [torch.zeros_like(X[i])])
        else:
            st[i] = dict(m1=torch.zeros_like(X[i]), v=torch.zeros_like(X[i]))
    traj = [[x.clone() for x in X]]
    log = []
    b1, b2 = betas
    for t in range(steps):
        step = t + 1
        G = [grad_fn(w, t, [x.clone() for x in X]) if grad_fn else worker_grads[w][t] for w in range(W)]
        G = [[g.double() for g in gw] for gw in G]
        payload = 0
        for i in range(n_p):
            s = st[i]
            if use_dion[i]:
                m, n = X[i].shape
                if s["comp"]:
                    for w in range(W):
                        s["M"][w] = s["M"][w] + G[w][i]
                    Ms = [Mw.T if s["tr"] else Mw for Mw in s["M"]]
                    Pavg = sum(Mw @ s["Q"] for Mw in Ms) / W          # all-reduce avg of P
                    payload += Pavg.numel()
                    P, _ = torch.linalg.qr(Pavg)
                    R = sum(Mw.T @ P for Mw in Ms) / W                # all-reduce avg of R
                    payload += R.numel()
                    allzero = all(bool((Mw == 0).all()) for Mw in Ms)  # dion.py checks locally; equal here if all zero
                else:
                    Gm = sum(G[w][i] for w in range(W)) / W           # gradient all-reduce
                    payload += Gm.numel()
                    s["M"][0] = s["M"][0] + Gm
                    Ms = [s["M"][0].T if s["tr"] else s["M"][0]]
                    P, _ = torch.linalg.qr(Ms[0] @ s["Q"])
                    R = Ms[0].T @ P
                    allzero = bool((Ms[0] == 0).all())
                if zero_guard and allzero:
                    P = torch.zeros_like(P)
                    R = s["Q"].clone()
                # error feedback on every worker's own momentum with the shared P, R
                for k in range(len(s["M"])):
                    low = P @ R.T
                    s["M"][k] = s["M"][k] - (1 - mu) * (low.T if s["tr"] else low)
                s["Q"] = R / (R.norm(dim=0, keepdim=True) + epsilon)
                scaled_lr = lr * (m / n) ** 0.5
                upd = P @ s["Q"].T
                X[i] = X[i] * (1 - weight_decay * lr) - scaled_lr * (upd.T if s["tr"] else upd)
            else:
                g = sum(G[w][i] for w in range(W)) / W
                payload += g.numel()
                if scalar_opt == "adamw":
                    s["m1"] = s["m1"] + (1 - b1) * (g - s["m1"])
                    s["v"] = b2 * s["v"] + (1 - b2) * g * g
                    denom = s["v"].sqrt() / math.sqrt(1 - b2 ** step) + epsilon
                    X[i] = X[i] * (1 - lr * weight_decay) - (lr / (1 - b1 ** step)) * s["m1"] / denom
                else:  # lion
                    u = torch.sign(s["m1"] + (1 - b1) * (g - s["m1"]))
                    s["m1"] = s["m1"] + (1 - b2) * (g - s["m1"])
                    X[i] = X[i] * (1 - lr * weight_decay) - lr * u
        traj.append([x.clone() for x in X])
        log.append([{"payload": payload * elem_bytes, "ring": 2 * (W - 1) / W * payload * elem_bytes}
                    for _ in range(W)])
    return traj, log

