"""hier:TRANSPORT (lionsim.transports.hierarchy): resolution and refusals, semantics against a
plain per-node reference and against the flat transports, bytes inside and across nodes against
closed forms written from the algorithms, estimate's columns and time on those bytes, and a gloo
run of 2 ranks as 2 nodes of 2 workers against the simulator."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak
from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.network import IDEAL, Link, Network
from lionsim.network.cost import price
from lionsim.network.calls import CollectiveCall
from lionsim.runs import parse_runs
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.timeline import price_calls
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.allreduce_float import Fp32AllReduce
from lionsim.transports.base import F32, plan_on
from lionsim.transports.hierarchy import VOTE_OF_VOTES, forms_for, share_params, shifted

HIER = [name for name, cls in TRANSPORTS.items() if not cls.hierarchical and forms_for(cls)]
"""Every registered transport that takes hier: (the others are refused)."""
RULES = [MajorityVote(), MajorityVote(TieBreak("random", seed=3, step=5)), MajorityVote(TieBreak("alternate", step=2)),
         MeanVote()]
LAYOUTS = [(8, 4), (8, 2), (4, 4), (4, 1)]
"""(W, g): 2 nodes of 4, 4 nodes of 2, one node, a flat network."""


def votes(workers: int, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-1, 2, (workers, n), generator=g).to(torch.int8)  # a third abstain


def dyadic(workers: int, n: int, seed: int) -> torch.Tensor:
    """Float values whose sums in any order are exact in fp32: multiples of 1/8 below 16."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-128, 128, (workers, n), generator=g).float() / 8


# ---- resolution -------------------------------------------------------------------------------


def test_any_case_resolves_and_the_listing_names_none_of_them():
    assert TRANSPORTS.canonical("HIER:FP8-AllReduce") == "hier:fp8-allreduce"
    assert "hier:a2a-1bit" in TRANSPORTS and "hier:nope" not in TRANSPORTS
    assert not any(n.startswith("hier:") for n in TRANSPORTS.names())
    assert TRANSPORTS.get("hier:int8-allreduce") is TRANSPORTS.get("Hier:int8-allreduce")
    assert set(HIER) >= {"fp32-allreduce", "bf16-allreduce", "fp8-allreduce", "fp8-e5m2-allreduce", "fp4-allreduce",
                         "int8-allreduce", "packed-allreduce", "pbit-allreduce", "a2a-1bit", "allgather-1bit",
                         "param-server"}


@pytest.mark.parametrize(("name", "why"), [
    ("hier:compressed-allreduce", "onebit: 1-bit Adam's servers"),
    ("hier:lowrank-allreduce", "lowrank: PowerSGD's power iteration needs whole matrices"),
    ("hier:allgather-levels", "scaled-levels"),
    ("hier:sparse-allgather", "sparse: a node's pairs take as many bytes"),
    ("hier:sparseloco-allgather", "sparse"),
    ("hier:hier-exact", "hier-exact is hierarchical already"),
    ("hier:hier:int8-allreduce", "hierarchical already"),
    ("hier:nope", "unknown transport 'hier:nope': hier: takes any transport; choose from: fp32-allreduce"),
])
def test_refusals_are_one_line_saying_why(name, why):
    with pytest.raises(LionsimError, match=why) as e:
        TRANSPORTS.get(name)
    assert "\n" not in str(e.value)


def test_a_plugin_transport_takes_the_prefix():
    @TRANSPORTS.register("test-plug-mean")
    class PlugMean(Fp32AllReduce):
        name = "test-plug-mean"
        summary = "a plug-in's mean"

    try:
        x = dyadic(8, 64, 0)
        out = TRANSPORTS.get("hier:test-plug-mean")().aggregate(Payload(PayloadSpec(kind="dense", numel=64), x),
                                                                SimComm(8, 4))
        assert torch.equal(out, x.mean(0).expand(8, -1))
    finally:
        TRANSPORTS.forget(["test-plug-mean"])
    assert "hier:test-plug-mean" not in TRANSPORTS


def test_runs_take_hier_names_where_the_strategy_fits():
    assert [r.transport for r in parse_runs(["dlion-mavo@HIER:int8-allreduce", "adamw@hier:fp8-allreduce"])] == [
        "hier:int8-allreduce", "hier:fp8-allreduce"]
    assert [r.transport for r in parse_runs(["dlion-mavo", "adamw"], "hier:int8-allreduce")] == [
        "hier:int8-allreduce", "fp32-allreduce"]  # --transport applies where it fits
    with pytest.raises(LionsimError, match="cannot use transport 'hier:a2a-1bit'"):
        parse_runs(["dlion-avg@hier:a2a-1bit"])  # a vote of votes is a majority vote
    with pytest.raises(LionsimError, match="cannot use transport 'hier:int8-allreduce'.*hier: before one"):
        parse_runs(["adamw@hier:int8-allreduce"])
    with pytest.raises(LionsimError, match="a vote of node votes is a majority vote, not a avg vote"):
        TRANSPORTS.get("hier:pbit-allreduce")().check(PayloadSpec(kind="votes", numel=8, rule=MeanVote()), 8)


@pytest.mark.parametrize(("spec", "kind", "valid"), [
    ("ef-signsgd@hier:allgather-1bit", "scaled-signs", "allgather-1bit"),
    ("qsgd@hier:fp32-allreduce", "scaled-levels", "allgather-levels"),
    ("dgc@hier:allgather-1bit", "sparse", "sparse-allgather, grace-allgather"),
])
def test_a_kind_no_hierarchy_carries_is_refused_over_a_hier_name_saying_why(spec, kind, valid):
    """hier:allgather-1bit exists (it carries votes), so the name resolves: the refusal of a strategy
    whose payload no hier: form carries says why, as hier: says it of a transport carrying only such
    kinds, and offers no hier: name; the table of names (read before torch) says the same."""
    from lionsim import name_table

    why = {"scaled-signs": "a node's sum of scaled signs is neither signs nor one scale per tensor",
           "scaled-levels": "a node's sum of scaled levels has no levels of one scale per tensor",
           "sparse": "a node's pairs take as many bytes across nodes as its workers' (g k pairs, when their "
                     "indices differ), and an all-gather already crosses each node once"}[kind]
    name, _, transport = spec.partition("@")
    expected = (f"strategy '{name}' cannot use transport '{transport}': it sends {kind}, which has no hierarchical "
                f"form ({why}); valid transports: {valid}")
    for names in (None, name_table.names_from(name_table.table())):
        with pytest.raises(LionsimError) as e:
            parse_runs([spec], names=names)
        assert str(e.value) == expected
    with pytest.raises(LionsimError) as e:  # flat: no hier: offered
        parse_runs([f"{name}@fp32-allreduce"])
    assert str(e.value).endswith(f"valid transports: {valid}")


def test_overlap_follows_the_inner_transport():
    """hier:T runs on the schedules T can (its declared overlap), so a run picks the same schedule."""
    from lionsim.strategies import STRATEGIES

    for name in ("fp8-allreduce", "int8-allreduce", "a2a-1bit", "param-server"):
        assert TRANSPORTS.get(f"hier:{name}").overlap == TRANSPORTS.get(name).overlap
    for mode in ("auto", "buckets", "none"):
        overlap = OverlapConfig(mode=mode)
        for strategy, name in (("adamw", "fp8-allreduce"), ("dlion-mavo", "int8-allreduce"), ("dlion-mavo", "a2a-1bit")):
            cls = STRATEGIES.get(strategy)
            assert (overlap.schedule(TRANSPORTS.get(f"hier:{name}"), cls)
                    == overlap.schedule(TRANSPORTS.get(name), cls))


# ---- semantics --------------------------------------------------------------------------------


def reference(name: str, payload: Payload, workers: int, g: int) -> torch.Tensor:
    """hier:name the plain way: a loop over nodes combines each node's payloads, a loop over the g
    shares runs the inner transport on the M node payloads (its own simulator of M workers), and
    the result is broadcast to every worker."""
    inner, spec = TRANSPORTS.get(name)(), payload.spec
    m, n = workers // g, spec.numel
    s = share_params(n, g)
    values = torch.nn.functional.pad(payload.values, (0, g * s - n))
    nodes = [values[k * g:(k + 1) * g] for k in range(m)]  # [g, g s] each
    out = torch.zeros(g * s)
    abstain = False
    for j in range(g):
        part = slice(j * s, (j + 1) * s)
        if spec.kind == "dense":
            node = torch.stack([sum(w[part].float() for w in k) / g for k in nodes])
            node_spec = PayloadSpec(kind="dense", numel=s)
        elif spec.kind == "levels":
            node = torch.stack([sum(w[part].long() for w in k) for k in nodes])
            node_spec = PayloadSpec(kind="levels", numel=s, max_level=g * spec.max_level)
        elif forms_for(type(inner))["votes"] is VOTE_OF_VOTES:
            index = torch.arange(j * s, (j + 1) * s)
            node = torch.stack([spec.rule.result(sum(w[part].long() for w in k), g,
                                                 voted=sum((w[part] != 0).long() for w in k) > 0, index=index)
                                for k in nodes]).to(torch.int8)
            node_spec = PayloadSpec(kind="votes", numel=s, rule=shifted(spec.rule, j * s))
        else:  # exact sums, then the flat rule on their total
            total = sum(w[part].long() for k in nodes for w in k)
            voted = sum((w[part] != 0).long() for k in nodes for w in k) > 0
            out[part] = spec.rule.result(total, workers, voted=voted if spec.rule.needs_voted else None,
                                         index=torch.arange(j * s, (j + 1) * s))
            continue
        if m == 1:
            out[part] = node[0].float()
            continue
        sent = Payload(node_spec, node)
        out[part] = inner.aggregate(sent, SimComm(m))[0].float()
        abstain |= sent.spec.abstain
    return out[:n].expand(workers, -1)


def payloads(kinds: tuple[str, ...], workers: int, n: int):
    """One payload of each kind (votes under every rule), with abstentions and ties."""
    if "dense" in kinds:
        x = torch.randn(workers, n, generator=torch.Generator().manual_seed(1))
        yield Payload(PayloadSpec(kind="dense", numel=n), x)
    if "levels" in kinds:
        yield Payload(PayloadSpec(kind="levels", numel=n, max_level=3), votes(workers, n, 2).long() * 3 // 2)
    if "votes" in kinds:
        for rule in RULES:
            yield Payload(PayloadSpec(kind="votes", numel=n, rule=rule), votes(workers, n, 3))


@pytest.mark.parametrize("name", HIER)
def test_equals_the_plain_per_node_reference(name):
    t = TRANSPORTS.get("hier:" + name)()
    for workers, g in LAYOUTS:
        for payload in payloads(t.carries, workers, 2048):  # shares of whole fp8 / fp4 blocks for every M
            if payload.spec.kind == "votes" and not isinstance(payload.spec.rule, MajorityVote) \
                    and t.forms["votes"] is VOTE_OF_VOTES:
                continue  # refused (test_runs_take_hier_names_where_the_strategy_fits)
            expected = reference(name, Payload(payload.spec, payload.values.clone()), workers, g)
            got = t.aggregate(payload, SimComm(workers, g))
            assert torch.equal(got.float(), expected.float()), (name, workers, g, payload.spec)


@pytest.mark.parametrize("name", ["int8-allreduce", "packed-allreduce"])
def test_exact_sums_give_the_flat_vote_and_sums_bit_for_bit(name):
    n = 1001  # not a multiple of anything: padding cut off
    for workers, g in LAYOUTS:
        for payload in payloads(("votes", "levels"), workers, n):
            flat = TRANSPORTS.get("int8-allreduce")().aggregate(Payload(payload.spec, payload.values.clone()),
                                                                SimComm(workers))
            got = TRANSPORTS.get("hier:" + name)().aggregate(payload, SimComm(workers, g))
            assert torch.equal(got, flat), (name, workers, g, payload.spec)


def test_an_exact_float_mean_is_the_flat_mean():
    for workers, g in LAYOUTS:
        x = dyadic(workers, 1000, 4)
        got = TRANSPORTS.get("hier:fp32-allreduce")().aggregate(Payload(PayloadSpec(kind="dense", numel=1000), x),
                                                               SimComm(workers, g))
        assert torch.equal(got, x.mean(0).expand(workers, -1))


def test_a_vote_of_votes_through_a2a_is_hier_1bits_update():
    for rule in RULES[:3]:
        for workers, g in [(16, 4), (8, 2)]:
            v = votes(workers, 999, 6)
            spec = PayloadSpec(kind="votes", numel=999, rule=rule)
            ours = Payload(spec, v.clone())
            got = TRANSPORTS.get("hier:a2a-1bit")().aggregate(ours, SimComm(workers, g))
            theirs = Payload(spec, v.clone())
            assert torch.equal(got, TRANSPORTS.get("hier-1bit")().aggregate(theirs, SimComm(workers, g)))
            assert 0 < ours.extra["vote_agreement"] == theirs.extra["vote_agreement"] < 1


def test_a_lossy_mean_rounds_node_means_and_reports_its_error():
    x = torch.randn(8, 4096, generator=torch.Generator().manual_seed(5))
    payload = Payload(PayloadSpec(kind="dense", numel=4096), x)
    out = TRANSPORTS.get("hier:fp8-allreduce")().aggregate(payload, SimComm(8, 4))
    error = float((out[0] - x.mean(0)).norm() / x.mean(0).norm())
    assert payload.extra["aggregate_rel_error"] == pytest.approx(error, rel=1e-6) and 0 < error < 0.1


# ---- bytes and time ---------------------------------------------------------------------------

G, M = 4, 2
W = G * M
N = G * M * 256 * 16  # shares of whole fp8 / fp4 blocks and bytes of bits: no padding anywhere
S = N // G
INTRA, INTER = 1e11, 1e9
NET = Network(name="two-nodes", inter=Link(alpha_s=0.0, bandwidth_Bps=INTER),
              intra=Link(alpha_s=0.0, bandwidth_Bps=INTRA), workers_per_node=G, traits=IDEAL)
R = (M - 1) / M
"""A ring or pairwise exchange among p sends (p-1)/p of its buffer (all-reduce twice)."""
FLAG = 2 * R * 1  # the inner's 1-byte abstention flag, a ring all-reduce among M
PLANES = 2  # nodes of 4 votes can tie: the node votes carry their zeros (a2a-1bit's second plane)

# What one worker sends across nodes in TRANSPORT's own calls on its share of S coordinates among
# the M nodes, written from each algorithm (the transport modules' docs):
ACROSS = {
    "fp32-allreduce": 2 * R * 4 * S,                                       # ring all-reduce of fp32
    "bf16-allreduce": 2 * R * 2 * S,
    "fp8-allreduce": 2 * R * S * (1 + 4 / 256),                            # all-to-all + all-gather of codes + scales
    "fp8-e5m2-allreduce": 2 * R * S * (1 + 4 / 256),
    "fp4-allreduce": 2 * R * (S / 2 + 4 * S / 256),                        # 4-bit codes + a scale per 256
    "int8-allreduce": 2 * R * S,                                           # node sums in int8 (N <= 127)
    "packed-allreduce": 2 * R * 4 * math.ceil(S / (31 // 5)),              # 5-bit fields: sums up to +-2 M g
    "pbit-allreduce": FLAG + 2 * R * 4 * PLANES * math.ceil(S / (31 // 2)),  # counts of M votes: 2 bits
    "a2a-1bit": FLAG + R * PLANES * S / 8 + R * S * 2 / 8,                 # 2 planes up, 2 bits down (M = 2 ties)
    "allgather-1bit": FLAG + R * M * PLANES * S / 8,
    "param-server": FLAG + PLANES * S / 8,                                  # the push; the pull sends nothing
}
INSIDE_IN = {"dense": 4, "votes": 1, "levels": 1}  # bytes of a value in the intra reduce-scatter (fp32, int8 sums)
INSIDE_OUT = {"dense": 4, "votes": 1, "levels": 1}  # ... and in the intra all-gather (fp32, int8 sums or votes)
STRATEGY = {"dense": "adamw", "votes": "dlion-mavo", "levels": "lioncub-ternary"}  # levels of 1, as spec_of


def inside(kind: str) -> float:
    """What one worker sends inside its node: a pairwise reduce-scatter and a ring all-gather
    among g, (g-1)/g of g S values each."""
    return (G - 1) * S * (INSIDE_IN[kind] + INSIDE_OUT[kind])


def spec_of(kind: str) -> PayloadSpec:
    return {"dense": PayloadSpec(kind="dense", numel=N),
            "votes": PayloadSpec(kind="votes", numel=N, rule=MajorityVote()),
            "levels": PayloadSpec(kind="levels", numel=N, max_level=1)}[kind]


def test_the_closed_forms_cover_every_transport_that_takes_the_prefix():
    assert set(ACROSS) == set(HIER)


@pytest.mark.parametrize("name", HIER)
def test_bytes_inside_and_across_nodes_are_the_closed_forms_and_time_is_beta_on_them(name):
    t = TRANSPORTS.get("hier:" + name)()
    for kind in t.carries:
        priced = price_calls(plan_on(t, spec_of(kind), W, G), W, NET)
        assert priced.sent_bytes == pytest.approx(inside(kind) + ACROSS[name], rel=1e-12), kind
        assert priced.inter_bytes == pytest.approx(G * ACROSS[name], rel=1e-12), kind  # the node's g shares
        if name != "param-server":  # a server's time is its own link's load (M pushes), not a worker's bytes
            assert priced.time_s == pytest.approx(inside(kind) / INTRA + G * ACROSS[name] / INTER, rel=1e-12), kind


def test_estimate_columns_are_the_closed_forms(tmp_path):
    profile = tmp_path / "two-nodes.toml"
    profile.write_text(f"workers_per_node = {G}\n[inter]\nalpha_us = 0\nbandwidth_GBps = {INTER / 1e9}\n"
                       f"[intra]\nalpha_us = 0\nbandwidth_GBps = {INTRA / 1e9}\n")
    runs = {f"{STRATEGY['votes']}@hier:{n}": n for n in HIER if "votes" in TRANSPORTS.get("hier:" + n).carries}
    runs |= {"adamw@hier:fp8-allreduce": "fp8-allreduce", "adamw@hier:bf16-allreduce": "bf16-allreduce",
             "lioncub-ternary@hier:packed-allreduce": "packed-allreduce"}
    kinds = {strategy: kind for kind, strategy in STRATEGY.items()}
    rows = estimate(EstimateConfig(params=N, tokens_per_worker=64, workers=W, network=str(profile), traits="ideal",
                                   overlap="none", strategies=list(runs)))
    for row in rows.itertuples(index=False):
        name = runs[f"{row.strategy}@{row.transport}"]
        kind = kinds[row.strategy]
        assert row.wire_bytes == pytest.approx(inside(kind) + ACROSS[name], rel=1e-12), row.transport
        assert row.inter_bytes == pytest.approx(G * ACROSS[name], rel=1e-12), row.transport
        if name != "param-server":
            assert row.comm_s == pytest.approx(inside(kind) / INTRA + G * ACROSS[name] / INTER, rel=1e-9), row.transport


def test_a_flat_all_to_all_across_nodes_counts_what_leaves_the_node():
    """g workers each send (M-1)/M of an n-byte buffer to the other nodes through the node's one
    link: the node sends g (M-1)/M n, and that is what the inter phase's time is charged for."""
    n, net = 1e8, Network(name="x", inter=Link(alpha_s=0.0, bandwidth_Bps=INTER),
                          intra=Link(alpha_s=0.0, bandwidth_Bps=INTRA), workers_per_node=G, traits=IDEAL)
    for op, across in [("all_to_all", G * R * n), ("all_gather", R * n), ("all_reduce", 2 * R * n)]:
        cost = price(CollectiveCall(op, int(n)), W, net)
        assert cost.inter_bytes == pytest.approx(across), op
        assert sum(p.terms.bandwidth_s for p in cost.phases if p.scope != "intra") == pytest.approx(across / INTER), op


@pytest.mark.parametrize("name", HIER)
def test_wire_bytes_are_the_inner_passes_on_a_share_plus_the_intra_ones(name):
    """pack: the inner's on the share (x S / N), then its aggregate read and the gathered dtype
    written (not for fp32, gathered as is), a node vote made from the sums (vote of votes);
    unpack: the g shares of the reduce-scatter read and the node's written, the inner's."""
    t = TRANSPORTS.get("hier:" + name)()
    inner = TRANSPORTS.get(name)()
    for kind in t.carries:
        ours = t.wire_bytes(spec_of(kind), W, workers_per_node=G)
        node = t.forms[kind].node_spec(spec_of(kind), G, 0, S)
        theirs = inner.wire_bytes(node, M)
        share = S / N
        make = (1 + 1) * share if t.forms[kind] is VOTE_OF_VOTES else 0.0  # read int8 sums, write int8 votes
        back = 0.0 if kind == "dense" else (theirs.aggregate + INSIDE_OUT[kind]) * share
        assert ours.pack == pytest.approx(theirs.pack * share + make + back), kind
        assert ours.unpack == pytest.approx(INSIDE_IN[kind] * (1 + 1 / G) + theirs.unpack * share), kind
        assert ours.aggregate == (F32 if kind == "dense" else 1.0), kind


# ---- gloo -------------------------------------------------------------------------------------

TWO_NODES = """workers_per_node = 2
[inter]
alpha_us = 25.0
bandwidth_GBps = 1.17
[intra]
alpha_us = 1.0
bandwidth_GBps = 100.0
"""


@pytest.mark.slow
def test_gloo_two_ranks_as_two_nodes_of_two_train_as_the_simulator(tmp_path, capsys):
    """Each rank holds one node's 2 workers: the intra phases combine its rows, the inner
    transports run as real gloo collectives between the two nodes (one per slot)."""
    from lionsim.cli.app import main

    def cli(argv):
        try:
            main(argv)
        except SystemExit as e:
            return e.code or 0
        return 0

    net = tmp_path / "two.toml"
    net.write_text(TWO_NODES)
    runs = ["dlion-mavo@hier:int8-allreduce", "dlion-mavo@hier:a2a-1bit", "adamw@hier:fp8-allreduce",
            "lioncub-l1@hier:packed-allreduce"]
    common = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "4", "--steps", "3", "--eval-every", "100",
              "--network", str(net), *sum((["-s", r] for r in runs), [])]
    gloo = [*common, "--backend", "gloo", "--ranks", "2", "--timeout", "300", "--out", str(tmp_path / "gloo")]
    assert cli(gloo) == 0, capsys.readouterr().err
    assert cli([*common, "--compute", "measured", "--out", str(tmp_path / "sim")]) == 0
    real, sim = pd.read_csv(tmp_path / "gloo" / "steps.csv"), pd.read_csv(tmp_path / "sim" / "steps.csv")
    for transport in {r.split("@")[1] for r in runs}:
        ours = real[real["transport"] == transport].sort_values("step")["loss"].tolist()
        assert ours == sim[sim["transport"] == transport].sort_values("step")["loss"].tolist(), transport
        assert len(ours) == 3
    calls = pd.read_csv(tmp_path / "gloo" / "calls.csv")
    assert (calls[calls["transport"] == "hier:fp8-allreduce"]["collective"] == "all_to_all").any()


@pytest.mark.parametrize("name", ["hier:fp32-allreduce", "hier:int8-allreduce"])  # ops independent of M
def test_kernels_are_counted_as_one_worker_launches_them(name):
    """Each worker runs one slot's inner transport: the simulator runs all g of them, but counts
    the kernels of one (--compute DEVICE books a step's kernels), so only the intra sums (g - 1
    adds) grow with g."""
    from lionsim.timing import Clock
    from lionsim.training.counting import KernelCounter

    counted = {}
    kind = TRANSPORTS.get(name).carries[0]
    spec = PayloadSpec(kind=kind, numel=4096, rule=MajorityVote() if kind == "votes" else None)
    for g in (2, 4, 8):
        clock = Clock()
        x = dyadic(16, 4096, 7) if kind == "dense" else votes(16, 4096, 7)
        with KernelCounter(clock.counted) as kernels:
            TRANSPORTS.get(name)().aggregate(Payload(spec, x), SimComm(16, g), clock)
        counted[g] = (kernels.kernels["encode"], kernels.kernels["decode"] - (g - 1))
    assert counted[2] == counted[4] == counted[8]


def test_hier_bits_add_whole_phase_buffers_and_the_footnote_says_why_sent_is_smaller():
    """16 workers, 8 a node: bits are the fp32 node buffers (32) plus fp8's 8 (1 + 4/256) on the
    1/8 share, more than the flat fp32 all-reduce's 32, while the bytes sent (the plan's, each
    call's sent bytes by the ring/all-to-all rule) are fewer; the footnote names both parts."""
    from lionsim.network import wire_bytes
    from lionsim.transports.base import bits_on, footnote_on

    n, workers, g = 8 * 2 * 256 * 4, 16, 8
    spec = PayloadSpec(kind="dense", numel=n)
    hier, flat = TRANSPORTS.get("hier:fp8-allreduce")(), Fp32AllReduce()
    across = 8 * (1 + 4 / 256) / g
    assert bits_on(hier, spec, workers, g) == pytest.approx((32 + across, 32 + across))
    assert bits_on(flat, spec, workers, g) == (32, 32)
    sent_hier = 7 / 8 * 4 * n * 2 + 2 * (1 / 2) * (n / g) * (1 + 4 / 256)  # node all-to-all + gather, fp8 across
    plan = plan_on(hier, spec, workers, g)
    assert sum(wire_bytes(c, g if c.scope == "intra" else workers // g) for c in plan) == pytest.approx(sent_hier)
    assert sent_hier < sum(wire_bytes(c, workers) for c in flat.plan(spec, workers)) == 2 * 15 / 16 * 4 * n
    note = footnote_on(hier, spec, workers, g)
    assert note.startswith("hier:fp8-allreduce: bits add each phase's whole buffer")
    assert "32/32 for the node's" in note and f"{across:.3g}/{across:.3g} for fp8-allreduce on a worker's 1/8" in note
    assert "7/8 of each node buffer" in note and footnote_on(flat, spec, workers, g) == ""


def test_hier_int8_footnote_adds_the_widened_container_of_its_cross_node_step():
    """signSGD's votes, 8 a node: each node's vote sums (at most 8) cross the nodes as levels, so
    int8 overflows from 16 nodes on (brute force: the first m with m x 8 > 127); the note then
    says both why the bits add phases and that the cross-node step sends int32."""
    from lionsim.transports.base import footnote_on

    spec = PayloadSpec(kind="votes", numel=8 * 64, rule=MajorityVote())
    hier, g = TRANSPORTS.get("hier:int8-allreduce")(), 8
    first = next(m for m in range(2, 1000) if m * g > 127)
    below, wide = footnote_on(hier, spec, (first - 1) * g, g), footnote_on(hier, spec, first * g, g)
    assert below.startswith("hier:int8-allreduce: bits add each phase's whole buffer") and "int32" not in below
    assert wide.startswith("hier:int8-allreduce: bits add each phase's whole buffer")
    assert (f"Across the {first} nodes (each node one of int8-allreduce's workers): int8-allreduce sends "
            f"int32 (32 bits per parameter) from {first} workers on") in wide


def test_one_worker_a_node_is_the_flat_transport_its_bytes_the_closed_form():
    """hier:a2a-1bit on 8 workers one a node (the note: "a2a-1bit runs flat across the 8 workers")
    sent 4847 B a step against the flat run's 3636 and showed 2/2 bits: the shares' padding (n =
    11018 rounded to 11024) voted 0, which the inner a2a-1bit carried as abstentions in a second
    plane. Flat, a worker sends: the 1-byte abstention flag (a ring all-reduce), its (W-1)/W of
    the packed votes' all-to-all (W c bits, c = n / W rounded up to whole bytes), and of the
    all-gather of the 2-bit results (an even N can tie)."""
    from lionsim.network import wire_bytes
    from lionsim.transports.base import bits_on

    n, workers = 11018, 8
    c = 8 * math.ceil(n / (8 * workers))
    r = (workers - 1) / workers
    flat_sent = 2 * r * 1 + r * workers * c / 8 + r * workers * c * 2 / 8
    spec = PayloadSpec(kind="votes", numel=n, rule=MajorityVote())
    hier, flat = TRANSPORTS.get("hier:a2a-1bit")(), TRANSPORTS.get("a2a-1bit")()
    v = votes(workers, n, 9)
    v[v == 0] = 1  # every worker votes: no abstention anywhere
    ours, theirs = Payload(spec, v.clone()), Payload(spec, v.clone())
    assert torch.equal(hier.aggregate(ours, SimComm(workers, 1)), flat.aggregate(theirs, SimComm(workers, 1)))
    assert not ours.spec.abstain and not theirs.spec.abstain  # nobody abstained: no second plane
    assert sum(wire_bytes(call, workers) for call in plan_on(hier, ours.spec, workers, 1)) == pytest.approx(flat_sent)
    assert sum(wire_bytes(call, workers) for call in plan_on(flat, theirs.spec, workers)) == pytest.approx(flat_sent)
    assert bits_on(hier, ours.spec, workers, 1) == bits_on(flat, theirs.spec, workers) == (1, 2)


def test_the_shares_padding_is_no_abstention_across_nodes():
    """Nodes of 3 (an odd count: a node's majority never ties) whose every worker votes: the inner
    transport carries no abstention, though n = 100 is padded to 3 shares of 40."""
    spec = PayloadSpec(kind="votes", numel=100, rule=MajorityVote())
    v = votes(6, 100, 2)
    v[v == 0] = -1
    payload = Payload(spec, v)
    TRANSPORTS.get("hier:a2a-1bit")().aggregate(payload, SimComm(6, 3))
    assert not payload.spec.abstain
