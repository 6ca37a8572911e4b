"""Copied from the method notes' ref_streaming_diloco.py (checked there against torchft's local_sgd.py run with a
fake manager). Plain reference of Streaming DiLoCo as implemented in torchft (local_sgd.py @73dafea), with an
optional emulation of torchft's fp8 row-wise quantized all-reduce.  See streaming-diloco.md, fp8.md.

ref_streaming_diloco(worker_grads, params0, steps, H, fragments, tau, alpha, ...)
  worker_grads: list over W of list over steps of list-of-tensors, or grad_fn(worker, step, local_params)
                (then pass W=).
  params0: list of tensors; fragments: list of P lists of param indices (default: P contiguous groups).
  returns (local_traj, global_traj, bytes_per_step):
    local_traj[t][w] = worker w's params after step t (t = 0 is the start),
    global_traj[t]   = the saved global params (original_parameters) after step t,
    bytes_per_step[t][w] = dict(payload=bytes this worker contributes, ring=wire bytes sent, fragment=f or None)
      booked at the PREPARE step (the all-reduce is in flight for tau steps).
Assumes every commit succeeds (n_sync = number of syncs so far).
"""
from __future__ import annotations

import math

import torch

FP8_MAX = 448.0


def fp8_e4m3(x: torch.Tensor) -> torch.Tensor:
    """Round fp32 to e4m3fn (RTNE, saturating like Triton's satfinite) and back to fp32."""
    return x.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn).to(torch.float32)


def _row_scale(rowmax: torch.Tensor) -> torch.Tensor:
    s = FP8_MAX / rowmax
    return torch.where(torch.isinf(s), torch.ones_like(s), s)


def fp8_allreduce_avg(xs: list[torch.Tensor]) -> torch.Tensor:
    """torchft Manager.allreduce(should_quantize=True) on one tensor held by W workers:
    row-wise fp8 quantize -> all-to-all -> fp32 sum per owned row slice (order starts at the owner
    rank) -> re-quantize (scale 448/rowmax of the sum) -> all-gather -> dequantize -> / W."""
    W = len(xs)
    shape = xs[0].shape
    X = [x.reshape(shape[0], 1).float() if x.ndim == 1 else x.float() for x in xs]
    m = X[0].shape[0]
    slice_rows = math.ceil(m / W)
    q, s = [], []
    for x in X:
        sc = _row_scale(x.abs().amax(dim=1))
        q.append(fp8_e4m3(x * sc[:, None]))
        s.append(sc)
    out = torch.empty_like(X[0])
    for r in range(m):
        owner = r // slice_rows
        acc = torch.zeros(X[0].shape[1], dtype=torch.float32)
        for j in range(W):
            i = (j + owner) % W
            sc = s[i][r] if s[i][r] != 0 else torch.tensor(1.0)
            acc = acc + q[i][r] / sc
        s2 = _row_scale(acc.abs().max() / 1.0)          # division_factor 1: AVG runs as SUM
        qr = fp8_e4m3(acc * s2 / 1.0)
        out[r] = qr / s2
    return (out / W).reshape(shape)


def fp8_buffer_bytes(shape, W: int) -> int:
    m, n = (shape[0], 1) if len(shape) == 1 else (shape[0], int(torch.tensor(shape[1:]).prod()))
    m_pad = math.ceil(m / W) * W
    return m_pad * (math.ceil(n / 4) + 1) * 4


def ref_streaming_diloco(worker_grads, params0, steps, H, fragments=None, P=None, tau=0, alpha=0.0,
                         outer_lr=0.7, outer_momentum=0.9, nesterov=True, inner="sgd", inner_lr=1e-2,
                         inner_betas=(0.9, 0.95), inner_eps=1e-8, inner_wd=0.0, quantize=None, W=None,
                         param_bytes=4):
    grad_fn = worker_grads if callable(worker_grads) else None
    if grad_fn is None:
        W = len(worker_grads)
    nparam = len(params0)
    if fragments is None:
        P = P or 1
        per = math.ceil(nparam / P)
        fragments = [list(range(f * per, min(nparam, (f + 1) * per))) for f in range(P)]
    P = len(fragments)
    assert H >= P and H % P == 0 and tau < H // P
    S = H // P
    local = [[p.clone().float() for p in params0] for _ in range(W)]
    glob = [p.clone().float() for p in params0]           # original_parameters (identical on all workers)
    mom = [None] * nparam                                   # outer SGD momentum buffers (torch semantics)
    am = [[torch.zeros_like(p) for p in glob] for _ in range(W)]
    av = [[torch.zeros_like(p) for p in glob] for _ in range(W)]
    tcount = [0] * W
    local_step, n_sync = 0, 0
    pending = None                                          # (fragment, averaged pseudo-gradient list)
    ltraj = [[[x.clone() for x in lw] for lw in local]]
    gtraj = [[x.clone() for x in glob]]
    log = []
    for t in range(steps):
        for w in range(W):                                  # inner step
            g = grad_fn(w, t, [x.clone() for x in local[w]]) if grad_fn else worker_grads[w][t]
            tcount[w] += 1
            for i in range(nparam):
                gi = g[i].float()
                if inner == "sgd":
                    local[w][i] = local[w][i] - inner_lr * gi
                else:
                    b1, b2 = inner_betas
                    local[w][i] = local[w][i] * (1 - inner_lr * inner_wd)
                    am[w][i] = b1 * am[w][i] + (1 - b1) * gi
                    av[w][i] = b2 * av[w][i] + (1 - b2) * gi * gi
                    mh, vh = am[w][i] / (1 - b1 ** tcount[w]), av[w][i] / (1 - b2 ** tcount[w])
                    local[w][i] = local[w][i] - inner_lr * mh / (vh.sqrt() + inner_eps)
        row = [dict(payload=0, ring=0.0, fragment=None) for _ in range(W)]
        local_step += 1
        if local_step == S - tau:                           # prepare
            f = n_sync % P
            avg = {}
            for i in fragments[f]:
                deltas = [glob[i] - local[w][i] for w in range(W)]
                if quantize == "fp8":
                    avg[i] = fp8_allreduce_avg(deltas)
                    b = fp8_buffer_bytes(glob[i].shape, W)
                    for w in range(W):
                        row[w]["payload"] += b
                        row[w]["ring"] += 2 * (W - 1) / W * b
                else:
                    avg[i] = sum(deltas) / W
                    for w in range(W):
                        row[w]["payload"] += glob[i].numel() * param_bytes
                        row[w]["ring"] += 2 * (W - 1) / W * glob[i].numel() * param_bytes
            for w in range(W):
                row[w]["fragment"] = f
            pending = (f, avg)
        if local_step == S:                                 # perform
            f, avg = pending
            assert f == n_sync % P
            for i in fragments[f]:
                d = avg[i]
                if outer_momentum != 0:
                    mom[i] = d.clone() if mom[i] is None else outer_momentum * mom[i] + d
                    d = d + outer_momentum * mom[i] if nesterov else mom[i]
                glob[i] = glob[i] - outer_lr * d            # outer step on the restored global
                for w in range(W):
                    loc = local[w][i]                       # includes the tau steps after prepare
                    local[w][i] = glob[i] + alpha * (loc - glob[i])     # lerp(global_new, local, alpha)
            n_sync += 1
            local_step = 0
            pending = None
        ltraj.append([[x.clone() for x in lw] for lw in local])
        gtraj.append([x.clone() for x in glob])
        log.append(row)
    return ltraj, gtraj, log


if __name__ == "__main__":
    torch.manual_seed(0)
    W, T = 2, 12
    shapes = [(4, 3), (5,), (2, 2), (3,)]
    p0 = [torch.randn(s) for s in shapes]
    grads = [[[torch.randn(s) for s in shapes] for _ in range(T)] for _ in range(W)]
    # 1) P=1, tau=0, alpha=0, outer lr 1, no momentum == plain local SGD averaging every H steps
    lt, gt, by = ref_streaming_diloco(grads, p0, T, H=4, P=1, outer_lr=1.0, outer_momentum=0.0, inner_lr=0.1)
    x = [p.clone() for p in p0]
    for r in range(T // 4):
        ws = []
        for w in range(W):
            y = [a.clone() for a in x]
            for t in range(4 * r, 4 * r + 4):
                y = [a - 0.1 * g for a, g in zip(y, grads[w][t])]
            ws.append(y)
        x = [(a + b) / 2 for a, b in zip(*ws)]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(gt[-1], x))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(lt[-1][0], x))
    # 2) schedule: H=8, P=2, tau=1 -> fragment 0 prepared after step 3, synced after 4; fragment 1 after 7/8
    lt, gt, by = ref_streaming_diloco(grads, p0, T, H=8, fragments=[[0, 1], [2, 3]], tau=1)
    prep = [(t + 1, by[t][0]["fragment"]) for t in range(T) if by[t][0]["fragment"] is not None]
    assert prep == [(3, 0), (7, 1), (11, 0)], prep
    assert by[2][0]["payload"] == 4 * (12 + 5)
    # global of fragment 0 changes at step 4 only, fragment 1 at step 8 only
    assert torch.equal(gt[3][0], gt[0][0]) and not torch.equal(gt[4][0], gt[3][0]) and torch.equal(gt[7][0], gt[4][0])
    assert torch.equal(gt[7][2], gt[0][2]) and not torch.equal(gt[8][2], gt[7][2])
    # alpha = 0 -> after the sync every worker's fragment equals the new global
    assert all(torch.equal(lt[4][w][0], gt[4][0]) for w in range(W))
    # alpha = 1 -> locals untouched by the sync
    lt1, gt1, _ = ref_streaming_diloco(grads, p0, 4, H=8, fragments=[[0, 1], [2, 3]], tau=1, alpha=1.0)
    assert torch.allclose(lt1[4][0][0], p0[0] - 1e-2 * sum(grads[0][t][0] for t in range(4)), atol=1e-6)
    # 3) fp8 all-reduce emulation: close to the exact mean, exact for rows with one nonzero max element
    a, b = torch.randn(6, 40), torch.randn(6, 40)
    r = fp8_allreduce_avg([a, b])
    assert (r - (a + b) / 2).abs().max() < 0.1 * (a + b).abs().max()
    assert fp8_buffer_bytes((6, 40), 4) == 8 * (10 + 1) * 4 and fp8_buffer_bytes((5,), 2) == 6 * 8
    lq, gq, bq = ref_streaming_diloco(grads, p0, T, H=8, fragments=[[0, 1], [2, 3]], tau=1, quantize="fp8")
    assert bq[2][0]["payload"] == fp8_buffer_bytes((4, 3), 2) + fp8_buffer_bytes((5,), 2)
    print("ref_streaming_diloco self-check OK")
