"""`lionsim estimate` prices PowerSGD from the model's matrix shapes and local-step methods per
round, against closed forms written here (a link without latency: every all-reduce sends
2(N-1)/N n bytes and takes that over the bandwidth)."""

import math

import pytest

from lionsim.estimate import EstimateConfig, estimate
from lionsim.strategies.core.given import flags
from lionsim.whole import MAX_STEPS

N, GBPS = 8, 1.0


@pytest.fixture()
def link(tmp_path) -> str:
    path = tmp_path / "link.toml"
    path.write_text(f'traits = "ideal"\n[inter]\nalpha_us = 0.0\nbandwidth_GBps = {GBPS}\n')  # the formulas alone
    return str(path)


def allreduce(nbytes: float) -> tuple[float, float]:
    """(bytes one worker sends, seconds) of a bandwidth-optimal all-reduce of n bytes, no latency."""
    sent = 2 * (N - 1) / N * nbytes
    return sent, sent / (GBPS * 1e9)


def row(link: str, strategy: str, **kw) -> dict:
    options = {k: kw.pop(k) for k in list(kw) if k in flags()}  # strategy options (their modules' Options)
    cfg = EstimateConfig(model="gpt2-124m", workers=N, network=link, overlap="none", strategies=[strategy],
                         options=options, **kw)
    return estimate(cfg).iloc[0].to_dict()


@pytest.mark.parametrize("h", [1, 5, 20])
def test_diloco_comm_is_one_fp32_allreduce_amortised_over_h_steps(link, h):
    params = 124_439_808
    got = row(link, "diloco", local_steps=h)
    sent, seconds = allreduce(4 * params)
    assert got["local_steps"] == h
    assert got["comm_s"] == pytest.approx(seconds / h, rel=1e-9)
    assert got["wire_bytes"] == pytest.approx(math.ceil(sent) / h, rel=1e-9)
    assert got["bits_per_param_up"] == pytest.approx(32 / h)
    local = row(link, "diloco", local_steps=MAX_STEPS)  # practically never syncs: the local step alone
    assert got["compute_s"] == pytest.approx(local["compute_s"])  # every step computes, synced or not


def test_powersgd_sends_the_factors_of_every_matrix_and_the_rest_whole(link):
    """GPT-2 small at rank 4: every matrix compresses ((n + m) 4 x 2 < n m); vectors do not."""
    d, vocab, ctx, layers, r = 768, 50257, 1024, 12, 4
    matrices = [(vocab, d), (ctx, d)] + layers * ([(d, d)] * 4 + [(4 * d, d), (d, 4 * d)])
    p = sum(n * r for n, _ in matrices)
    q = sum(m * r for _, m in matrices)
    rest = 124_439_808 - sum(n * m for n, m in matrices)
    assert rest == layers * (4 * d + 4 * d + d + 4 * d) + 2 * d  # biases, two layer norms per block, the final norm
    got = row(link, "powersgd", powersgd_rank=r)
    pieces = [allreduce(4 * n) for n in (rest, p, q)]
    assert got["wire_bytes"] == sum(math.ceil(s) for s, _ in pieces)
    assert got["comm_s"] == pytest.approx(sum(t for _, t in pieces), rel=1e-9)
    assert got["bits_per_param_up"] == pytest.approx(32 * (rest + p + q) / 124_439_808)


def test_powersgd_at_a_rank_no_matrix_saves_at_sends_everything_whole_and_says_so(link):
    """The rank is clamped per matrix, as torch's powerSGD_hook does (min(n, m, rank)), and a matrix is
    sent as factors only where (n + m) r x 2 < n m. GPT-2 small's widest saving is the embedding
    (50257 x 768): r <= 378. One past it nothing compresses: an fp32 all-reduce of every parameter,
    and the caption says so."""
    d, vocab = 768, 50257
    last = max(r for r in range(1, d + 1) if (vocab + d) * r * 2 < vocab * d)
    assert last == 378
    params = 124_439_808

    def notes(rank: int) -> list[str]:
        cfg = EstimateConfig(model="gpt2-124m", workers=N, network=link, overlap="none", strategies=["powersgd"],
                             options={"powersgd_rank": rank})
        return estimate(cfg).attrs["notes"]

    assert not any("nothing is compressed" in n for n in notes(last))
    for rank in (last + 1, 100_000):
        assert row(link, "powersgd", powersgd_rank=rank)["wire_bytes"] == math.ceil(allreduce(4 * params)[0])
        assert any("no matrix is sent as factors at this rank" in n for n in notes(rank))


def test_demo_sends_top_k_dct_coefficients_of_every_chunk(link):
    """GPT-2 small at chunk 64, top 32: the authors' chunks (each dimension's largest divisor <= 64:
    29 for the 50,257-row embedding), all-gathered as (int32 index, fp32 value) pairs."""
    d, layers = 768, 12
    def pairs(rows, cols):
        ca = max(x for x in range(1, 65) if rows % x == 0)
        cb = max(x for x in range(1, 65) if cols % x == 0)
        return (rows // ca) * (cols // cb) * min(32, ca * cb)
    matrices = [(50257, d), (1024, d)] + layers * ([(d, d)] * 4 + [(4 * d, d), (d, 4 * d)])
    vectors = layers * ([d] * 4 + [4 * d, d] + [d] * 4) + [d, d]  # biases, two layer norms a block, the final one
    k = sum(pairs(a, b) for a, b in matrices) + sum(pairs(1, n) for n in vectors)
    got = row(link, "demo")
    sent, seconds = (N - 1) / N * N * k * 4, (N - 1) / N * N * k * 4 / (GBPS * 1e9)  # one all-gather of each
    assert got["wire_bytes"] == 2 * math.ceil(sent)
    assert got["comm_s"] == pytest.approx(2 * seconds, rel=1e-9)


def test_powersgd_needs_a_model_preset_for_its_shapes():
    from lionsim.errors import LionsimError

    with pytest.raises(LionsimError, match="give --model"):
        estimate(EstimateConfig(params=10**9, tokens_per_worker=1024, strategies=["powersgd"]))
