"""The strategies' optimizer arithmetic as the kernels frameworks run it (lionsim.compute.kernel_ops.Step):
`fused` (one kernel: every input read once, every output written once) and the op chain that torch's
foreach and for-loop paths run, counted op by op per parameter (float32: 4 bytes a value; a read of
every distinct input, a write of every output). `estimate --optimizer` picks the form; every strategy
names the steps its rule and update run in its Strategy.bytes. lionsim.perf.bytecount counts the same
chains on the code itself (tests/optim/test_optimizer_steps.py).

The torch chains are torch.optim's own (_single_tensor_* and _multi_tensor_*, torch 2.13; the
foreach path runs the same ops over lists of tensors, so it moves the same bytes). The Lion-family
chains are lionsim.optim.functional's, the eager code the strategies run (lion-pytorch's update_fn
runs the same ops plus a clone of the momentum: 76 bytes in 8 ops for Lion).
"""

from __future__ import annotations

from lionsim.compute.kernel_ops import Step

F = 4.0
"""Bytes of a float32 value."""

ADAMW = Step(
    "AdamW", fused=4 * F + 3 * F, chain=80.0, ops=8,
    # for-loop and foreach (torch.optim.AdamW): p *= 1 - lr wd (read 4, write 4); m.lerp_(g) (8, 4);
    # v *= b2 (4, 4); v.addcmul_(g, g) (8, 4); sqrt(v) (4, 4); / sqrt(bias2) (4, 4); + eps (4, 4);
    # p.addcdiv_(m, denom) (12, 4): 80 bytes, 8 ops. Fused: reads p, g, m, v; writes p, m, v.
    source="torch.optim.AdamW (_single_tensor_adam, _multi_tensor_adam, _fused_adamw_)")
SGD_MOMENTUM = Step(
    "SGD momentum", fused=3 * F + 2 * F, chain=32.0, ops=3,
    # torch.optim.SGD(momentum, weight_decay=0): buf *= mu (4, 4); buf += g (8, 4); p -= lr buf (8, 4).
    # Fused: reads p, g, buf; writes p, buf. (An L2 weight decay adds g + wd p: 12 bytes, 1 op.)
    source="torch.optim.SGD (_single_tensor_sgd, _multi_tensor_sgd, _fused_sgd_)", depth=3)
SGD_NESTEROV = Step(
    "outer SGD Nesterov", fused=3 * F + 2 * F, chain=44.0, ops=4,
    # lionsim.optim.functional.nesterov_update_ (torch.optim.SGD(nesterov=True)): buf *= mu (4, 4);
    # buf += g (8, 4); g + mu buf (8, 4); p -= lr that (8, 4). The outer gradient is the workers' mean delta.
    source="lionsim.optim.functional.nesterov_update_ (as torch.optim.SGD(nesterov=True))", depth=3)
LION = Step(
    "Lion", fused=3 * F + 2 * F, chain=68.0, ops=7,
    # p *= 1 - lr wd (4, 4); c = m * b1 (4, 4); c += (1 - b1) g (8, 4); sign_(c) (4, 4); p -= lr c (8, 4);
    # m *= b2 (4, 4); m += (1 - b2) g (8, 4). Fused: reads p, g, m; writes p, m.
    source="lionsim.optim.functional.lion_update_", depth=3)
LION_VOTE = Step(
    "Lion vote", fused=2 * F + F + 1, chain=53.0, ops=6,
    # Distributed Lion's rule: c = m * b1 (4, 4); c += (1 - b1) g (8, 4); sign(c) (4, 4); to int8 (4, 1);
    # m *= b2 (4, 4); m += (1 - b2) g (8, 4). Fused: reads g, m; writes m and the int8 vote.
    source="lionsim.optim.functional: lion_interpolation, sign_votes, decay_momentum_", depth=3)
MOMENTUM_VOTE = Step(
    "momentum vote", fused=2 * F + F + 1, chain=33.0, ops=4,
    # signum's rule: m *= b (4, 4); m += (1 - b) g (8, 4); sign(m) (4, 4); to int8 (4, 1).
    source="lionsim.optim.functional: decay_momentum_, sign_votes", depth=3)
SIGN_VOTE = Step(
    "sign vote", fused=F + 1, chain=13.0, ops=2,
    # signSGD's rule: sign(g) (4, 4); to int8 (4, 1). Fused: reads g, writes the int8 vote.
    source="lionsim.optim.functional.sign_votes", depth=2)
SIGN_APPLY = Step(
    "signed update", fused=2 * F + F, chain=20.0, ops=2,
    # apply_update_: p *= 1 - lr wd (4, 4); p -= lr u (8, 4), u the decoded float32 aggregate. Fused:
    # reads p and u, writes p.
    source="lionsim.optim.functional.apply_update_", depth=2)
SIGN_OF_APPLY = Step(
    "sign of the aggregate, applied", fused=2 * F + F, chain=28.0, ops=3,
    # Lion Cub's update: sign(S) (4, 4), then apply_update_ (20 bytes, 2 ops).
    source="lionsim.strategies.lioncub (torch.sign, apply_update_)", depth=2)
DELTA_APPLY = Step(
    "delta applied", fused=2 * F + F, chain=20.0, ops=2,
    # EF-signSGD's update: p *= 1 - lr wd (4, 4); p -= delta (8, 4).
    source="lionsim.strategies.ef_signsgd", depth=2)
SGD_APPLY = Step(
    "SGD step", fused=2 * F + F, chain=12.0, ops=1,
    # DGC's update without momentum (its momentum is corrected in the rule): p -= lr g (8, 4).
    source="lionsim.strategies.dgc", depth=2)
MOMENTUM = Step(
    "momentum", fused=2 * F + F, chain=20.0, ops=2,
    # 1-bit Adam's rule after its warm-up (DeepSpeed's OnebitAdam.step): m *= b1 (4, 4); m += (1 - b1) g
    # (8, 4). Fused: reads g, m; writes m.
    source="DeepSpeed OnebitAdam.step (deepspeed/runtime/fp16/onebit/adam.py)", depth=2)
ONEBIT_ADAM_APPLY = Step(
    "1-bit Adam update", fused=3 * F + F, chain=52.0, ops=5,
    # after the compressed all-reduce wrote the mean momentum m: sqrt(v) (4, 4); + eps (4, 4); m / that
    # (8, 4); + wd p (8, 4); p -= lr update (8, 4). Fused: reads p, m, v (v frozen); writes p.
    source="DeepSpeed OnebitAdam.step (deepspeed/runtime/fp16/onebit/adam.py)", depth=3)
INNER_STEPS: dict[str, Step] = {}
"""--inner-optimizer -> its step (lionsim.strategies.core.options.INNER_OPTIMIZERS); filled below."""

MUON = Step(
    "Muon momentum and update", fused=4 * F + 2 * F + 3 * F, chain=100.0, ops=24,
    # Keller Jordan's Muon (eager), around Newton-Schulz (whose products are FLOPs: Strategy.update_flops):
    # buf.lerp_(g) (8, 4); g.lerp(buf) for Nesterov (8, 4); to bfloat16 (4, 2); / its norm (read 2 twice,
    # write 2); five iterations' elementwise a X + B X and b A + c A A outputs (about 8 bytes of bf16 an
    # iteration per parameter: 40); back to float32 (2, 4); p *= 1 - lr wd (4, 4); p -= lr O (8, 4): about
    # 100 bytes in 24 ops. Fused: reads g, buf, writes buf and U; reads p, O, writes p.
    source="Muon (github.com/KellerJordan/Muon, muon.py), counted by hand", depth=3)

INNER_STEPS.update(adamw=ADAMW, lion=LION, sgd=SGD_MOMENTUM)
