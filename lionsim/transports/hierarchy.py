"""hier:TRANSPORT: any transport run as multi-GPU nodes run compressed collectives.

BytePS and other compression libraries (and ZeRO++'s hierarchical quantization) combine inside
the node first, exactly, over NVLink; compress only what crosses nodes; and gather back inside.
`hier:` before any transport's name (plug-ins' too) gives that form, with W = M nodes x g
workers (the network's workers_per_node; lionsim.backends.nodes). The n coordinates are cut into
g shares of s = 8 ceil(n / 8g), share j owned by the worker at slot j of every node:

    1. intra reduce-scatter  the node's g payloads combined exactly over the intra link: slot j
                             gets its node's combined payload of share j (an all-to-all of the
                             shares, then sums in slot order: a ring reduce-scatter's bytes)
    2. inter                 TRANSPORT on share j among the M workers at slot j, one per node,
                             carrying the node payloads (Nodes.slots): the node's g slots run at
                             once and share its inter link (scope "inter")
    3. intra all-gather      the g shares of the result, over the intra link

What a node's combined payload is depends on the payload kind and on what TRANSPORT carries
(a Form each):

    dense   the node mean (fp32 sums / g); TRANSPORT averages the M node means. An exact
            TRANSPORT (fp32-allreduce) gives the flat mean, up to the order of fp32 sums; a lossy
            one (fp8-allreduce) rounds the node means where flat rounds every worker's values, as the
            hierarchical systems do. Gathered in fp32.
    votes   where TRANSPORT carries levels (int8-allreduce, packed-allreduce): the node's exact
            vote sums, levels |S| <= g, which it sums into the flat sum S; each share's owner
            keeps S (and, on a step whose abstention flag is up under a tie rule that moves
            ties, the voter counts, a second plane) and every worker applies the vote rule:
            the flat vote bit for bit. Gathered as the sums, in the flat int8 container.
            Where it carries votes only (a2a-1bit, allgather-1bit, pbit-allreduce,
            param-server: 1-bit signs or counts of +1, no room for a sum): the node's majority,
            then TRANSPORT's majority of the M node votes: a vote of votes, not the flat vote
            (majority rule only; steps.csv vote_agreement says how often it agrees). Its tie
            coins are the coordinate's own at both levels. pbit-allreduce's fields count votes,
            not sums: hier:packed-allreduce is the same p-bit fields carrying the exact sums.
    levels  the node's exact level sums (|l| <= g L), summed by TRANSPORT: the flat sums.
    scaled-signs, scaled-levels, onebit, lowrank, sparse: none (UNCARRIED says why), so
            hier:allgather-levels, hier:compressed-allreduce, hier:lowrank-allreduce,
            hier:sparse-allgather and hier:sparseloco-allgather are refused in one line.

hier-exact and hier-1bit (lionsim.transports.hier) stay under their own names: hier-1bit gives
the update hier:a2a-1bit gives, with each node's vote coded in the rule's bits across nodes
and no second abstention flag; hier-exact sends the exact sums in ceil(log2(g + 1)) bits through
an all-to-all, where hier:int8-allreduce and hier:packed-allreduce sum them in an all-reduce.

Bytes one worker sends (calls.py sizes): intra all-to-all of its g s values (planes x the
intra dtype), TRANSPORT's own calls on s coordinates among M workers, intra all-gather of g s
results; a node sends g times its worker's inter bytes across nodes. On one worker per node
(g = 1) it is TRANSPORT itself, flat: its result, calls, bits, bytes and passes (no node phase, no
padding to shares; votes through a transport of levels still go as exact sums, one worker's
each); within one node (M = 1) there is no inter phase.
"""

from __future__ import annotations

import dataclasses
import functools
from contextlib import nullcontext
from typing import ClassVar

import torch
from torch import Tensor

from lionsim.aggregators import MajorityVote, VoteRule
from lionsim.backends import Comm
from lionsim.backends.nodes import node_layout
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import I8, TRANSPORTS, Transport, TransportBytes, ceil_div, footnote_on, section
from lionsim.transports.error import note_error
from lionsim.transports.hier_1bit import AGREEMENT, agreement
from lionsim.transports.payloads import Payload, PayloadSpec, container_dtype

PREFIX = "hier:"

LISTING = ("hier:TRANSPORT (any transport of dense, votes or levels payloads, plug-ins' too; e.g. "
           "hier:fp8-allreduce): exact sums inside each node, TRANSPORT across nodes, all-gather inside")
"""The one line `lionsim strategies` and the matrix give every hier: name, instead of listing them."""

UNCARRIED = {
    "scaled-signs": "a node's sum of scaled signs is neither signs nor one scale per tensor",
    "scaled-levels": "a node's sum of scaled levels has no levels of one scale per tensor",
    "onebit": "1-bit Adam's servers keep error feedback for their chunk of the flat N-way split, and a "
              "node's sum of scaled signs is no 1-bit payload",
    "lowrank": "PowerSGD's power iteration needs whole matrices, which a node's slots cannot split by "
               "coordinates (its factors are small already)",
    "sparse": "a node's pairs take as many bytes across nodes as its workers' (g k pairs, when their indices "
              "differ), and an all-gather already crosses each node once",
}
"""Payload kinds with no node payload a transport could carry, and why (module doc)."""


def share_params(numel: int, g: int) -> int:
    """s: coordinates of each of the g shares, whole bytes of bits."""
    return 8 * ceil_div(numel, 8 * g)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Form:
    """How one payload kind becomes a node payload, crosses nodes and comes back (module doc)."""

    exact: ClassVar[bool] = True
    """Whether the result is the flat aggregate, whatever the nodes."""
    reorders: ClassVar[bool] = False
    """Whether, not exact, it is the flat aggregate up to the order of fp32 sums over an inner transport
    that is exact and does not round (Transport.reorders)."""
    gathered_as_is: ClassVar[bool] = False
    """Whether the inner transport's result is gathered as it is (no pass turns it into the gathered dtype)."""
    pad: ClassVar[int] = 0
    """What each worker sends for the coordinates past n that round the shares up (cut off at the end)."""

    def accepts(self, inner: type[Transport], strategy: type) -> bool:
        return inner.accepts(strategy)

    def check(self, spec: PayloadSpec) -> None:
        """Raise LionsimError for a payload this form cannot carry."""

    def flags(self, spec: PayloadSpec) -> bool:
        """Whether the step starts with the abstention flag (lionsim.transports.abstain)."""
        return False

    def planes(self, spec: PayloadSpec) -> int:
        """Rows of n the intra reduce-scatter carries."""
        return 1

    def intra_dtype(self, spec: PayloadSpec, g: int) -> torch.dtype:
        raise NotImplementedError

    def send(self, payload: Payload, planes: int, dtype: torch.dtype) -> Tensor:
        """[w, planes, n] in the intra dtype: what the workers combine inside the node."""
        return payload.values.to(dtype).unsqueeze(1)

    def node_spec(self, spec: PayloadSpec, g: int, start: int, s: int) -> PayloadSpec:
        """What the inner transport carries for the share of s coordinates from `start`."""
        raise NotImplementedError

    def node_values(self, sums: Tensor, spec: PayloadSpec, g: int, start: int) -> Tensor:
        """The node payload's values from the node's sums [r, planes, s] (its slot's share)."""
        return sums.reshape(sums.shape[0], -1)

    def out_dtype(self, spec: PayloadSpec, workers: int) -> torch.dtype:
        """What the intra all-gather carries."""
        raise NotImplementedError

    def back(self, result: Tensor, spec: PayloadSpec, workers: int) -> Tensor:
        """The share's result [r, *] -> what the intra all-gather carries [r, b]."""
        return result.to(self.out_dtype(spec, workers))

    def finish(self, gathered: Tensor, spec: PayloadSpec, workers: int, s: int) -> Tensor:
        """[w, g, b] gathered -> the aggregate [w, g s] (cut to n by the caller)."""
        return gathered.reshape(gathered.shape[0], -1).float()

    def aggregate_bytes(self, spec: PayloadSpec, workers: int) -> float:
        """Bytes per parameter of the aggregate the update reads (the gathered result)."""
        return float(self.out_dtype(spec, workers).itemsize)

    def make_bytes(self, spec: PayloadSpec, g: int) -> float:
        """Bytes per coordinate of its share one worker's node_values moves (read and written)."""
        return 0.0

    def cast_bytes(self, spec: PayloadSpec, g: int) -> float:
        """Bytes per parameter one worker's cast into the intra dtype moves (none into int8)."""
        intra = self.intra_dtype(spec, g).itemsize
        return 0.0 if intra == I8 else I8 + intra

    def gathered_planes(self, spec: PayloadSpec) -> int:
        """Rows of n the intra all-gather carries."""
        return 1

    reads_inner_flag: ClassVar[bool] = False
    """Whether the step's spec records the inner transports' abstention flag (inner_flag)."""

    def inner_flag(self, spec: PayloadSpec, flag: bool) -> PayloadSpec:
        """The step's spec once the inner transports ran (`flag`: whether any raised theirs)."""
        return spec

    def after(self, payload: Payload, out: Tensor, comm: Comm) -> None:
        """What the step reports besides the result (payload.extra)."""


class Dense(Form):
    exact = False  # the fp32 sums run in another order, and a lossy inner rounds node means
    reorders = True  # over an exact inner that does not round: the flat mean, summed node by node
    gathered_as_is = True

    def cast_bytes(self, spec: PayloadSpec, g: int) -> float:
        return 0.0  # the fp32 payload is what the reduce-scatter reads

    def after(self, payload: Payload, out: Tensor, comm: Comm) -> None:
        note_error(payload, out, comm)  # how far from the exact mean

    def intra_dtype(self, spec: PayloadSpec, g: int) -> torch.dtype:
        return torch.float32

    def node_spec(self, spec: PayloadSpec, g: int, start: int, s: int) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=s)

    def node_values(self, sums: Tensor, spec: PayloadSpec, g: int, start: int) -> Tensor:
        return sums[:, 0] / g

    def out_dtype(self, spec: PayloadSpec, workers: int) -> torch.dtype:
        return torch.float32


class Levels(Form):
    """Exact level sums (|l| <= L) for a transport that sums levels."""

    def intra_dtype(self, spec: PayloadSpec, g: int) -> torch.dtype:
        return container_dtype(g * spec.max_level)

    def node_spec(self, spec: PayloadSpec, g: int, start: int, s: int) -> PayloadSpec:
        return PayloadSpec(kind="levels", numel=s, max_level=g * spec.max_level)

    def out_dtype(self, spec: PayloadSpec, workers: int) -> torch.dtype:
        return container_dtype(workers * spec.max_level)


class VoteSums(Form):
    """Votes as exact node sums, carried as levels: the flat vote."""

    def flags(self, spec: PayloadSpec) -> bool:
        return spec.rule.needs_voted  # as int8-allreduce: only a tie rule tells a tie from nobody voting

    def planes(self, spec: PayloadSpec) -> int:
        return 2 if spec.abstain else 1

    def intra_dtype(self, spec: PayloadSpec, g: int) -> torch.dtype:
        return container_dtype(g)

    def send(self, payload: Payload, planes: int, dtype: torch.dtype) -> Tensor:
        return vote_planes(payload.values, planes, dtype)

    def node_spec(self, spec: PayloadSpec, g: int, start: int, s: int) -> PayloadSpec:
        return PayloadSpec(kind="levels", numel=self.planes(spec) * s, max_level=g)  # sums, then voter counts

    def out_dtype(self, spec: PayloadSpec, workers: int) -> torch.dtype:
        return container_dtype(workers)

    def gathered_planes(self, spec: PayloadSpec) -> int:
        return self.planes(spec)  # the sums, then the voter counts

    def finish(self, gathered: Tensor, spec: PayloadSpec, workers: int, s: int) -> Tensor:
        w, g = gathered.shape[:2]
        planes = gathered.reshape(w, g, self.planes(spec), s).transpose(1, 2).reshape(w, self.planes(spec), g * s)
        voted = planes[:, 1] > 0 if spec.abstain else None
        return spec.rule.result(planes[:, 0], workers, voted=voted)  # indices 0..gs-1: the global ones

    def aggregate_bytes(self, spec: PayloadSpec, workers: int) -> float:
        # the sums: the update applies the rule, as with int8-allreduce
        return float(self.out_dtype(spec, workers).itemsize)


class VoteOfVotes(Form):
    """Votes as each node's majority, for a transport that carries votes only."""

    exact = False
    pad = 1  # a vote, as a2a-1bit pads: a zero there is a node abstaining, which raised the inner flag (2 bits up)

    def accepts(self, inner: type[Transport], strategy: type) -> bool:
        return isinstance(getattr(strategy, "rule", None), MajorityVote) and inner.accepts(strategy)

    def check(self, spec: PayloadSpec) -> None:
        if not isinstance(spec.rule, MajorityVote):
            raise LionsimError(f"a vote of node votes is a majority vote, not a {spec.rule.name} vote; use "
                               "hier:int8-allreduce or hier-exact (the flat vote, counted by node)")

    def planes(self, spec: PayloadSpec) -> int:
        return 2 if spec.rule.needs_voted else 1  # a node with nobody voting is not a tie

    def intra_dtype(self, spec: PayloadSpec, g: int) -> torch.dtype:
        return container_dtype(g)

    def send(self, payload: Payload, planes: int, dtype: torch.dtype) -> Tensor:
        return vote_planes(payload.values, planes, dtype)

    def node_spec(self, spec: PayloadSpec, g: int, start: int, s: int) -> PayloadSpec:
        # a node's vote is 0 where it ties (even g under sign(0) = 0) or nobody in it voted: the
        # inner transport then carries its abstentions (priced so wherever a node can tie, as
        # hier-1bit prices its node votes; the step records whether any slot's flag went up)
        ties = spec.rule.levels(g) > 2
        return PayloadSpec(kind="votes", numel=s, rule=shifted(spec.rule, start), abstain=spec.abstain or ties)

    def node_values(self, sums: Tensor, spec: PayloadSpec, g: int, start: int) -> Tensor:
        voted = sums[:, 1] > 0 if self.planes(spec) == 2 else None
        index = start + torch.arange(sums.shape[-1], device=sums.device)
        return spec.rule.result(sums[:, 0], g, voted=voted, index=index).to(torch.int8)

    def out_dtype(self, spec: PayloadSpec, workers: int) -> torch.dtype:
        return torch.int8

    def make_bytes(self, spec: PayloadSpec, g: int) -> float:
        return container_dtype(g).itemsize + I8  # read the node sums, write its votes

    reads_inner_flag = True

    def inner_flag(self, spec: PayloadSpec, flag: bool) -> PayloadSpec:
        return dataclasses.replace(spec, abstain=flag)  # the node votes carried their zeros

    def after(self, payload: Payload, out: Tensor, comm: Comm) -> None:
        payload.extra[AGREEMENT] = agreement(out[0], payload, comm)


def vote_planes(votes: Tensor, planes: int, dtype: torch.dtype) -> Tensor:
    """[w, planes, n]: the votes, then (2 planes) where each worker voted, to be summed."""
    rows = [votes] + ([voted_plane(votes)] if planes == 2 else [])
    return torch.stack([r.to(dtype) for r in rows], 1)


def shifted(rule: VoteRule, start: int) -> VoteRule:
    """`rule` for a share from coordinate `start`: its ties take the coordinate's own coin."""
    tie = getattr(rule, "tie", None)
    if tie is None or not start:
        return rule
    return type(rule)(dataclasses.replace(tie, offset=tie.offset + start))


DENSE, LEVELS, VOTE_SUMS, VOTE_OF_VOTES = Dense(), Levels(), VoteSums(), VoteOfVotes()


def forms_for(inner: type[Transport]) -> dict[str, Form]:
    """The payload kinds hier:inner carries, each with its form (module doc)."""
    carries = inner.carries
    out: dict[str, Form] = {}
    if "dense" in carries:
        out["dense"] = DENSE
    if "levels" in carries:
        out["votes"], out["levels"] = VOTE_SUMS, LEVELS
    elif "votes" in carries:
        out["votes"] = VOTE_OF_VOTES
    return out


class Hierarchy(Transport):
    """hier:inner (module doc); made for each inner transport by `hierarchy_of`."""

    inner: ClassVar[type[Transport]]
    forms: ClassVar[dict[str, Form]]
    hierarchical = True

    @classmethod
    def accepts(cls, strategy: type) -> bool:
        form = cls.forms.get(strategy.payload_kind)
        return form is not None and form.accepts(cls.inner, strategy)

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        form = self.forms[spec.kind]
        form.check(spec)
        # a node per worker: the most nodes, so the widest sums the inner transport must hold
        self.inner().check(form.node_spec(spec, 1, 0, share_params(spec.numel, 1)), workers)

    def flat(self, spec: PayloadSpec, g: int) -> bool:
        """Whether this is TRANSPORT itself, flat (module doc): one worker a node, on a payload TRANSPORT
        carries as it is (votes through a transport of levels still go as the node's exact sums)."""
        return g < 2 and spec.kind in self.inner().carries

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        form, inner = self.forms[payload.spec.kind], self.inner()
        self.check(payload.spec, comm.world_size)
        nodes = comm.nodes()
        if self.flat(payload.spec, nodes.size):
            return inner.aggregate(payload, comm, clock)
        g, m, workers, n = nodes.size, nodes.count, comm.world_size, payload.spec.numel
        s = share_params(n, g)
        if form.flags(payload.spec):
            with section(clock, "collective"):
                settle(payload, comm)
        spec = payload.spec
        planes, dtype = form.planes(spec), form.intra_dtype(spec, g)
        with section(clock, "encode"):
            x = torch.nn.functional.pad(form.send(payload, planes, dtype), (0, g * s - n), value=form.pad)  # [w, planes, g s]
            x = x.reshape(x.shape[0], planes, g, s).transpose(1, 2).contiguous()  # [w, g, planes, s]: share j to slot j
        with section(clock, "collective"):
            mine = nodes.intra.all_to_all(x)  # my share from each worker of my node
        with section(clock, "decode"):
            sums = mine[:, 0].clone()
            for q in range(1, g):  # in slot order, so every backend adds alike
                sums += mine[:, q]
        results, inner_abstain = None, False
        for i, place in enumerate(nodes.slots):  # slot j's inner transport among the nodes, on share j
            # each worker runs one slot: the slots after the first are timed, their kernels not counted again
            with clock.replica() if clock is not None and i else nullcontext():
                rows = place.rows.to(sums.device)
                start = int(nodes.slot[place.rows[0]]) * s
                node_spec = form.node_spec(spec, g, start, s)
                with section(clock, "encode"):
                    node = Payload(spec=node_spec, values=form.node_values(sums[rows], spec, g, start))
                if m > 1:
                    inner.check(node_spec, m)
                    out = inner.aggregate(node, place.comm, clock)
                    inner_abstain |= node.spec.abstain
                else:  # one node: its combined payload is the result
                    out = node.values
                with section(clock, "encode"):
                    back = form.back(out, spec, workers)
                    if results is None:
                        results = back.new_empty(x.shape[0], back.shape[1])
                    results[rows] = back
        if form.reads_inner_flag:  # priced by what any slot's inner transport carried, on every rank alike (untimed)
            flag = bool(comm.max_over_ranks(torch.tensor([float(inner_abstain)]))[0])
            payload.spec = spec = form.inner_flag(spec, flag)
        with section(clock, "collective"):
            every = nodes.intra.all_gather(results)  # [w, g, b]: the node's g shares
        with section(clock, "decode"):
            out = form.finish(every, spec, workers, s)[:, :n]
        form.after(payload, out, comm)
        return out

    def plan(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> list[CollectiveCall]:
        form = self.forms[spec.kind]
        g, m = node_layout(workers, workers_per_node)
        if self.flat(spec, g):
            return self.inner().plan(spec, workers)
        s = share_params(spec.numel, g)
        intra = form.intra_dtype(spec, g)
        out = form.out_dtype(spec, workers)
        calls = [FLAG_CALL] if form.flags(spec) else []
        calls.append(CollectiveCall("all_to_all", form.planes(spec) * g * s * intra.itemsize, "node reduce-scatter",
                                    scope="intra", dtype=dtype_name(intra)))
        if m > 1:
            node = form.node_spec(spec, g, 0, s)
            calls += [dataclasses.replace(c, scope="inter") for c in self.inner().plan(node, m)]
        calls.append(CollectiveCall("all_gather", g * form.gathered_planes(spec) * s * out.itemsize, "node all-gather",
                                    scope="intra", dtype=dtype_name(out)))
        return calls

    def bits_per_param(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> tuple[float, float]:
        """Up: the intra reduce-scatter's buffer (none on a flat network), plus the inner
        transport's up on this worker's share; down: the inner's down on the share, plus the
        gathered result (none on a flat network). Each phase's buffer counts whole, as a flat
        all-reduce's counts once (fp32-allreduce: 32/32) though a ring forwards 2 (N-1)/N of it:
        so the bits can exceed a flat run's while the bytes sent are fewer (footnote). One worker a
        node: the inner transport's, flat."""
        if self.flat(spec, node_layout(workers, workers_per_node)[0]):
            return self.inner().bits_per_param(spec, workers)
        (intra_up, intra_down), (inner_up, inner_down) = self.phase_bits(spec, workers, workers_per_node)
        return intra_up + inner_up, intra_down + inner_down

    def phase_bits(self, spec: PayloadSpec, workers: int,
                   workers_per_node: int = 1) -> tuple[tuple[float, float], tuple[float, float]]:
        """((up, down) inside the node, (up, down) across nodes), bits per parameter of the payload."""
        form = self.forms[spec.kind]
        g, m = node_layout(workers, workers_per_node)
        s, n = share_params(spec.numel, g), spec.numel
        intra = across = (0.0, 0.0)
        if g > 1:
            intra = (8.0 * form.planes(spec) * form.intra_dtype(spec, g).itemsize * g * s / n,
                     8.0 * form.gathered_planes(spec) * form.out_dtype(spec, workers).itemsize * g * s / n)
        if m > 1:
            node = form.node_spec(spec, g, 0, s)
            inner_up, inner_down = self.inner().bits_per_param(node, m)
            across = (inner_up * node.numel / n, inner_down * node.numel / n)
        return intra, across

    def footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """bench's note (its table has a bits column): note(bits=True)."""
        return self.note(spec, workers, workers_per_node, bits=True)

    def estimate_footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """estimate's note (its table shows across, no bits): note(bits=False)."""
        return self.note(spec, workers, workers_per_node, bits=False)

    def note(self, spec: PayloadSpec, workers: int, workers_per_node: int, *, bits: bool) -> str:
        """On one worker per node, that the two levels collapse to one (the inner transport, flat).
        Else, where the table has a bits column (`bits`: bench's), why it can read more than a flat
        run's while sent reads less: it adds the phases' buffers whole; sent is what they move,
        (g-1)/g of each buffer inside the node. Without one (estimate's, which shows across), why
        sent can read more than a flat run's while across reads less. Then the inner transport's own
        note on its cross-node step, where it has one (int8-allreduce's container widened: the node
        sums it carries overflow int8 at fewer nodes than workers)."""
        g, m = node_layout(workers, workers_per_node)
        if g < 2:  # one worker a node: no node level, the two levels collapse to one
            flat = footnote_on(self.inner(), spec, workers, bits=bits)
            if workers < 2:
                return flat
            note = (f"{self.name}: one worker per node on this network, so the two levels collapse to one: "
                    f"{self.inner().name} runs flat across the {workers} workers (nothing inside a node).")
            return f"{note} {flat}" if flat else note
        (intra_up, intra_down), (inner_up, inner_down) = self.phase_bits(spec, workers, workers_per_node)
        if bits:
            note = (f"{self.name}: bits add each phase's whole buffer, as a flat all-reduce counts its one buffer "
                    f"(32/32 in fp32): {intra_up:.3g}/{intra_down:.3g} for the node's reduce-scatter and all-gather, "
                    f"{inner_up:.3g}/{inner_down:.3g} for {self.inner().name} on a worker's 1/{g} share across "
                    f"nodes; sent counts the bytes the phases move ({g - 1}/{g} of each node buffer), so it can be "
                    "less than a flat run's while bits are more.")
        else:
            note = (f"{self.name}: sent adds what every phase moves, the node's reduce-scatter and all-gather "
                    f"inside the node ({g - 1}/{g} of each node buffer) and {self.inner().name} on a worker's 1/{g} "
                    "share across nodes, so it can be more than a flat run's while across (what a node's inter "
                    "link carries) is less.")
        if m < 2:
            return note
        node = self.forms[spec.kind].node_spec(spec, g, 0, share_params(spec.numel, g))
        across = footnote_on(self.inner(), node, m, bits=bits)  # its "workers" are the m nodes, each carrying its node's sums
        if not across:
            return note
        return f"{note} Across the {m} nodes (each node one of {self.inner().name}'s workers): {across}"

    def wire_bytes(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> TransportBytes | None:
        """The inner transport's passes on a worker's share (its bytes per parameter x the share)
        plus the wrapper's own (module doc): the intra combine (read the g shares, write the
        node's), making the node payload, turning the share's result into what the intra gather
        carries; the gathered result is the aggregate."""
        form = self.forms[spec.kind]
        g, m = node_layout(workers, min(workers_per_node, workers))
        if self.flat(spec, g):
            return self.inner().wire_bytes(spec, workers)
        n, s = spec.numel, share_params(spec.numel, g)
        share = s / n
        node = form.node_spec(spec, g, 0, s)
        scale = node.numel / n  # the inner's bytes are per parameter of its payload
        intra = float(form.intra_dtype(spec, g).itemsize)
        out = float(form.out_dtype(spec, workers).itemsize)
        pack = form.cast_bytes(spec, g)
        unpack = intra + intra / g if g > 1 else 0.0  # read my share from g workers, write the node's
        pack += form.make_bytes(spec, g) * share
        if m > 1:
            inner = self.inner().wire_bytes(node, m)
            if inner is None:
                return None
            pack += inner.pack * scale
            unpack += inner.unpack * scale
            result = inner.aggregate * scale
        else:
            result = intra * scale
        if not form.gathered_as_is:  # the inner's aggregate of my share -> the gathered dtype
            pack += result + out * scale
        return TransportBytes(pack=pack, unpack=unpack, aggregate=form.aggregate_bytes(spec, workers))


@functools.cache
def hierarchy_of(inner: type[Transport]) -> type[Transport]:
    """The class of hier:inner (module doc), made once per inner class."""
    name = PREFIX + inner.name
    if inner.hierarchical:
        raise LionsimError(f"transport {name!r}: {inner.name} is hierarchical already; hier: takes a flat transport")
    forms = forms_for(inner)
    if not forms:
        why = "; ".join(f"{kind}: {UNCARRIED[kind]}" for kind in inner.carries if kind in UNCARRIED)
        why = why or "it carries " + ", ".join(inner.carries)
        raise LionsimError(f"transport {name!r} has no hierarchical form ({why})")
    exact = inner.exact and all(form.exact for form in forms.values())
    attrs = {
        "name": name, "inner": inner, "forms": forms, "carries": tuple(forms),
        "exact": exact, "rounds": inner.rounds,
        "reorders": not exact and inner.exact and not inner.rounds
                    and all(form.exact or form.reorders for form in forms.values()),
        "kernels": inner.kernels, "__doc__": __doc__,
        "summary": f"{inner.name} across nodes on each node's exactly combined payload (intra reduce-scatter, "
                   "inter, intra all-gather)",
        "__module__": __name__,
    }
    if hasattr(inner, "overlap"):  # a transport's own overlap declaration: the hierarchy runs as it does
        attrs["overlap"] = inner.overlap
    return type(f"Hier_{inner.__name__}", (Hierarchy,), attrs)


def make(inner_name: str) -> tuple[str, type[Transport]]:
    """TRANSPORTS' maker for `hier:INNER` (lionsim.registry prefix)."""
    try:
        inner = TRANSPORTS.canonical(inner_name)
    except LionsimError:
        raise LionsimError(f"unknown transport {PREFIX + inner_name!r}: hier: takes any transport; choose from: "
                           f"{', '.join(TRANSPORTS.names())}") from None
    return PREFIX + inner, hierarchy_of(TRANSPORTS.get(inner))


TRANSPORTS.prefix(PREFIX, make)
