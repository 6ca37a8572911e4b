"""powersgd against PyTorch's own PowerSGD: DDP with torch.distributed.algorithms.ddp_comm_hooks.
powerSGD_hook on a 2-rank gloo group, against lionsim's strategy from the same state and batches
(on the simulator, and over the same gloo group), to float tolerance; plus the bytes it prices
and its Gram-Schmidt against QR."""

import math

import pytest
import torch
import torch.nn.functional as F

RANKS, STEPS, WARMUP, SEED, LR = 2, 6, 2, 7, 0.1
RANKS_TO_TRY = (1, 2, 4)  # 1 and 2: torch's hook orthogonalizes by Gram-Schmidt; 4: by QR


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh(), torch.nn.Linear(32, 24), torch.nn.Tanh(),
                               torch.nn.Linear(24, 3))


def batch(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(8, 12, generator=g), torch.randint(0, 3, (8,), generator=g)


def initial_qs(model: torch.nn.Module, rank: int) -> dict[int, torch.Tensor]:
    """Q0 for each tensor torch compresses (its own _should_compress rule, min_compression_rate 2),
    drawn as lionsim draws them: randn(m, r) per compressed tensor in parameter order."""
    from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import _should_compress

    draws, out = torch.Generator().manual_seed(SEED), {}
    for i, p in enumerate(model.parameters()):
        n, m = p.shape[0], p.numel() // p.shape[0]
        r = min(n, m, rank)
        if _should_compress(n, m, r, 2)[0]:
            out[i] = torch.randn(m, r, generator=draws)
    return out


def torch_powersgd(rank: int, matrix_rank: int) -> torch.Tensor:
    """DDP + powerSGD_hook + torch.optim.SGD on this rank's batches; the final parameters."""
    from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import PowerSGDState, powerSGD_hook

    model = make_model()
    params = list(model.parameters())
    qs = initial_qs(model, matrix_rank)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    state = PowerSGDState(process_group=None, matrix_approximation_rank=matrix_rank, start_powerSGD_iter=WARMUP,
                          min_compression_rate=2, use_error_feedback=True, warm_start=True,
                          orthogonalization_epsilon=1e-8, random_seed=0)

    def hook(state, bucket):
        # the first compressed step: start from lionsim's Q0, laid out as the hook lays out its Qs
        # (the bucket's compressed tensors grouped by shape, in order of first appearance)
        if state.iter >= state.start_powerSGD_iter and bucket.index() not in state.q_memory_dict:
            groups: dict[tuple, list[torch.Tensor]] = {}
            for p in bucket.parameters():
                i = next(j for j, q in enumerate(params) if q is p)
                if i in qs:
                    groups.setdefault((p.shape[0], p.numel() // p.shape[0]), []).append(qs[i])
            ordered = [q for group in groups.values() for q in group]
            state.q_memory_dict[bucket.index()] = torch.cat([q.reshape(-1) for q in ordered])
            state.p_memory_dict[bucket.index()] = torch.empty(sum(n * q.shape[1] for (n, _), g in groups.items() for q in g))
        return powerSGD_hook(state, bucket)

    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR, momentum=0.9)
    for step in range(STEPS):
        x, y = batch(rank, step)
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def lionsim_powersgd(comm, rows: range, matrix_rank: int, warmup: int = WARMUP) -> torch.Tensor:
    """lionsim's powersgd (inner optimizer: SGD momentum 0.9) with workers `rows` on `comm`."""
    from lionsim.engine import train_step
    from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
    from lionsim.timing import Clock
    from lionsim.transports import TRANSPORTS

    model = make_model()
    params, layout = flatten_parameters(model)
    cfg = StrategyConfig(lr=LR, weight_decay=0.0, betas=(0.9, 0.0), seed=SEED, options={
                             "inner_optimizer": "sgd", "powersgd_rank": matrix_rank, "powersgd_warmup_steps": warmup})
    strategy = STRATEGIES.get("powersgd")(cfg, layout, comm)
    grads = torch.zeros(len(rows), layout.numel)
    for step in range(STEPS):
        for row, rank in enumerate(rows):
            model.zero_grad()
            F.cross_entropy(model(batch(rank, step)[0]), batch(rank, step)[1]).backward()
            gather_grads(model, grads[row])
        train_step(strategy, TRANSPORTS.get("lowrank-allreduce")(), comm, grads, params, step + 1, Clock())
    return params.clone()


def rank_main(rank: int):
    from lionsim.backends import ProcessGroupComm

    results = {}
    for r in RANKS_TO_TRY:
        results[("torch", r)] = torch_powersgd(rank, r)
        results[("lionsim", r)] = lionsim_powersgd(ProcessGroupComm(align=False), range(rank, rank + 1), r)
    return results


@pytest.fixture(scope="session")
def ranks(gloo_group):
    return gloo_group(RANKS).run(rank_main)


@pytest.mark.parametrize("matrix_rank", RANKS_TO_TRY)
def test_powersgd_equals_torchs_powersgd_hook_under_ddp(ranks, matrix_rank):
    from lionsim.backends import SimComm

    initial = torch.cat([p.detach().reshape(-1) for p in make_model().parameters()])
    reference = ranks[0][("torch", matrix_rank)]
    assert torch.equal(reference, ranks[1][("torch", matrix_rank)])  # DDP keeps its replicas identical
    assert not torch.allclose(reference, initial)
    simulated = lionsim_powersgd(SimComm(RANKS), range(RANKS), matrix_rank)
    torch.testing.assert_close(simulated, reference, rtol=1e-5, atol=1e-5)
    uncompressed = lionsim_powersgd(SimComm(RANKS), range(RANKS), matrix_rank, warmup=STEPS)
    assert (uncompressed - reference).abs().max() > 1e-3  # the compression shows, far above the tolerance
    for rank in range(RANKS):  # lionsim over the same gloo group
        torch.testing.assert_close(ranks[rank][("lionsim", matrix_rank)], simulated, rtol=1e-5, atol=1e-6)


def test_compression_plan_and_bytes_follow_torchs_rule():
    """(n + m) r floats per compressed matrix in two all-reduces (P: n r, Q: m r), the rest whole."""
    from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import _should_compress

    from lionsim.backends import SimComm
    from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters
    from lionsim.transports import TRANSPORTS

    model = make_model()
    _, layout = flatten_parameters(model)
    strategy = STRATEGIES.get("powersgd")(StrategyConfig(options={"powersgd.rank": 2}), layout, SimComm(4))
    p_floats = q_floats = rest = 0
    for p in model.parameters():
        n, m = p.shape[0], p.numel() // p.shape[0]
        r = min(n, m, 2)
        if _should_compress(n, m, r, 2)[0]:
            p_floats, q_floats = p_floats + n * r, q_floats + m * r
        else:
            rest += p.numel()
    assert (p_floats, q_floats, rest) == (32 * 2 + 24 * 2, 12 * 2 + 32 * 2, 32 + 24 + 3 * 24 + 3)
    spec = strategy.payload_spec()
    calls = TRANSPORTS.get("lowrank-allreduce")().plan(spec, 4)
    assert [(c.op, c.nbytes) for c in calls] == [("all_reduce", 4 * rest), ("all_reduce", 4 * p_floats),
                                                 ("all_reduce", 4 * q_floats)]
    up, down = TRANSPORTS.get("lowrank-allreduce")().bits_per_param(spec, 4)
    assert up == down == pytest.approx(32 * (rest + p_floats + q_floats) / layout.numel)


def test_gram_schmidt_gives_qrs_orthonormal_basis():
    """Orthonormal columns spanning what QR's Q spans, column by column up to sign."""
    from lionsim.transports.lowrank_allreduce import orthogonalize_

    m = torch.randn(3, 20, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    q, _ = torch.linalg.qr(m)
    got = orthogonalize_(m.clone(), epsilon=0.0)
    torch.testing.assert_close(got.transpose(1, 2) @ got, torch.eye(4, dtype=torch.float64).expand(3, 4, 4))
    torch.testing.assert_close((got * q).sum(1).abs(), torch.ones(3, 4, dtype=torch.float64))
    zero = orthogonalize_(torch.zeros(1, 5, 2))  # a zero column stays zero (epsilon), never NaN
    assert torch.equal(zero, torch.zeros(1, 5, 2))
    assert math.isfinite(float(zero.sum()))
