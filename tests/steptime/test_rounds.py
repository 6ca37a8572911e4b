"""Uneven workers under local steps (lionsim.steptime.rounds): a step that exchanges nothing waits
for no one, the sync waits for the round's drift. Against a brute-force Monte Carlo (every worker's
factor at every step drawn, summed over the round, the maximum taken) and exact enumerations."""

import math

import numpy as np
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.estimate import EstimateConfig, estimate
from lionsim.steptime.rounds import round_distribution
from lionsim.steptime.spread import ComputeSpread
from lionsim.steptime.stragglers import max_distribution


def round_lead(dist) -> float:
    """What the priced round waits for, in compute factors: E[x] - m = E[max_i S_i] - H m."""
    return dist.mean() - dist.median


def brute(draw, rounds: int, workers: int, steps: int, median: float) -> tuple[float, float]:
    """(mean, standard error) of max_i sum_t f_it - H m over `rounds` rounds of plain draws."""
    leads = np.array([draw((workers, steps)).sum(1).max() - steps * median for _ in range(rounds)])
    return leads.mean(), leads.std() / math.sqrt(rounds)


@pytest.mark.parametrize("workers,steps", [(16, 1), (16, 20), (64, 100)])
def test_lognormal_round_against_brute_force(workers, steps):
    spread = ComputeSpread.parse(["lognormal:0.3"])
    rng = np.random.default_rng(11)
    mean, se = brute(lambda shape: np.exp(0.3 * rng.standard_normal(shape)), 1500, workers, steps, 1.0)
    priced = round_lead(round_distribution(spread, workers, steps))
    assert abs(priced - mean) < 4 * se + 2e-3 * mean
    if steps == 1:  # today's per-step wait: the slowest of N over the median
        step = max_distribution(spread, workers)
        assert priced == step.mean() - step.median


def test_jitter_averages_out_over_a_round():
    """The wait per step falls with H toward the jitter's own mean excess, E[f] - 1."""
    spread = ComputeSpread.parse(["lognormal:0.3"])
    per_step = [round_lead(round_distribution(spread, 64, h)) / h for h in (1, 10, 100, 300)]
    assert per_step == sorted(per_step, reverse=True)
    assert per_step[0] > 10 * (per_step[-1] - (math.exp(0.3 ** 2 / 2) - 1))


@pytest.mark.parametrize("specs", [["slow:2:1.5"], ["slow:2:1.5", "lognormal:0.2"]])
def test_slow_workers_round_against_brute_force(specs):
    """A slow worker's lead persists: H (FACTOR - 1) a round, the same per step as at H = 1."""
    workers, steps = 8, 10
    spread = ComputeSpread.parse(specs, seed=4)
    fixed = ComputeSpread.parse(specs[:1], seed=4).factors(1, workers)  # its slow workers
    sigma = 0.2 if len(specs) == 2 else 0.0
    rng = np.random.default_rng(5)
    mean, se = brute(lambda shape: fixed[:, None] * np.exp(sigma * rng.standard_normal(shape)), 3000, workers, steps,
                     max_distribution(spread, workers).median)
    dist = round_distribution(spread, workers, steps)
    assert abs(round_lead(dist) - mean) < 4 * se + 1e-9
    if len(specs) == 1:
        assert dist.method == "exact" and round_lead(dist) == pytest.approx(steps * 0.5, rel=1e-12)


def test_episodes_round_against_a_long_chain():
    """Exact (the chain walked H steps from its steady state) against rounds of spread.factors."""
    workers, steps, rounds = 8, 10, 2000
    spread = ComputeSpread.parse(["episodes:0.05:3:6"], seed=2)
    burn = 50
    factors = np.array([spread.factors(t, workers) for t in range(1, burn + rounds * steps + 1)])[burn:]
    leads = factors.reshape(rounds, steps, workers).sum(1).max(1) - steps * 1.0
    dist = round_distribution(ComputeSpread.parse(["episodes:0.05:3:6"], seed=2), workers, steps)
    assert dist.method == "exact" and dist.median == 1.0
    # rounds of one chain are correlated a little: a wider band than independent draws'
    assert abs(round_lead(dist) - leads.mean()) < 6 * leads.std() / math.sqrt(rounds)


def test_trace_round_is_every_round_of_its_cycle(tmp_path):
    table = np.random.default_rng(3).uniform(0.5, 2.0, (7, 3))
    trace = tmp_path / "t.csv"
    rows = "".join(f"{s},{w},{table[s, w]}\n" for s in range(7) for w in range(3))
    trace.write_text("step,worker,compute_s\n" + rows)
    spread = ComputeSpread.parse([f"trace:{trace}"])
    factors = table / np.median(table)
    for steps in (3, 7, 10):
        rounds = 7 // math.gcd(7, steps)
        maxima = [sum(factors[t % 7] for t in range(k * steps, (k + 1) * steps)).max() for k in range(rounds)]
        dist = round_distribution(spread, 3, steps)
        assert dist.method == "exact"
        assert dist.mean() + (steps - 1) * dist.median == pytest.approx(np.mean(maxima), rel=1e-12)


def test_estimate_local_steps_wait_once_a_round():
    """diloco at H = 100 under 30% jitter waits a fraction of adamw's per-step wait, and its row's wait
    is the brute-force round's over H (DiLoCo's exchange runs after backward: the wait is compute)."""
    rows = estimate(EstimateConfig(model="gpt2-124m", workers=64, network="dgx-h100", compute_spread=["lognormal:0.3"],
                                   strategies=["adamw@bf16-allreduce", "diloco"], options={"local_steps": 100},
                                   steps=1000))
    adamw, diloco = rows.iloc[0], rows.iloc[1]
    assert diloco["local_steps"] == 100 and diloco["wait_s"] < adamw["wait_s"] / 5
    rng = np.random.default_rng(8)
    mean, se = brute(lambda shape: np.exp(0.3 * rng.standard_normal(shape)), 1000, 64, 100, 1.0)
    assert diloco["wait_s"] * 100 / diloco["compute_s"] == pytest.approx(mean, abs=4 * se + 2e-3 * mean)
    assert diloco["compute_s"] == adamw["compute_s"]
    assert diloco["step_p50_s"] <= diloco["step_s"] < diloco["step_p99_s"] < adamw["step_p50_s"]
    assert diloco["run_s"] == pytest.approx(1000 * diloco["step_s"], rel=1e-9)  # 10 whole rounds


def test_estimate_local_steps_slowest_is_the_rounds_slowest_per_step():
    """A local-step row's compute_max_s (the table's `slowest`) is the round's slowest worker per
    step, E[max_i S_i] / H x the median's compute, so slowest - compute is its wait (DiLoCo's exchange
    runs after backward), as at H = 1: against the brute-force round (jitter) and the closed form of a
    slow worker (S = H x FACTOR), never one step's slowest (about 2x the median of 64 at 30% jitter)."""
    def row(spec: str):
        frame = estimate(EstimateConfig(model="gpt2-124m", workers=64, network="dgx-h100", compute_spread=[spec],
                                        strategies=["diloco"], options={"local_steps": 100}))
        return frame.iloc[0]

    jitter = row("lognormal:0.3")
    rng = np.random.default_rng(9)
    mean, se = brute(lambda shape: np.exp(0.3 * rng.standard_normal(shape)), 1000, 64, 100, 1.0)  # E[max S] - H
    assert jitter["compute_max_s"] / jitter["compute_s"] == pytest.approx(1 + mean / 100, abs=(4 * se + 2e-3 * mean) / 100)
    assert jitter["compute_max_s"] - jitter["compute_s"] == pytest.approx(jitter["wait_s"], rel=1e-9)
    step = max_distribution(ComputeSpread.parse(["lognormal:0.3"]), 64).mean()
    assert jitter["compute_max_s"] < 0.6 * step * jitter["compute_s"]  # not one step's slowest
    slow = row("slow:1:1.5")
    assert slow["compute_max_s"] == pytest.approx(1.5 * slow["compute_s"], rel=1e-12)
    assert slow["wait_s"] == pytest.approx(0.5 * slow["compute_s"], rel=1e-9)


def test_bench_books_the_round_wait_on_the_sync_step():
    """A local step's row waits for nothing; the sync's carries the round's drift: with slow:1:3 and
    H = 3 the slow worker is 3 x 3 - 3 = 6 steps of compute behind at the sync."""
    cfg = dict(workload="mlp", workers=4, steps=6, eval_every=100, strategies=["diloco"], options={"local_steps": 3})
    even = run_bench(BenchConfig(**cfg)).steps
    slow = run_bench(BenchConfig(**cfg, compute_spread=["slow:1:3"])).steps
    local, sync = slow["wire_bytes"] == 0, slow["wire_bytes"] > 0
    assert local.sum() == 4 and sync.sum() == 2
    assert (slow.loc[local, "wait_s"] == 0).all()
    assert np.allclose(slow.loc[sync, "wait_s"], 6 * even.loc[sync, "compute_s"], rtol=1e-9)
    assert np.allclose(slow["step_s"], even["step_s"] + slow["wait_s"], rtol=1e-9)
    # a local step's slowest is its median's; the sync's is the slow worker's 3 + 2 x 2 lead: 9 a round, 3 x 3
    assert np.allclose(slow.loc[local, "compute_max_s"], even.loc[local, "compute_s"], rtol=1e-12)
    assert np.allclose(slow.loc[sync, "compute_max_s"], 7 * even.loc[sync, "compute_s"], rtol=1e-12)


def test_bench_books_the_rounds_slowest_as_estimate_does_against_brute_force(tmp_path):
    """bench's compute_max_s means estimate's: a round's rows add up to its slowest worker's compute,
    max_i of worker i's factors summed over the round's H steps (computed here from a trace's per-worker
    times), so the summary's mean is that over H, and every row's wait_s is compute_max_s - compute_s
    (DiLoCo's exchange runs after backward). It was each local step's own slowest, which no one waits for."""
    workers, h, rounds = 5, 3, 4
    times = np.random.default_rng(21).uniform(0.5, 3.0, (7, workers))  # 7 traced steps: rounds differ
    trace = tmp_path / "t.csv"
    trace.write_text("step,worker,compute_s\n" + "".join(f"{s},{w},{times[s, w]}\n" for s in range(7)
                                                         for w in range(workers)))
    cfg = dict(workload="mlp", workers=workers, steps=h * rounds, eval_every=100, strategies=["diloco"],
               options={"local_steps": h})
    compute = float(run_bench(BenchConfig(**cfg)).steps["compute_s"].iloc[0])  # one worker's, at factor 1
    result = run_bench(BenchConfig(**cfg, compute_spread=[f"trace:{trace}"]))
    steps = result.steps
    factors = np.array([times[(t - 1) % 7] for t in range(1, h * rounds + 1)]) / np.median(times)  # [step, worker]
    slowest = factors.reshape(rounds, h, workers).sum(1).max(1)  # each round's slowest worker's sum
    booked = steps["compute_max_s"].to_numpy().reshape(rounds, h).sum(1)
    assert np.allclose(booked, compute * slowest, rtol=1e-9)
    assert np.allclose(steps["compute_s"], compute * np.median(factors, 1), rtol=1e-9)
    assert np.allclose(steps["wait_s"], steps["compute_max_s"] - steps["compute_s"], rtol=1e-9, atol=1e-15)
    summary = result.summary.iloc[0]
    assert summary["compute_max_s"] == pytest.approx(compute * slowest.mean() / h, rel=1e-9)


def test_streaming_diloco_rounds_are_its_real_gaps_where_p_does_not_divide_h():
    """A persistent slow worker leads by (FACTOR - 1) a step whatever the gaps, so every H waits the same
    per step; with P = 2 fragments, H = 5 sends after gaps of 2 and 3 steps (it was priced as two
    gaps of 2: 1.76 against 2.21 ms), and a jitter's wait falls between H = 4's and H = 6's."""
    from fractions import Fraction

    from lionsim.steptime.rounds import sync_distribution

    def wait(h: int, spec: str) -> float:
        frame = estimate(EstimateConfig(model="gpt2-124m", workers=8, network="10gbe", strategies=["streaming-diloco"],
                                        compute_spread=[spec], options={"local_steps": h, "streaming_fragments": 2}))
        return float(frame["wait_s"].iloc[0])

    slow = [wait(h, "slow:1:1.5") for h in (4, 5, 6)]
    assert slow[1] == pytest.approx(slow[0], rel=1e-9) and slow[2] == pytest.approx(slow[0], rel=1e-9)
    jitter = [wait(h, "lognormal:0.3") for h in (4, 5, 6)]
    assert jitter[0] > jitter[1] > jitter[2]  # per step, jitter averages out over longer gaps
    # the mixture: gaps of 2 and 3 steps, one each in 5, its lead their rounds' leads over 5 steps
    spread = ComputeSpread.parse(["lognormal:0.3"])
    mixed = sync_distribution(spread, 8, Fraction(2, 5))
    two, three = round_distribution(spread, 8, 2), round_distribution(spread, 8, 3)
    assert round_lead(mixed) == pytest.approx((round_lead(two) + round_lead(three)) / 2, rel=1e-12)
