"""Low-precision collectives against plain loops written from their semantics: bf16-allreduce as
a ring that rounds each partial sum to bf16 (chunk c starts at worker c + 1 and goes round),
fp8-allreduce / fp8-e5m2-allreduce as per-block scaled fp8 codes, float32 sums in worker order,
the mean quantized again; their bytes against the closed form; their error in steps.csv; and
the fp8 transports on 2 real gloo ranks, bit for bit as the simulator."""

import math

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.app import main
from lionsim.network.cost import wire_bytes
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from tests.helpers.cli import one_line_exit_2

FP8 = {"fp8-allreduce": torch.float8_e4m3fn, "fp8-e5m2-allreduce": torch.float8_e5m2}


def gradients(workers: int, numel: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    scale = torch.logspace(-4, 0, numel)  # magnitudes over 4 decades, as gradients of different layers
    return torch.randn(workers, numel, generator=g) * scale[torch.randperm(numel, generator=g)]


def bf16(v: float) -> float:
    return float(torch.tensor(v, dtype=torch.float32).to(torch.bfloat16))


def ring_reference(x: torch.Tensor) -> list[float]:
    """Per element: chunks of ceil(n / N); chunk c's sum starts at worker (c + 1) mod N, each next
    worker adds its own bf16 value in float32 and rounds the partial sum to bf16."""
    workers, n = x.shape
    chunk = -(-n // workers)
    out = []
    for j in range(n):
        start = (j // chunk + 1) % workers
        acc = bf16(float(x[start, j]))
        for hop in range(1, workers):
            own = bf16(float(x[(start + hop) % workers, j]))
            acc = bf16(float(torch.tensor(acc, dtype=torch.float32) + torch.tensor(own, dtype=torch.float32)))
        out.append(acc)
    return out


@pytest.mark.parametrize("workers", [2, 3, 8, 32])
def test_bf16_allreduce_is_the_ring_rounding_every_partial_sum(workers):
    x = gradients(workers, 45)
    got = TRANSPORTS.get("bf16-allreduce")().aggregate(Payload(PayloadSpec(kind="dense", numel=45), x), SimComm(workers))
    expected = torch.tensor(ring_reference(x)) / workers
    assert torch.equal(got[0], expected)
    assert torch.equal(got[1], got[0])


def test_bf16_ring_error_grows_with_workers_and_exceeds_one_rounding():
    """The ring's N - 1 roundings against one rounding of the float32 sum."""
    errors = {}
    for workers in (2, 32):
        x = gradients(workers, 4096, seed=1)
        payload = Payload(PayloadSpec(kind="dense", numel=4096), x)
        TRANSPORTS.get("bf16-allreduce")().aggregate(payload, SimComm(workers))
        once = x.bfloat16().float().sum(0).bfloat16().float() / workers
        exact = x.double().mean(0)
        errors[workers] = payload.extra["aggregate_rel_error"], float((once - exact).norm() / exact.norm())
        assert errors[workers][0] == pytest.approx(float((payload_aggregate(x, "bf16-allreduce") - exact).norm()
                                                         / exact.norm()), rel=1e-9)
    assert errors[32][0] > 2 * errors[2][0]  # more hops, more roundings
    assert errors[32][0] > 2 * errors[32][1]  # well above a sum rounded once


def payload_aggregate(x: torch.Tensor, transport: str) -> torch.Tensor:
    spec = PayloadSpec(kind="dense", numel=x.shape[1])
    return TRANSPORTS.get(transport)().aggregate(Payload(spec, x), SimComm(x.shape[0]))[0].double()


def fp8_reference(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Blocks of 256 over the zero-padded vector (N chunks of whole blocks); per block s = amax /
    FMAX (1 for an all-zero block), code = fp8(clamp(v / s)); the mean of the dequantized codes
    summed in float32 in worker order, / N, quantized again the same way."""
    workers, n = x.shape
    fmax = torch.finfo(dtype).max
    total = math.ceil(n / (workers * 256)) * workers * 256

    def roundtrip(v: torch.Tensor) -> torch.Tensor:  # one block [256] float32
        amax = float(v.abs().max())
        s = torch.tensor(amax / fmax if amax > 0 else 1.0, dtype=torch.float32)
        return torch.stack([(t / s).clamp(-fmax, fmax).to(dtype).float() * s for t in v])

    padded = torch.zeros(workers, total)
    padded[:, :n] = x
    deq = torch.stack([torch.cat([roundtrip(padded[i, b : b + 256]) for b in range(0, total, 256)])
                       for i in range(workers)])
    out = torch.zeros(total)
    for j in range(total):
        acc = deq[0, j].clone()
        for i in range(1, workers):
            acc = acc + deq[i, j]
        out[j] = acc / workers
    return torch.cat([roundtrip(out[b : b + 256]) for b in range(0, total, 256)])[:n]


@pytest.mark.parametrize("transport", list(FP8))
@pytest.mark.parametrize("workers,numel", [(2, 300), (3, 1000), (5, 256)])
def test_fp8_allreduce_equals_its_plain_loop(transport, workers, numel):
    x = gradients(workers, numel, seed=workers)
    x[:, 256:] *= 0 if numel == 300 else 1  # an all-zero block (scale 1) where there is one
    payload = Payload(PayloadSpec(kind="dense", numel=numel), x)
    got = TRANSPORTS.get(transport)().aggregate(payload, SimComm(workers))
    assert torch.equal(got[0], fp8_reference(x, FP8[transport]))
    assert all(torch.equal(row, got[0]) for row in got)
    exact = x.double().mean(0)
    assert payload.extra["aggregate_rel_error"] == pytest.approx(float((got[0].double() - exact).norm() / exact.norm()))


def test_fp8_error_does_not_grow_with_workers_and_e4m3_beats_e5m2():
    """Two roundings whatever N (the sums are float32): the error at 32 workers is within a
    factor of the error at 2; e4m3's 3 mantissa bits against e5m2's 2: about half the error."""
    err = {}
    for workers in (2, 32):
        x = gradients(workers, 8192, seed=2)
        exact = x.double().mean(0)
        for t in FP8:
            err[(t, workers)] = float((payload_aggregate(x, t) - exact).norm() / exact.norm())
    assert err[("fp8-allreduce", 32)] < 1.5 * err[("fp8-allreduce", 2)]
    assert err[("fp8-allreduce", 32)] < 0.7 * err[("fp8-e5m2-allreduce", 32)]


@pytest.mark.parametrize("workers", [2, 3, 8, 64])
@pytest.mark.parametrize("transport", list(FP8))
def test_fp8_bytes_equal_the_closed_form(transport, workers):
    """A reduce-scatter as an all-to-all and an all-gather, each (N-1)/N of the padded vector's
    codes plus a float32 scale per 256: 2 (N-1)/N * n' (1 + 4/256) bytes sent per worker."""
    n = 1_000_003
    spec = PayloadSpec(kind="dense", numel=n)
    padded = math.ceil(n / (workers * 256)) * workers * 256
    plan = TRANSPORTS.get(transport)().plan(spec, workers)
    assert sum(wire_bytes(c, workers) for c in plan) == pytest.approx(2 * (workers - 1) / workers * padded * (1 + 4 / 256))
    up, down = TRANSPORTS.get(transport)().bits_per_param(spec, workers)
    assert up == down == pytest.approx(8 * padded * (1 + 4 / 256) / n)


def test_steps_csv_reports_the_aggregate_error_of_lossy_transports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["bench", "-w", "mlp", "-n", "4", "--steps", "2", "-s", "adamw", "-s", "adamw@bf16-allreduce",
              "-s", "adamw@fp8-allreduce", "--out", "out"])
    assert done.value.code == 0
    steps = pd.read_csv(tmp_path / "out" / "steps.csv")
    error = steps.groupby("transport")["aggregate_rel_error"]
    assert error.apply(lambda e: e.isna().all())["fp32-allreduce"]
    assert (error.min()[["bf16-allreduce", "fp8-allreduce"]] > 0).all()
    assert error.mean()["fp8-allreduce"] > 3 * error.mean()["bf16-allreduce"]  # 3 mantissa bits against 8
    assert error.max()["fp8-allreduce"] < 0.1


def test_an_unknown_fp8_spelling_is_one_line_naming_the_transports(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    err = one_line_exit_2(["bench", "-w", "mlp", "-n", "2", "--steps", "2", "-s", "adamw@fp8-e4m3-allreduce"], capsys)
    assert "fp8-e4m3-allreduce" in err and "fp8-allreduce" in err and "fp8-e5m2-allreduce" in err
    assert list(tmp_path.iterdir()) == []


# ---- on real gloo ranks ----

RANKS, LOCAL, NUMEL = 2, 2, 700


def rank_main(rank: int):
    from lionsim.backends import ProcessGroupComm

    comm = ProcessGroupComm(local_workers=LOCAL)
    x = gradients(RANKS * LOCAL, NUMEL, seed=9)[rank * LOCAL : (rank + 1) * LOCAL]
    results = {}
    for name in [*FP8, "bf16-allreduce"]:
        payload = Payload(PayloadSpec(kind="dense", numel=NUMEL), x.clone())
        results[name] = (TRANSPORTS.get(name)().aggregate(payload, comm), "aggregate_rel_error" in payload.extra)
    return results


def test_fp8_on_gloo_equals_the_simulator_bit_for_bit(gloo_group):
    ranks = gloo_group(RANKS).run(rank_main)
    x = gradients(RANKS * LOCAL, NUMEL, seed=9)
    for name in FP8:
        sim = TRANSPORTS.get(name)().aggregate(Payload(PayloadSpec(kind="dense", numel=NUMEL), x), SimComm(RANKS * LOCAL))
        for rank in range(RANKS):
            got, noted = ranks[rank][name]
            assert torch.equal(got, sim[:LOCAL]), (name, rank)
            assert not noted  # no exact mean on a rank: the column stays empty
    # bf16 on gloo: each rank's 2 rows summed in float32 and rounded once, then gloo adds the 2
    # ranks' bf16 sums (one addition, rounded to bf16): what the docs say runs there
    w = x.bfloat16().float()
    local = [w[r * LOCAL : (r + 1) * LOCAL].sum(0).bfloat16().float() for r in range(RANKS)]
    expected = (local[0] + local[1]).bfloat16().float() / (RANKS * LOCAL)
    for rank in range(RANKS):
        assert torch.equal(ranks[rank]["bf16-allreduce"][0][0], expected), rank
