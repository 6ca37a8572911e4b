"""Plain reference of Muon, read from the authors' code (github KellerJordan/Muon muon.py @857d1ad:
zeropower_via_newtonschulz5, muon_update, MuonWithAuxAdam, adam_update) in data-parallel form;
checked bit for bit against muon_update there. Independent of lionsim: tests compare lionsim to it.

Semantics: grads are averaged over W workers (DDP all-reduce, outside the optimizer),
then each Muon param is updated by ONE owner rank (round-robin over params sorted by size desc) and
all-gathered; AdamW params are updated redundantly on every rank.  All ranks end with identical
params, so one trajectory is returned.

ref_muon(worker_grads, params0, steps, ...) -> (trajectory, bytes_per_step)
  worker_grads: list over W workers of list over steps of list-of-tensors (same shapes as params0),
                or a callable grad_fn(worker, step, params) -> list of tensors (then pass W=).
  params0: list of tensors (2-D/4-D -> Muon by default, 1-D/0-D -> AdamW), or a flat 1-D tensor
           (then everything is AdamW unless use_muon says otherwise -- a flat tensor is 1-D).
  returns trajectory: list (steps+1) of list of tensors (fp32 clones),
          bytes_per_step: list (steps) of list (W) of dicts:
             grad_allreduce_payload  = N_all * grad_bytes   (what the worker contributes)
             grad_allreduce_ring     = 2*(W-1)/W * N_all * grad_bytes  (ring wire bytes sent)
             allgather_payload       = sum numel of Muon params it owns (+ padding) * param_bytes
             allgather_ring          = bytes sent in a ring all-gather (all chunks but its successor's)
"""
from __future__ import annotations

import torch

NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz5(G: torch.Tensor, steps: int = 5, dtype=torch.bfloat16, eps: float = 1e-7) -> torch.Tensor:
    a, b, c = NS_COEFFS
    X = G.to(dtype)
    tall = G.size(-2) > G.size(-1)
    if tall:
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + eps)   # Frobenius norm
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A          # = (c*A) @ A, exactly as muon.py (matters for bf16 bit-exactness)
        X = a * X + B @ X
    if tall:
        X = X.mT
    return X


def ns_flops(rows: int, cols: int, steps: int = 5) -> int:
    m, n = min(rows, cols), max(rows, cols)
    return steps * (4 * m * m * n + 2 * m ** 3)


def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True, ns_dtype=torch.bfloat16):
    """Returns (update, new_momentum); does not mutate its inputs."""
    # torch.lerp(a, b, w) = a + w*(b - a); torch.lerp is used (not the written-out formula) so that the
    # fp32 rounding matches muon.py bit for bit (bf16 NS amplifies 1-ulp differences).
    momentum = torch.lerp(momentum, grad, 1 - beta)                 # M <- beta*M + (1-beta)*G  (EMA)
    update = torch.lerp(grad, momentum, beta) if nesterov else momentum   # (1-beta)*G + beta*M
    orig_shape = grad.shape
    u2 = update.reshape(len(update), -1) if update.ndim == 4 else update
    O = newton_schulz5(u2, ns_steps, ns_dtype)
    scale = max(1, grad.size(-2) / grad.size(-1)) ** 0.5            # quirk: ORIGINAL grad's last 2 dims
    O = O * scale
    return O.reshape(orig_shape), momentum


def ref_muon(worker_grads, params0, steps, lr=0.02, weight_decay=0.0, momentum=0.95, ns_steps=5,
             nesterov=True, use_muon=None, adam_lr=3e-4, adam_betas=(0.9, 0.95), adam_eps=1e-10,
             adam_wd=0.0, ns_dtype=torch.bfloat16, grad_bytes=4, param_bytes=4, W=None):
    flat_in = isinstance(params0, torch.Tensor)
    params = [params0.clone().float()] if flat_in else [p.clone().float() for p in params0]
    grad_fn = worker_grads if callable(worker_grads) else None
    if grad_fn is None:
        W = len(worker_grads)
    assert W, "with a grad_fn(worker, step, params) pass W="
    if use_muon is None:
        use_muon = [p.ndim >= 2 for p in params]
    # ownership as in Muon.step: Muon params sorted by size() descending, round-robin over ranks
    muon_idx = [i for i in range(len(params)) if use_muon[i]]
    muon_idx = sorted(muon_idx, key=lambda i: tuple(params[i].size()), reverse=True)  # stable like sorted()
    pad = W - len(muon_idx) % W if muon_idx else 0
    owners = {}
    for j, i in enumerate(muon_idx):
        owners[i] = j % W
    N_all = sum(p.numel() for p in params)

    mom = {i: torch.zeros_like(params[i]) for i in muon_idx}       # lives on the owner rank only
    adam = {i: [torch.zeros_like(params[i]), torch.zeros_like(params[i]), 0]
            for i in range(len(params)) if not use_muon[i]}       # replicated on every rank
    traj = [[p.clone() for p in params]]
    bytes_log = []
    for t in range(steps):
        # 1) DDP gradient mean
        gl = [grad_fn(w, t, [p.clone() for p in params]) if grad_fn else worker_grads[w][t] for w in range(W)]
        if flat_in:
            gl = [[g if not isinstance(g, (list, tuple)) else g[0]] for g in gl]
        G = [sum(gl[w][k].float() for w in range(W)) / W for k in range(len(params))]
        # 2) Muon params: owner computes, then all-gather (simulated: everyone sees the result)
        for i in muon_idx:
            upd, mom[i] = muon_update(G[i], mom[i], momentum, ns_steps, nesterov, ns_dtype)
            params[i] = params[i] * (1 - lr * weight_decay)
            params[i] = params[i] - lr * upd.float()
        # 3) AdamW params, every rank
        b1, b2 = adam_betas
        for i, st in adam.items():
            m, v, k = st
            k += 1
            m = m + (1 - b1) * (G[i] - m)
            v = v + (1 - b2) * (G[i] * G[i] - v)
            u = (m / (1 - b1 ** k)) / ((v / (1 - b2 ** k)).sqrt() + adam_eps)
            params[i] = params[i] * (1 - adam_lr * adam_wd) - adam_lr * u
            adam[i] = [m, v, k]
        traj.append([p.clone() for p in params])
        # bytes
        chunks = [0] * W          # elements each rank contributes to the all-gathers this step
        for j, i in enumerate(muon_idx):
            chunks[j % W] += params[i].numel()
        last = params[muon_idx[-1]].numel() if muon_idx else 0
        for r in range(pad):       # padding entries: the ranks after the last real one, then whole extra blocks
            chunks[(len(muon_idx) + r) % W] += last
        # ring all-gather per block: rank r sends every chunk except its successor's; sum over blocks
        nblocks = (len(muon_idx) + pad) // W if muon_idx else 0
        ring = [0] * W
        padded = muon_idx + [None] * pad
        for bi in range(nblocks):
            block = [params[i].numel() if i is not None else last for i in padded[bi * W:(bi + 1) * W]]
            tot = sum(block)
            for r in range(W):
                ring[r] += tot - block[(r + 1) % W]
        bytes_log.append([{
            "grad_allreduce_payload": N_all * grad_bytes,
            "grad_allreduce_ring": 2 * (W - 1) / W * N_all * grad_bytes,
            "allgather_payload": chunks[r] * param_bytes,
            "allgather_ring": ring[r] * param_bytes,
        } for r in range(W)])
    if flat_in:
        traj = [tp[0] for tp in traj]
    return traj, bytes_log

