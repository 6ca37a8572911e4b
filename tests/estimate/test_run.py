"""`estimate --steps N`: a whole run's phases, each against a hand count of single-step figures."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

P, TOKENS, WORKERS = 200_000_000, 1024, 8


def rows(strategies, **kw):
    fields = set(EstimateConfig.__dataclass_fields__)
    kw = {k: v for k, v in kw.items() if k in fields} | {"options": {k: v for k, v in kw.items() if k not in fields}}
    # fused kernels: a warm-up step skips the codec's passes, which the hand counts below leave in
    base = dict(params=P, tokens_per_worker=TOKENS, workers=WORKERS, network="10gbe", overlap="none", kernels="ideal")
    frame = estimate(EstimateConfig(**(base | kw), strategies=strategies))
    return {f"{r.strategy}@{r.transport}": r for r in frame.itertuples(index=False)}


def test_onebit_adam_is_f_full_precision_steps_then_one_bit_steps():
    n, f = 100, 15
    got = rows(["onebit-adam", "adamw@fp32-allreduce"], steps=n, freeze_steps=f)
    onebit, fp32 = got["onebit-adam@compressed-allreduce"], got["adamw@fp32-allreduce"]
    # a warm-up step all-reduces the fp32 gradient, as adamw@fp32-allreduce does; the rest of its step
    # is the compressed step's compute and passes, less the compression it skips (under a millisecond
    # a step here, against 1.2 s of fp32 all-reduce: within 0.1% of the run)
    rest = onebit.step_s - onebit.comm_s
    assert onebit.run_s == pytest.approx(f * (rest + fp32.comm_s) + (n - f) * onebit.step_s, rel=1e-3)
    assert onebit.run_s < f * (rest + fp32.comm_s) + (n - f) * onebit.step_s
    assert onebit.mean_step_s == pytest.approx(onebit.run_s / n) and onebit.run_phases == "warm-up 15; compressed 85"
    assert fp32.run_s == pytest.approx(n * fp32.step_s, rel=1e-12) and fp32.run_phases == "steady 100"


def test_local_sgd_counts_its_syncs():
    # H = 4 over 10 steps: syncs at steps 4 and 8. The steady row is a round's mean, (S + 3 L) / 4;
    # a one-step run is one local step L; so 10 steps = 2 S + 8 L = 8 row + 2 L.
    h = 4
    ten = rows(["localsgd"], local_steps=h, steps=10)["localsgd@fp32-allreduce"]
    one = rows(["localsgd"], local_steps=h, steps=1)["localsgd@fp32-allreduce"]
    assert one.run_phases == "local 1" and ten.run_phases == "local 8; sync 2"
    assert ten.run_s == pytest.approx(8 * ten.step_s + 2 * one.run_s, rel=1e-12)


SYNC_BYTES = 2 * (WORKERS - 1) / WORKERS * 4 * P
"""One momentum sync: a ring all-reduce of the fp32 momentum (4 P bytes) among 8 workers, the bytes
a worker sends."""
SYNC_S = 2 * (WORKERS - 1) * 25e-6 + SYNC_BYTES / 1.17e9
"""Its time on 10gbe: alpha 25 us, 1.17 GB/s."""


def test_momentum_sync_adds_a_ring_all_reduce_of_the_fp32_momentum_every_k_steps():
    n, k = 100, 10
    row = rows(["dlion-mavo"], momentum_sync=f"every:{k}", steps=n)["dlion-mavo@int8-allreduce"]
    never = rows(["dlion-mavo"], steps=n)["dlion-mavo@int8-allreduce"]
    assert row.run_phases == "steady 90; steady + sync 10"
    # the sync's copy (a memory pass over the momentum) is part of the step too: at most a few ms here
    assert row.run_s - never.run_s == pytest.approx(n // k * SYNC_S, rel=0.02)
    # K divides N: the run's mean step is the steady row, which holds one sync over K steps
    assert row.mean_step_s == pytest.approx(row.step_s, rel=1e-12)


@pytest.mark.parametrize("k", [1, 4, 10])
def test_a_momentum_sync_every_k_steps_is_one_sync_over_k_in_the_steady_step(k):
    """Without --steps: the steady row adds one sync's bytes and time over K (closed forms above),
    as a local-step strategy's row holds its exchange over H."""
    never = rows(["dlion-mavo"])["dlion-mavo@int8-allreduce"]
    every = rows(["dlion-mavo"], momentum_sync=f"every:{k}")["dlion-mavo@int8-allreduce"]
    assert every.wire_bytes - never.wire_bytes == pytest.approx(SYNC_BYTES / k, rel=1e-9)
    assert every.comm_s - never.comm_s == pytest.approx(SYNC_S / k, rel=0.01)
    assert every.bits_per_param_up - never.bits_per_param_up == pytest.approx(32 / k, rel=1e-9)  # the fp32 momentum


def test_a_momentum_sync_schedule_needs_a_whole_run():
    """schedule:K's gaps grow over the run: what it adds to a step depends on the run's length."""
    with pytest.raises(LionsimError, match="gaps that grow over the run.*add --steps N"):
        rows(["dlion-mavo"], momentum_sync="schedule:2")
    row = rows(["dlion-mavo"], momentum_sync="schedule:2", steps=20)["dlion-mavo@int8-allreduce"]
    never = rows(["dlion-mavo"], steps=20)["dlion-mavo@int8-allreduce"]
    assert row.step_s == never.step_s  # the steady state: the gaps grow without end
    assert row.run_phases == "steady + sync 6; steady 14"  # steps 1, 2, 4, 7, 11 and 17 sync


def test_dgc_warm_up_stages_are_priced_at_their_density():
    # 8 warm-up steps: 4 stages of 2, densities 1/4, 1/16, 1/64, 1/256, then --topk-ratio 0.001
    ratio, n = 0.001, 10
    run = rows(["dgc"], topk_ratio=ratio, dgc_warmup_steps=8, steps=n)["dgc@sparse-allgather"]
    stage = [rows(["dgc"], topk_ratio=d)["dgc@sparse-allgather"].step_s for d in (1 / 4, 1 / 16, 1 / 64, 1 / 256)]
    assert run.run_phases == "warm-up 8; steady 2"
    assert run.run_s == pytest.approx(2 * sum(stage) + 2 * run.step_s, rel=1e-12)


def test_tokens_give_the_steps_that_process_them():
    row = rows(["adamw@bf16-allreduce"], tokens=10**9)["adamw@bf16-allreduce"]
    assert row.run_steps == math.ceil(10**9 / (TOKENS * WORKERS))
    assert row.run_s == pytest.approx(row.run_steps * row.step_s)


@pytest.mark.parametrize("kw, message", [
    ({"steps": 10, "tokens": 10**6}, "give --steps (10) or --tokens (1000000), not both"),
    ({"steps": 0}, "bad --steps 0; accepted: a whole number from 1 to 10,000,000"),
    ({"tokens": -5}, "bad --tokens -5; accepted"),
    ({"momentum_sync": "every:4"}, "--momentum-sync every:4 applies to the Lion family"),
])
def test_bad_run_input_is_one_line(kw, message):
    with pytest.raises(LionsimError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rows(["adamw@bf16-allreduce"], **kw)


def test_cli_prints_the_run_and_writes_its_columns(tmp_path):
    out = tmp_path / "e"
    result = CliRunner().invoke(app, ["estimate", "--params", "1e8", "--tokens-per-worker", "1024", "--workers", "8",
                                      "-s", "adamw@bf16-allreduce", "-s", "onebit-adam", "--steps", "1000",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "a whole run of 1,000 steps" in result.output and "warm-up 15;" in result.output
    assert "compressed 985" in result.output  # a phrase breaks from the next, never inside: 80 columns
    assert max(map(len, result.output.splitlines())) <= 80
    header = (out / "estimate.csv").read_text().splitlines()[0]
    assert all(c in header for c in ("run_steps", "run_s", "mean_step_s", "run_speedup", "run_phases"))

@pytest.mark.parametrize("tokens, title", [("10", "a whole run of 1 step\n"), ("8193", "a whole run of 2 steps\n")])
def test_the_run_tables_title_counts_its_steps_in_words(tokens, title):
    """ceil(T / (1,024 tokens x 8 workers)) steps: 10 tokens are one step ("1 steps" it said), 8,193 two."""
    result = CliRunner().invoke(app, ["estimate", "--params", "1e8", "--tokens-per-worker", "1024", "--workers", "8",
                                      "-s", "adamw@bf16-allreduce", "--tokens", tokens])
    assert result.exit_code == 0, result.output
    assert title in result.output and "1 steps" not in result.output


def test_cli_refuses_a_bad_run_with_one_line(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["estimate", "--params", "1e8", "--tokens-per-worker", "1024", "--steps", "0", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "bad --steps 0" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_tokens_over_a_sweep_of_workers_give_each_count_its_own_steps():
    from lionsim.estimate.config import resolve
    from lionsim.estimate.table import estimate_rows

    r = resolve(EstimateConfig(params=P, tokens_per_worker=TOKENS, workers=WORKERS, network="10gbe", tokens=10**9,
                               strategies=["adamw@bf16-allreduce"]))
    for workers in (8, 16, 32):
        row = estimate_rows(r, workers, r.network)[0]
        assert row["run_steps"] == math.ceil(10**9 / (TOKENS * workers))


def test_powersgd_warm_up_is_k_plain_all_reduce_steps():
    n, k = 50, 10
    frame = estimate(EstimateConfig(model="gpt2-124m", workers=WORKERS, network="10gbe", overlap="none", steps=n,
                                    kernels="ideal", options={"powersgd_warmup_steps": k}, strategies=["powersgd", "adamw@fp32-allreduce"]))
    psgd, fp32 = frame.iloc[0], frame.iloc[1]
    assert psgd.run_phases == f"warm-up {k}; compressed {n - k}"
    rest = psgd.step_s - psgd.comm_s  # the warm-up skips the factorisation passes: within 0.1% of the run
    assert psgd.run_s == pytest.approx(k * (rest + fp32.comm_s) + (n - k) * psgd.step_s, rel=1e-3)
