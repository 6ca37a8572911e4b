"""Uneven workers (--compute-spread): the specs, the step that waits for the slowest worker,
the slowest of N's distribution, in bench and estimate, against closed forms and plain loops."""

import math

import numpy as np
import pandas as pd
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.network import Link, Network
from lionsim.steptime import OverlapConfig, StepWork
from lionsim.steptime.overlap import Buckets, serial_end
from lionsim.steptime.spread import ComputeSpread, parse_spec
from lionsim.steptime.stragglers import expected_times, max_distribution, max_of, step_seconds, uneven_times
from lionsim.steptime.timeline import price_step
from lionsim.transports import TRANSPORTS, PayloadSpec
from tests.helpers.cli import one_line_exit_2

NET = Network(name="slow", inter=Link.from_units(alpha_us=50.0, bandwidth_GBps=0.1))
FP32 = TRANSPORTS.get("fp32-allreduce")()


def bench(tmp_path=None, **kw) -> pd.DataFrame:
    cfg = BenchConfig(**{"workload": "mlp", "workers": 4, "steps": 6, "strategies": ["dlion-mavo"], "eval_every": 100,
                         **kw})
    return run_bench(cfg).steps


# --- closed forms ------------------------------------------------------------------------

def test_one_slow_worker_and_no_comm_triples_compute():
    """slow:1:3 on a lone worker (nothing to send): compute per step is 3x, the step grows by 2x compute."""
    even, slow = bench(workers=1), bench(workers=1, compute_spread=["slow:1:3"])
    assert np.allclose(slow["compute_s"], 3 * even["compute_s"], rtol=1e-12)
    assert np.allclose(slow["step_s"] - even["step_s"], 2 * even["compute_s"], rtol=1e-9)
    assert (slow["wait_s"] == 0).all() and (slow["comm_s"] == 0).all()


def test_one_slow_worker_of_four_sets_the_pace():
    """The median worker computes as before; it waits for the slow one (without overlap: 2x compute)."""
    even = bench(workers=4)
    slow = bench(workers=4, compute_spread=["slow:1:3"])
    assert np.allclose(slow["compute_median_s"], even["compute_s"]) and np.allclose(slow["compute_max_s"], 3 * even["compute_s"])
    # int8-allreduce runs per bucket during backward; the model fits one bucket, ready when backward ends
    assert np.allclose(slow["wait_s"], 2 * even["compute_s"], rtol=1e-9)
    assert np.allclose(slow["step_s"], even["step_s"] + 2 * even["compute_s"], rtol=1e-9)


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 64, 1024, 10**6])
def test_expected_maximum_of_n_exponentials_is_the_harmonic_number(workers):
    values, weights = max_of(lambda q: -np.log(q), workers)
    harmonic = sum(1 / k for k in range(1, workers + 1)) if workers < 10**5 else np.log(workers) + np.euler_gamma + 1 / (2 * workers)
    assert weights @ values == pytest.approx(harmonic, rel=1e-9)


@pytest.mark.parametrize("workers", [1, 8, 256])
def test_lognormal_maximum_exact_against_monte_carlo(workers):
    exact = max_distribution(ComputeSpread.parse(["lognormal:0.4"]), workers)
    assert exact.method == "exact"
    assert exact.quantile(0.5) == pytest.approx(math.exp(0.4 * _ndtri(0.5 ** (1 / workers))), rel=1e-9)
    draws = np.exp(0.4 * np.random.default_rng(0).standard_normal((40000, workers))).max(1)
    assert exact.mean() == pytest.approx(draws.mean(), rel=3e-3)
    assert exact.quantile(0.99) == pytest.approx(np.quantile(draws, 0.99), rel=2e-2)
    if workers == 1:
        assert exact.mean() == pytest.approx(math.exp(0.4 ** 2 / 2), rel=1e-9)  # the lognormal's mean


def _ndtri(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def test_episodes_steady_state_matches_a_long_chain():
    spread = ComputeSpread.parse(["episodes:0.05:4:6"], seed=3)
    factors = np.array([spread.factors(step, 50) for step in range(1, 2001)])
    in_episode = (factors == 4).mean()
    q = spread.specs[0].stationary()
    assert q == pytest.approx(6 * 0.05 / (6 * 0.05 + 0.95))
    assert in_episode == pytest.approx(q, rel=0.05)
    dist = max_distribution(spread, 50)
    assert dist.mean() == pytest.approx(1 + 3 * (1 - (1 - q) ** 50))
    assert (factors.max(1) == 4).mean() == pytest.approx(1 - (1 - q) ** 50, abs=0.02)


def test_an_episode_lasts_its_steps():
    spread = ComputeSpread.parse(["episodes:1:2:3"])  # every worker starts one at once, again after it ends
    assert [float(spread.factors(t, 1)[0]) for t in range(1, 8)] == [2.0] * 7
    chain = ComputeSpread.parse(["episodes:0.3:2:3"], seed=1)
    run = [chain.factors(t, 20).copy() for t in range(1, 40)]
    lengths = []
    for w in range(20):
        flags = "".join("1" if run[t][w] == 2 else "0" for t in range(len(run)))
        runs = [r for r in flags.split("0") if r]
        lengths += runs[:-1] if flags.endswith("1") else runs  # the last may be cut short by the end
    assert lengths and all(len(n) % 3 == 0 for n in lengths)  # back-to-back episodes of 3 steps


def test_trace_replays_exactly_and_repeats(tmp_path):
    trace = tmp_path / "t.csv"
    times = np.array([[1.0, 2.0, 4.0], [3.0, 1.0, 1.0]])  # 2 steps x 3 workers; median 1.5
    trace.write_text("worker,step,compute_s\n" + "".join(f"{w},{s + 10},{times[s, w]}\n" for s in range(2) for w in range(3)))
    spread = ComputeSpread.parse([f"trace:{trace}"])
    for step in range(1, 6):
        assert np.array_equal(spread.factors(step, 3), times[(step - 1) % 2] / 1.5)
    base = bench(workers=3, steps=5, compute_spread=[])
    steps = bench(workers=3, steps=5, compute_spread=[f"trace:{trace}"])
    for i in range(5):
        row = times[i % 2] / 1.5
        assert steps["compute_median_s"][i] == pytest.approx(base["compute_s"][i] * np.median(row), rel=1e-12)
        assert steps["compute_max_s"][i] == pytest.approx(base["compute_s"][i] * row.max(), rel=1e-12)


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    spec = ["lognormal:0.3", "episodes:0.1:2:3", "slow:1:1.5"]
    a, b = bench(compute_spread=spec, seed=1), bench(compute_spread=spec, seed=1)
    assert a["step_s"].tolist() == b["step_s"].tolist() and a["wait_s"].tolist() == b["wait_s"].tolist()
    c = bench(compute_spread=spec, seed=2)
    assert a["compute_max_s"].tolist() != c["compute_max_s"].tolist()
    spread = ComputeSpread.parse(spec, seed=1)
    later = spread.factors(5, 4).copy()
    assert np.array_equal(ComputeSpread.parse(spec, seed=1).factors(5, 4), later)  # without steps 1-4 first


# --- the step waits for the slowest: against a plain per-worker loop ---------------------------

def per_worker_end(work: StepWork, factors, bucket_sizes, bucket_cost, numel) -> float:
    """Each worker's buckets ready as its own backward produces them; an exchange starts when every
    worker's is ready and the stream is free; the step ends after decode and update."""
    ready, done = [], 0
    for size in bucket_sizes:
        done += size
        ready.append(max(f * work.forward_s + (f * work.backward_s + work.encode_s) * done / numel for f in factors))
    return serial_end(ready, [bucket_cost[i] for i in range(len(bucket_sizes))]) + work.decode_s + work.update_s


@pytest.mark.parametrize("factors", [[1.0, 1.0], [1.0, 3.0], [0.5, 1.2, 2.0, 0.9], [4.0]])
def test_uneven_step_equals_a_plain_per_worker_timeline(factors):
    numel, bucket = 10_000, 3_000
    work = StepWork(forward_s=1e-3, backward_s=2e-3, encode_s=1e-4, decode_s=2e-4, update_s=3e-4)
    priced = price_step(transport=FP32, spec=PayloadSpec(kind="dense", numel=numel), workers=2, network=NET,
                        overlap=OverlapConfig(bucket_mb=bucket * 4 / 1e6))
    sizes = Buckets.of(numel, bucket).sizes()
    costs = [priced.first_cost_s] + [priced.bucket_cost_s] * (len(sizes) - 1)
    f = np.array(factors)
    t = uneven_times(priced, work, f)
    assert t.step_s == pytest.approx(per_worker_end(work, f, sizes, costs, numel), rel=1e-12)
    median = float(np.median(f))
    assert t.step_s - t.wait_s == pytest.approx(per_worker_end(work, [median], sizes, costs, numel), rel=1e-12)
    assert step_seconds(priced, work, f.max()) == pytest.approx(t.step_s, rel=1e-12)


def test_expected_step_against_monte_carlo():
    work = StepWork(forward_s=1e-3, backward_s=2e-3, encode_s=1e-4)
    priced = price_step(transport=FP32, spec=PayloadSpec(kind="dense", numel=10_000), workers=2, network=NET,
                        overlap=OverlapConfig(bucket_mb=0.012))
    dist = max_distribution(ComputeSpread.parse(["lognormal:0.5"]), 32)
    times, p50, p99 = expected_times(priced, work, dist)
    draws = np.exp(0.5 * np.random.default_rng(1).standard_normal((20000, 32))).max(1)
    ends = step_seconds(priced, work, draws)
    assert times.step_s == pytest.approx(ends.mean(), rel=3e-3)
    assert (p50, p99) == (pytest.approx(np.quantile(ends, 0.5), rel=5e-3), pytest.approx(np.quantile(ends, 0.99), rel=2e-2))


def test_several_specs_are_a_seeded_monte_carlo():
    spread = ComputeSpread.parse(["lognormal:0.2", "slow:2:3"], seed=7)
    a, b = max_distribution(spread, 16), max_distribution(spread, 16)
    assert a.method.startswith("monte carlo") and "seed 7" in a.method
    assert np.array_equal(a.values, b.values)
    assert a.mean() > 3  # a slow worker is always there


def test_estimate_shows_the_straggler_tax():
    rows = estimate(EstimateConfig(model="gpt2-124m", workers=64, network="10gbe", compute_spread=["lognormal:0.3"],
                                   strategies=["adamw@bf16-allreduce", "dlion-mavo@a2a-1bit"]))
    even = estimate(EstimateConfig(model="gpt2-124m", workers=64, network="10gbe",
                                   strategies=["adamw@bf16-allreduce", "dlion-mavo@a2a-1bit"]))
    assert (rows["spread_method"] == "exact").all()
    assert (rows["wait_s"] > 0).all() and (rows["step_p99_s"] > rows["step_p50_s"]).all()
    assert np.allclose(rows["compute_s"], even["compute_s"])  # the median worker: lognormal's median is 1
    assert rows["speedup"].iloc[1] < even["speedup"].iloc[1]  # waiting dilutes what 1-bit comm saves


# --- bad specs: one line, exit 2 ---------------------------------------------------------------

@pytest.mark.parametrize("spec,message", [
    ("lognormal:-0.1", "SIGMA -0.1 must be a number from 0 to 3"),
    ("lognormal:nan", "SIGMA nan must be"),
    ("slow:5:2", "K = 5 slow workers is more than the 4 workers"),
    ("slow:1.5:2", "K 1.5 must be a whole number at least 1"),
    ("slow:1:0", "FACTOR 0 must be"),
    ("slow:1:0.5", "bad --compute-spread slow:1:0.5: FACTOR 0.5 must be a number from 1 to 1,000 ("),
    ("episodes:0.1:0.5:3", "FACTOR 0.5 must be a number from 1 to 1,000"),
    ("episodes:1.5:2:3", "P 1.5 must be a number from 0 to 1"),
    ("episodes:0.1:2", "episodes takes 3 value"),
    ("jitter:0.1", "unknown kind 'jitter'"),
    ("trace:missing.csv", "cannot read missing.csv"),
])
def test_bad_specs_are_one_line_and_exit_2(spec, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(["bench", "-w", "mlp", "-n", "4", "--steps", "1", "--compute-spread", spec])
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text,message", [
    ("step,worker,seconds\n1,0,1\n", "columns are step, worker, seconds"),
    ("step,worker,compute_s\n1,0,1\n1,1,0\n", "compute_s 0 is not a finite time > 0"),
    ("step,worker,compute_s\n1,0,1\n1,1,-2\n", "compute_s -2 is not a finite time > 0"),
    ("step,worker,compute_s\n1,0,1\n1,1,2\n2,0,1\n", "no time for step 2, worker 1"),
    ("step,worker,compute_s\n1,0,1\n1,0,2\n", "appears twice"),
    ("step,worker,compute_s\n1,0,1\n1,1,x\n", "is not three numbers"),
    ("step,worker,compute_s\n1,0,1\n1,1,1\n", "the trace has 2 workers and the run 4"),
    # the workers a step needs are the run's, not the trace's highest id + 1 (old: "workers 0..5")
    ("step,worker,compute_s\n1,0,1\n1,5,1\n", "no time for step 1, worker 1: every step needs workers 0..3 (--workers 4)"),
])
def test_bad_traces_are_one_line_and_exit_2(text, message, tmp_path, capsys):
    trace = tmp_path / "trace.csv"
    trace.write_text(text)
    one_line_exit_2(["estimate", "--model", "gpt2-124m", "--workers", "4", "--compute-spread", f"trace:{trace}"], capsys,
                    message)


@pytest.mark.parametrize("spec,part", [
    ("lognormal:3.01", "SIGMA 3.01"), ("lognormal:100", "SIGMA 100"), ("lognormal:inf", "SIGMA inf"),
    ("slow:1:1000.5", "FACTOR 1000.5"), ("slow:1:1e300", "FACTOR 1e300"), ("episodes:0.1:1001:2", "FACTOR 1001"),
])
def test_a_sigma_or_factor_past_its_top_is_one_line_naming_it_and_its_range(spec, part, capsys):
    """SIGMA at most 3 and FACTOR at most 1,000 (spread.MAX_SIGMA, MAX_FACTOR): past them the expected
    slowest worker overflowed and estimate printed inf and nan rows, exit 0."""
    top = "3 (at 3 one step in 100" if part.startswith("SIGMA") else "1,000 (1: as fast as the others"
    err = one_line_exit_2(["estimate", "--model", "gpt2-124m", "-s", "dlion-mavo", "-s", "adamw",
                           "--compute-spread", spec], capsys, f"error: bad --compute-spread {spec}: {part} must be ")
    assert f" to {top}" in err and "; accepted: lognormal:SIGMA" in err, err


def test_a_sigma_or_factor_at_its_top_is_priced_in_finite_times():
    """The tops themselves are accepted, and price finite steps that the spread slows: the slowest of
    N lognormal(3) factors and a 1,000x slow worker each make the step at least their compute."""
    assert parse_spec("lognormal:3").sigma == 3 and parse_spec("slow:1:1000").factor == 1000
    assert parse_spec("episodes:0.1:1000:2").factor == 1000
    even = estimate(EstimateConfig(model="gpt2-124m", workers=8, strategies=["adamw"]))
    for spec, least in (("lognormal:3", 1.0), ("slow:1:1000", 1000.0)):
        rows = estimate(EstimateConfig(model="gpt2-124m", workers=8, compute_spread=[spec], strategies=["adamw"]))
        times = rows[["compute_s", "comm_s", "step_s", "compute_max_s", "wait_s", "step_p50_s", "step_p99_s"]]
        assert np.isfinite(times.to_numpy(float)).all(), spec
        assert rows["step_s"].iloc[0] >= least * even["compute_s"].iloc[0], spec


def test_parse_names_the_bad_value():
    with pytest.raises(LionsimError, match="accepted: lognormal:SIGMA"):
        parse_spec("slow")
