"""hier:TRANSPORT on a real gloo group of 2 ranks, for every way 2 ranks and their workers can
sit in nodes, against the simulator of the same workers (the inner transports run among the
ranks holding a slot: lionsim.backends.dist_nodes, Nodes.slots)."""

import torch

from lionsim.aggregators import MajorityVote, TieBreak
from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

WORLD = 2
LAYOUTS = [(1, 2), (2, 2), (2, 1), (4, 2)]
"""(workers per rank, workers per node): one node over both ranks; every rank a node; 2 nodes of
one worker in every rank; 2 nodes of 2 in every rank."""
N = 1000
RULE = MajorityVote(TieBreak("random", seed=3, step=2))


def payload(name: str, rank: int, rows: int) -> Payload:
    """Rank `rank`'s rows of the workers' payloads (the same generator as the simulator's)."""
    g = torch.Generator().manual_seed(10 * rank + rows)
    kind = TRANSPORTS.get(name).carries[0]
    if kind == "dense":
        return Payload(PayloadSpec(kind="dense", numel=N), torch.randn(rows, N, generator=g))
    levels = torch.randint(-1, 2, (rows, N), generator=g).to(torch.int8)  # a third are zero (abstain)
    if kind == "levels":
        return Payload(PayloadSpec(kind="levels", numel=N, max_level=1), levels)
    return Payload(PayloadSpec(kind="votes", numel=N, rule=RULE), levels)


TRANSPORTS_RUN = ["hier:int8-allreduce", "hier:a2a-1bit", "hier:fp8-allreduce", "hier:param-server",
                  "hier:pbit-allreduce"]


def rank_main(rank: int):
    results = {}
    for w, per_node in LAYOUTS:
        comm = ProcessGroupComm(None, local_workers=w, workers_per_node=per_node)
        for name in TRANSPORTS_RUN:
            sent = payload(name, rank, w)
            results[(w, per_node, name)] = (TRANSPORTS.get(name)().aggregate(sent, comm), sent.spec.abstain)
        results[(w, per_node, "scopes")] = {c.scope for c in comm.take_log()}
    return results


def test_every_layout_of_two_ranks_equals_the_simulator(gloo_group):
    ranks = gloo_group(WORLD).run(rank_main)
    for w, per_node in LAYOUTS:
        workers = WORLD * w
        for name in TRANSPORTS_RUN:
            parts = [payload(name, r, w) for r in range(WORLD)]
            sim = Payload(parts[0].spec, torch.cat([p.values for p in parts]))
            expected = TRANSPORTS.get(name)().aggregate(sim, SimComm(workers, per_node))
            got = torch.cat([ranks[r][(w, per_node, name)][0] for r in range(WORLD)])
            assert torch.equal(got, expected), (w, per_node, name)
            assert all(ranks[r][(w, per_node, name)][1] == sim.spec.abstain for r in range(WORLD)), (w, per_node, name)
        g = min(per_node, workers)
        scopes = ({"intra"} if g > w else set()) | ({"inter"} if workers > g else set())
        if g == 1:  # one worker a node: hier: hands over to the inner transport, flat over the world
            scopes = {"world"}
        assert scopes <= ranks[0][(w, per_node, "scopes")], (w, per_node)  # real calls where groups span ranks
