"""Every transport against a brute-force aggregate: same inputs, same result, any N."""

import math
from pathlib import Path

import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak
from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, wire_bytes
from lionsim.runs import parse_runs
from lionsim.strategies import STRATEGIES
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.abstain import FLAG_CALL
from tests.reference.impl import vote

VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]
MEAN_TRANSPORTS = [name for name in VOTE_TRANSPORTS if TRANSPORTS.get(name).accepts(STRATEGIES.get("dlion-avg"))]
"""hier-1bit votes by majority only."""


def carriers(rule) -> list[str]:
    return MEAN_TRANSPORTS if isinstance(rule, MeanVote) else VOTE_TRANSPORTS
WORKER_COUNTS = [2, 3, 4, 5, 8, 15, 16, 17, 127, 128, 129, *(pytest.param(n, marks=pytest.mark.slow) for n in (255, 1000))]
"""Odd and even, around powers of two; the largest in the slow tier (pytest -m slow)."""


def brute_force_vote(votes: torch.Tensor, rule) -> torch.Tensor:
    """Count the votes coordinate by coordinate in plain Python."""
    n_workers, n = votes.shape
    out = []
    for j in range(n):
        s = sum(int(votes[i, j]) for i in range(n_workers))
        if isinstance(rule, MajorityVote):
            out.append(1.0 if s > 0 else -1.0 if s < 0 else 0.0)  # tie -> 0
        else:
            out.append(s / n_workers)
    return torch.tensor(out)


def random_votes(workers: int, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    votes = torch.randint(0, 2, (workers, n), generator=g) * 2 - 1
    if workers % 2 == 0:  # force exact ties on some coordinates
        votes[: workers // 2, :5] = 1
        votes[workers // 2 :, :5] = -1
    return votes.to(torch.int8)


@pytest.mark.parametrize("workers", WORKER_COUNTS)
@pytest.mark.parametrize("rule", [MajorityVote(), MeanVote()], ids=["mavo", "avg"])
def test_every_vote_transport_equals_brute_force(workers, rule):
    n = 203 if workers < 200 else 29  # odd sizes: padding paths are exercised
    votes = random_votes(workers, n, seed=workers)
    expected = brute_force_vote(votes, rule)
    if workers % 2 == 0 and isinstance(rule, MajorityVote):
        assert (expected[:5] == 0).all()  # the ties really are there
    spec = PayloadSpec(kind="votes", numel=n, rule=rule)
    for name in carriers(rule):
        out = TRANSPORTS.get(name)().aggregate(Payload(spec, votes), SimComm(workers))
        assert out.shape == (workers, n), name
        assert torch.equal(out, expected.expand(workers, n)), f"{name} differs at N={workers}"


@pytest.mark.parametrize("workers,max_level", [(4, 31), (16, 7), (127, 1), (200, 1), (300, 100)])
def test_levels_sum_exactly_without_overflow(workers, max_level):
    """SimComm refuses a container overflow, so passing means the container was wide enough."""
    g = torch.Generator().manual_seed(0)
    levels = torch.randint(-max_level, max_level + 1, (workers, 50), generator=g)
    levels[:, 0] = max_level  # the extreme sum
    spec = PayloadSpec(kind="levels", numel=50, max_level=max_level)
    out = TRANSPORTS.get("int8-allreduce")().aggregate(Payload(spec, levels), SimComm(workers))
    assert torch.equal(out[0], levels.sum(0).float())


def test_sim_comm_refuses_container_overflow():
    with pytest.raises(OverflowError):
        SimComm(200).all_reduce(torch.ones(200, 3, dtype=torch.int8))


def test_dense_transports_average():
    grads = torch.randn(5, 40)
    spec = PayloadSpec(kind="dense", numel=40)
    fp32 = TRANSPORTS.get("fp32-allreduce")().aggregate(Payload(spec, grads), SimComm(5))
    torch.testing.assert_close(fp32[0], grads.mean(0))
    bf16 = TRANSPORTS.get("bf16-allreduce")().aggregate(Payload(spec, grads), SimComm(5))
    torch.testing.assert_close(bf16[0], grads.mean(0), atol=2e-2, rtol=2e-2)  # bf16: 8 mantissa bits


def test_scaled_signs_allgather_equals_mean_of_scaled_signs():
    signs = (torch.randint(0, 2, (3, 10)) * 2 - 1).to(torch.int8)
    segment_ids = torch.tensor([0] * 4 + [1] * 6)
    scales = torch.rand(3, 2)
    spec = PayloadSpec(kind="scaled-signs", numel=10, segments=2)
    out = TRANSPORTS.get("allgather-1bit")().aggregate(
        Payload(spec, signs, scales=scales, segment_ids=segment_ids), SimComm(3))
    expected = torch.zeros(10)
    for i in range(3):
        for j in range(10):
            expected[j] += float(signs[i, j]) * float(scales[i, segment_ids[j]]) / 3
    torch.testing.assert_close(out[1], expected)


def test_sparse_allgather_sums_pairs():
    indices = torch.tensor([[0, 3], [3, 5]])
    values = torch.tensor([[1.0, 2.0], [4.0, -1.0]])
    spec = PayloadSpec(kind="sparse", numel=6, k=2)
    out = TRANSPORTS.get("sparse-allgather")().aggregate(Payload(spec, values, indices=indices), SimComm(2))
    assert out[0].tolist() == [0.5, 0.0, 0.0, 3.0, 0.0, -0.5]


def votes_with_zeros(workers: int, n: int, seed: int) -> torch.Tensor:
    """+1/0/-1 votes with every corner a transport can miss: coordinates nobody votes on, one
    lone voter, exact ties among the voters (at odd N too, thanks to abstentions)."""
    g = torch.Generator().manual_seed(seed)
    votes = torch.randint(-1, 2, (workers, n), generator=g)
    votes[:, 0] = 0  # nobody votes
    votes[:, 1] = 0
    votes[0, 1] = -1  # a lone voter decides
    if workers >= 2:
        votes[:, 2:4] = 0
        votes[0, 2:4] = 1
        votes[1, 2:4] = -1  # a tie among two voters, the others abstaining
    if workers % 2 == 0:
        votes[: workers // 2, 4] = 1
        votes[workers // 2 :, 4] = -1  # a tie with no abstention
    return votes.to(torch.int8)


def brute_force_with_abstentions(votes: torch.Tensor, rule: str, tie: str, step: int, seed: int) -> torch.Tensor:
    columns = votes.t().tolist()
    return torch.tensor([vote([float(v) for v in col], rule, tie, step, seed, j) for j, col in enumerate(columns)])


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 7, 8, 9, 16, 17, 127, 128, *(pytest.param(n, marks=pytest.mark.slow) for n in (255, 1000))])
@pytest.mark.parametrize("rule,tie", [("mavo", "zero"), ("mavo", "alternate"), ("mavo", "random"), ("avg", "zero")])
def test_every_vote_transport_equals_brute_force_with_abstentions_and_tie_rules(workers, rule, tie):
    """Zeros abstain under every transport (int8-allreduce used to abstain and the 1-bit and
    p-bit ones to vote -1); sizes not a multiple of 8 or of N."""
    n = 211 if workers < 200 else 37
    votes = votes_with_zeros(workers, n, seed=workers)
    for step in (1, 2):
        expected = brute_force_with_abstentions(votes, rule, tie, step, seed=5)
        r = MeanVote() if rule == "avg" else MajorityVote(TieBreak(tie, seed=5, step=step))
        spec = PayloadSpec(kind="votes", numel=n, rule=r)
        for name in carriers(r):
            out = TRANSPORTS.get(name)().aggregate(Payload(spec, votes.clone()), SimComm(workers))
            assert out.shape == (workers, n), name
            assert torch.equal(out, expected.expand(workers, n)), f"{name} differs at N={workers}, step {step}"
        assert expected[0] == 0 and expected[1] == (-1 if rule == "mavo" else -1 / workers)


@pytest.mark.parametrize("workers", [2, 5, 8])
def test_every_vote_transport_prices_the_abstentions_it_sent(workers):
    """The flag all-reduce every step; the voted plane only on steps with a zero vote."""
    n = 8 * 31 * 5 * 8
    for name in VOTE_TRANSPORTS:
        t = TRANSPORTS.get(name)()
        for tie in ("zero", "alternate"):
            rule = MajorityVote(TieBreak(tie))
            clean = Payload(PayloadSpec(kind="votes", numel=n, rule=rule), random_votes(workers, n, 0))
            t.aggregate(clean, SimComm(workers))
            zeros = random_votes(workers, n, 0)
            zeros[0, 3] = 0
            holed = Payload(PayloadSpec(kind="votes", numel=n, rule=rule), zeros)
            t.aggregate(holed, SimComm(workers))
            assert not clean.spec.abstain
            plain, flagged = t.plan(clean.spec, workers), t.plan(holed.spec, workers)
            if name == "int8-allreduce" and tie == "zero":  # a zero sums as 0: nothing to add
                assert FLAG_CALL not in plain and plain == flagged and not holed.spec.abstain
                continue
            assert holed.spec.abstain and plain[0] == flagged[0] == FLAG_CALL, name
            up_plain, up_flagged = t.bits_per_param(clean.spec, workers)[0], t.bits_per_param(holed.spec, workers)[0]
            assert up_flagged == 2 * up_plain, name  # one more plane up: the voted bitmap or counts
            assert sum(c.nbytes for c in flagged) > sum(c.nbytes for c in plain), name


def sent(transport: str, spec: PayloadSpec, workers: int) -> float:
    return sum(wire_bytes(c, workers) for c in TRANSPORTS.get(transport)().plan(spec, workers))


@pytest.mark.parametrize("workers", [2, 3, 8, 9, 64])
def test_wire_bytes_match_reference_closed_forms(workers):
    """REFERENCE.md 5, sign transports for n parameters (n a multiple of 8 * 31 * N)."""
    n, N = 8 * 31 * 64 * 9 * 5, workers
    mavo = PayloadSpec(kind="votes", numel=n, rule=MajorityVote())
    assert sent("fp32-allreduce", PayloadSpec(kind="dense", numel=n), N) == pytest.approx(2 * (N - 1) / N * 4 * n)
    assert sent("bf16-allreduce", PayloadSpec(kind="dense", numel=n), N) == pytest.approx(2 * (N - 1) / N * 2 * n)
    assert sent("int8-allreduce", mavo, N) == pytest.approx(2 * (N - 1) / N * n)
    flag = wire_bytes(FLAG_CALL, N)  # the abstention flag: one byte all-reduced every step
    assert sent("allgather-1bit", mavo, N) == pytest.approx((N - 1) / N * N * n / 8 + flag)
    down_bits = 1 if N % 2 else 2  # ties need a third level
    assert sent("a2a-1bit", mavo, N) == pytest.approx((N - 1) / N * n / 8 + (N - 1) / N * n * down_bits / 8 + flag)
    p = math.ceil(math.log2(N + 1))
    words = math.ceil(n / (31 // p))  # p-bit fields in int32 words, sign bit left free
    assert sent("pbit-allreduce", mavo, N) == pytest.approx(2 * (N - 1) / N * 4 * words + flag)
    assert sent("param-server", mavo, N) == pytest.approx(n / 8 + flag)


@pytest.mark.parametrize("workers", [2, 3, 5, 8, 16, 64])
@pytest.mark.parametrize(("numel", "tensors"), [(1, 1), (33, 3), (2762, 4), (1_000_003, 97)])
def test_allgather_1bit_scaled_signs_bytes_are_the_documented_closed_forms(workers, numel, tensors):
    """docs/writing-a-strategy.md, "Testing it": one worker sends (N-1)(ceil(P/8) + 4T) + 2(N-1)/N
    bytes a step by the canonical algorithms (its signs' and scales' all-gathers, the abstention
    flag's ring all-reduce of one byte), (N-1) ceil(P/8) more on a step with a 0 sign; steps.csv
    books each call in whole bytes by the algorithm the model priced, the flag's by recursive
    doubling (a tree at 3): (N-1)(ceil(P/8) + 4T) + ceil(log2 N) on a flat network."""
    from dataclasses import replace

    from lionsim.network import load_network
    from lionsim.steptime.timeline import price_calls

    N, P, T = workers, numel, tensors
    spec = PayloadSpec(kind="scaled-signs", numel=P, segments=T)
    payload = (N - 1) * (math.ceil(P / 8) + 4 * T)
    assert sent("allgather-1bit", spec, N) == pytest.approx(payload + 2 * (N - 1) / N, rel=1e-12)
    zeros = replace(spec, abstain=True)
    assert sent("allgather-1bit", zeros, N) == pytest.approx(payload + (N - 1) * math.ceil(P / 8) + 2 * (N - 1) / N,
                                                             rel=1e-12)
    plan = TRANSPORTS.get("allgather-1bit")().plan
    for network in ("1gbe", "ib-ndr"):
        assert price_calls(plan(spec, N), N, load_network(network)).sent_bytes == payload + math.ceil(math.log2(N))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-strategy.md").read_text()
    assert "| (N-1)(ceil(P/8) + 4T) + 2(N-1)/N: " in docs and "| (N-1)(ceil(P/8) + 4T) + ceil(log2 N): " in docs


def test_a2a_is_one_thirty_second_of_fp32_for_odd_workers():
    n, N = 8 * 7 * 1000, 7
    mavo = PayloadSpec(kind="votes", numel=n, rule=MajorityVote())
    ratio = sent("a2a-1bit", mavo, N) / sent("fp32-allreduce", PayloadSpec(kind="dense", numel=n), N)
    assert ratio == pytest.approx(1 / 32, rel=1e-3)  # plus the 1-byte abstention flag


def test_int8_container_widens_past_127_workers():
    mavo = PayloadSpec(kind="votes", numel=1000, rule=MajorityVote())
    plan = TRANSPORTS.get("int8-allreduce")().plan
    assert plan(mavo, 127) == [CollectiveCall("all_reduce", 1000, "votes", dtype="int8")]
    assert plan(mavo, 128)[0].nbytes == 4000  # straight to int32: no backend sums int16
    assert plan(mavo, 40000)[0].nbytes == 4000


class RecordingComm(SimComm):
    """The simulator, noting the dtype and size of every tensor handed to all_reduce."""

    def __init__(self, world_size: int) -> None:
        super().__init__(world_size)
        self.reduced: list[tuple[torch.dtype, int]] = []

    def all_reduce(self, x, op="sum"):
        self.reduced.append((x.dtype, x[0].numel() * x.element_size()))
        return super().all_reduce(x, op)


# What gloo's all_reduce takes (REFERENCE.md 7); NCCL takes these too. Not int16.
GLOO_REDUCIBLE = {torch.float32, torch.bfloat16, torch.int8, torch.uint8, torch.int32}


@pytest.mark.parametrize("workers", [2, 127, 128, 255, 1000])
def test_every_vote_transport_all_reduces_only_dtypes_gloo_and_nccl_sum(workers):
    spec = PayloadSpec(kind="votes", numel=29, rule=MajorityVote())
    for name in VOTE_TRANSPORTS:
        comm = RecordingComm(workers)
        TRANSPORTS.get(name)().aggregate(Payload(spec, random_votes(workers, 29, seed=1)), comm)
        assert {dtype for dtype, _ in comm.reduced} <= GLOO_REDUCIBLE, (name, workers, comm.reduced)


@pytest.mark.parametrize("workers,max_level,container", [(127, 1, torch.int8), (4, 31, torch.int8),
                                                         (128, 1, torch.int32), (300, 100, torch.int32)])
def test_int8_container_accounting_follows_the_dtype_sent(workers, max_level, container):
    """Plan bytes and bits per parameter are those of the tensor actually all-reduced."""
    n = 50
    levels = torch.randint(-max_level, max_level + 1, (workers, n), generator=torch.Generator().manual_seed(0))
    spec = PayloadSpec(kind="levels", numel=n, max_level=max_level)
    transport, comm = TRANSPORTS.get("int8-allreduce")(), RecordingComm(workers)
    transport.aggregate(Payload(spec, levels), comm)
    assert comm.reduced == [(container, n * container.itemsize)]
    assert transport.plan(spec, workers) == [CollectiveCall("all_reduce", n * container.itemsize, "levels",
                                                            dtype=str(container).removeprefix("torch."))]
    assert transport.bits_per_param(spec, workers) == (8.0 * container.itemsize,) * 2


def test_invalid_strategy_transport_pair_lists_valid_ones():
    with pytest.raises(LionsimError, match="valid transports: .*int8-allreduce"):
        parse_runs(["dlion-mavo@fp32-allreduce"])
    with pytest.raises(LionsimError, match="unknown transport 'carrier-pigeon'"):
        parse_runs(["lion@carrier-pigeon"])
    with pytest.raises(LionsimError, match="unknown strategy 'adam'"):
        parse_runs(["adam"])
    runs = parse_runs(["adamw", "dlion-mavo"], transport="a2a-1bit")
    assert [r.label for r in runs] == ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit"]


@pytest.mark.parametrize("specs, transport, line", [
    (["dlion-mavo@a2a-1bit"], "fp8-allreduce", "--transport fp8-allreduce applies to no run: every strategy "
                                               "names its own transport (dlion-mavo@a2a-1bit)"),
    (["adamw", "dlion-mavo@int8-allreduce"], "a2a-1bit", "strategy 'adamw' cannot use transport 'a2a-1bit'"),
])
def test_a_transport_that_applies_to_no_run_is_refused(specs, transport, line):
    """--transport is for the strategies given without one: where every strategy names its own, or none
    of the others can use it, it was ignored (a strategy named @ that could use it counted as a taker)."""
    with pytest.raises(LionsimError) as info:
        parse_runs(specs, transport=transport)
    assert line in str(info.value)


@pytest.mark.parametrize("command", [["estimate", "-m", "gpt2-124m"], ["bench", "-w", "mlp", "--steps", "1"]])
def test_estimate_and_bench_refuse_a_transport_no_run_takes(command, capsys, tmp_path, monkeypatch):
    from tests.helpers.cli import one_line_exit_2

    monkeypatch.chdir(tmp_path)  # a bench that ran would write reports/bench here
    one_line_exit_2([*command, "-s", "dlion-mavo@a2a-1bit", "--transport", "fp8-allreduce"], capsys,
                    "--transport fp8-allreduce applies to no run")


@pytest.mark.parametrize("command, whose, transport, example", [
    (["estimate", "-m", "gpt2-124m"], "estimate's default strategies (adamw@bf16-allreduce, lion@bf16-allreduce, "
                                      "dlion-mavo, dlion-mavo@a2a-1bit, lioncub-l1)", "fp8-allreduce", "adamw"),
    (["bench", "-w", "mlp", "--steps", "1"], "bench's default strategies (adamw, lion, dlion-mavo, "
                                             "dlion-mavo@a2a-1bit, lioncub-l1)", "sparse-allgather", "dgc"),
    (["sweep", "-w", "mlp", "--steps", "1"], "sweep's default strategies (adamw, lion, dlion-mavo, "
                                             "dlion-mavo@a2a-1bit, lioncub-l1)", "sparse-allgather", "dgc"),
])
def test_a_transport_no_default_run_takes_names_the_default_set_not_one_of_it(command, whose, transport, example,
                                                                           capsys, tmp_path, monkeypatch):
    """estimate --transport fp8-allreduce said "strategy 'dlion-mavo' cannot use transport 'fp8-allreduce'",
    naming a strategy the user never gave: over a default set the refusal names the set and asks for -s."""
    from tests.helpers.cli import one_line_exit_2

    monkeypatch.chdir(tmp_path)  # a run that went ahead would write reports/ here
    err = one_line_exit_2([*command, "--transport", transport], capsys,
                          f"--transport {transport} applies to no run of {whose}: ")
    assert f"; give -s, e.g. -s {example} --transport {transport}" in err and "strategy '" not in err


def test_a_transport_none_of_several_given_strategies_can_use_names_them_all(capsys):
    """-s adamw -s powersgd --transport a2a-1bit blamed adamw alone, though --transport goes only to
    the strategies that can use it: neither can, so the line names both. One strategy keeps its own
    line, with its valid transports."""
    from tests.helpers.cli import one_line_exit_2

    err = one_line_exit_2(["bench", "-s", "adamw", "-s", "powersgd", "--transport", "a2a-1bit"], capsys,
                          "--transport a2a-1bit applies to no run of the -s list (adamw, powersgd): adamw, powersgd "
                          "cannot use it; give -s, e.g. -s ")
    assert "strategy 'adamw'" not in err
    one_line_exit_2(["bench", "-s", "adamw", "--transport", "a2a-1bit"], capsys,
                    "strategy 'adamw' cannot use transport 'a2a-1bit' (it sends dense); valid transports: ")


def test_the_default_set_takes_a_transport_some_of_it_can_use():
    """The rule is the named strategies': --transport goes to the bare strategies that can use it."""
    from lionsim.config.bench import DEFAULT_STRATEGIES

    runs = parse_runs(list(DEFAULT_STRATEGIES), "fp8-allreduce", "bench's default strategies")
    assert [r.label for r in runs] == ["adamw@fp8-allreduce", "lion@fp8-allreduce", "dlion-mavo@int8-allreduce",
                                       "dlion-mavo@a2a-1bit", "lioncub-l1@int8-allreduce"]


def test_transport_refuses_a_payload_kind_it_cannot_carry():
    dense = PayloadSpec(kind="dense", numel=10)
    for name, cls in TRANSPORTS.items():
        if "dense" not in cls.carries:
            with pytest.raises(LionsimError, match=f"{name} carries .* not dense"):
                cls().check(dense, 4)


@pytest.mark.parametrize("kind, level", [("votes", 1), ("levels", 3)])
def test_int8_allreduce_names_where_its_container_widens(kind, level):
    """The note appears from the first worker count whose sums overflow int8 (found by brute force
    over N: N x level > 127), names it and the 32 bits it sends, and is empty below it."""
    t = TRANSPORTS.get("int8-allreduce")()
    spec = PayloadSpec(kind=kind, numel=10, rule=MajorityVote() if kind == "votes" else None, max_level=level)
    first = next(n for n in range(2, 1000) if n * level > 127)
    assert t.footnote(spec, first - 1) == "" and t.bits_per_param(spec, first - 1) == (8, 8)
    note = t.footnote(spec, 1000)
    assert note.startswith(f"int8-allreduce sends int32 (32 bits per parameter) from {first} workers on")
    assert "int16" in note and t.bits_per_param(spec, first) == (32, 32) and t.footnote(spec, first) == note
    assert TRANSPORTS.get("fp32-allreduce")().footnote(spec, 1000) == ""


def test_int8_allreduce_widens_votes_and_levels_in_one_line():
    """Votes and levels of one size widen at one count for one reason: one line, so a table of both
    says it once (its notes are kept once each)."""
    t = TRANSPORTS.get("int8-allreduce")()
    votes = PayloadSpec(kind="votes", numel=10, rule=MajorityVote(), max_level=1)
    levels = PayloadSpec(kind="levels", numel=10, max_level=1)
    assert t.footnote(votes, 128) == t.footnote(levels, 128) != ""
