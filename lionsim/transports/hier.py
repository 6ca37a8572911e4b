"""Hierarchical vote transports: count inside each node first, then across nodes.

W = M nodes x g workers (the network's workers_per_node; lionsim.backends.nodes). The n votes
are padded to W c (c = n / W rounded up to whole bytes) and split twice: node chunk j (M c
votes) belongs to slot j of every node, and within it sub-chunk k (c votes) to the worker at
slot j of node k, so every worker owns one block of c coordinates:

    1. intra all-to-all   packed 1-bit votes (and, on an abstention step, the voted bitmap):
                          slot j receives its node chunk from the node's g workers and counts
                          them, exactly: node sums in -g..g                      (intra link)
    2. inter all-to-all   each node's summary of sub-chunk k, packed in `node_bits` bits, to
                          node k's worker at the same slot                       (inter link)
    3. combine            the M summaries of the block -> the update direction's code, in the
                          vote rule's downlink bits
    4. inter all-gather   the node chunk's codes, from every node               (inter link)
    5. intra all-gather   every node chunk, from the node's g slots             (intra link)

The inter phases run on every slot at once, each on 1/g of the data, so the g workers of a node
share its inter link (lionsim.network.topology, scope "inter"). What a node sends in step 2 and
how step 3 combines it is the one difference between hier-exact (exact sums: equals the flat
vote) and hier-1bit (each node's majority: a vote of votes). As in a2a-1bit, a step starts with
the 1-byte abstention flag (lionsim.transports.abstain), the padding votes +1 and is cut off.
"""

from __future__ import annotations

from abc import abstractmethod

import torch
from torch import Tensor

from lionsim.aggregators import VoteRule
from lionsim.aggregators.bitslice import vote_sum_packed
from lionsim.backends import Comm
from lionsim.backends.nodes import node_layout
from lionsim.network.calls import CollectiveCall
from lionsim.compute.kernel_ops import Op
from lionsim.packing import (pack_bools, pack_codes, pack_codes_passes, pack_signs, pack_signs_passes, packed_size,
                             unpack_bools_passes, unpack_codes, unpack_codes_passes)
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.a2a_1bit import chunk_params
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import I8, Transport, TransportBytes, section, sum_bytes
from lionsim.transports.payloads import Payload, PayloadSpec


class HierarchicalVote(Transport):
    carries = ("votes",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # node counts and their combination are per coordinate
    hierarchical = True

    @abstractmethod
    def node_bits(self, rule: VoteRule, g: int, abstain: bool) -> int:
        """Bits per coordinate of a node's summary (step 2)."""

    @abstractmethod
    def summarize(self, node_sum: Tensor, voted: Tensor | None, rule: VoteRule, g: int, index: Tensor,
                  abstain: bool) -> Tensor:
        """A node's codes (step 2) from its exact sums [w, k] (voted: where anyone in it voted,
        on abstention steps)."""

    @abstractmethod
    def combine(self, codes: Tensor, rule: VoteRule, g: int, m: int, index: Tensor, abstain: bool) -> Tensor:
        """M nodes' codes [w, M, c] -> the result's downlink codes [w, c] (step 3)."""

    @abstractmethod
    def result_levels(self, rule: VoteRule, g: int, m: int, abstain: bool) -> tuple[int, bool]:
        """(bits, abstain) the rule encodes and decodes the result with, on `rule`'s downlink."""

    def footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """On one worker per node, that the two levels collapse to one (hier:'s note, lionsim.transports.
        hierarchy), and why its local work is still more than a2a-1bit's: unlike hier:, which runs its
        inner transport flat there, the node phase runs on a node of one (wire_bytes, kernel_ops at g = 1)."""
        if workers < 2 or min(workers_per_node, workers) > 1:
            return ""
        return (f"{self.name}: one worker per node on this network, so the two levels collapse to one: each node's "
                "vote is its one worker's, and the result is the flat vote; each worker still runs the node phase "
                "on its own votes (packs them, counts them as a node of one, codes the count), so encode and decode "
                "cost more than a2a-1bit's, which gives the same vote flat.")

    def voters(self, g: int, m: int) -> int:
        """The vote count the result's code is decoded for (N for a flat vote)."""
        return g * m

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        nodes = comm.nodes()
        g, m, workers = nodes.size, nodes.count, comm.world_size
        with section(clock, "collective"):
            abstain = settle(payload, comm)
        spec, rule = payload.spec, payload.spec.rule
        c = chunk_params(spec.numel, workers)
        device = payload.values.device
        block = (nodes.slot.to(device) * m + nodes.node.to(device))[:, None] * c + torch.arange(c, device=device)
        with section(clock, "encode"):
            votes = payload.values
            pad = c * workers - spec.numel
            if pad:  # padding votes +1, so it never abstains; it is cut off at the end
                votes = torch.nn.functional.pad(votes, (0, pad), value=1)
            rows = votes.shape[0]
            packed = pack_signs(votes).reshape(rows, g, m * c // 8)  # [w, g, Mc/8]: node chunk j to slot j
            if abstain:
                voted = pack_bools(voted_plane(votes)).reshape(rows, g, m * c // 8)
                packed = torch.cat([packed, voted], -1)  # [w, g, Mc/4]
        with section(clock, "collective"):
            mine = nodes.intra.all_to_all(packed)  # my node chunk from each of the node's workers
        with section(clock, "decode"):
            voted = mine[..., m * c // 8:] if abstain else None
            node_sum, node_voted = vote_sum_packed(mine[..., : m * c // 8], m * c, g, voted)  # [w, Mc] in -g..g
        bits = self.node_bits(rule, g, abstain)
        with section(clock, "encode"):
            chunk_index = (nodes.slot.to(device) * m * c)[:, None] + torch.arange(m * c, device=device)
            codes = self.summarize(node_sum, node_voted, rule, g, chunk_index, abstain)
            codes = pack_codes(codes.reshape(rows, m, c), bits)  # [w, M, c bits/8]: sub-chunk k to node k
        with section(clock, "collective"):
            theirs = nodes.inter.all_to_all(codes)  # my block's summary from every node
        down, down_abstain = self.result_levels(rule, g, m, abstain)
        with section(clock, "decode"):
            summaries = unpack_codes(theirs, c, bits)  # [w, M, c]
        with section(clock, "encode"):
            result = pack_codes(self.combine(summaries, rule, g, m, block, abstain), down)  # [w, c down/8]
        with section(clock, "collective"):
            chunk = nodes.intra.all_gather(nodes.inter.all_gather(result).reshape(rows, -1))  # [w, g, M c down/8]
        with section(clock, "decode"):
            codes = unpack_codes(chunk.reshape(rows, workers, -1), c, down)  # [w, W blocks, c]
            out = rule.decode(codes, self.voters(g, m), down_abstain)
            return out.reshape(rows, -1)[:, : spec.numel]

    def plan(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> list[CollectiveCall]:
        g, m = node_layout(workers, workers_per_node)
        c = chunk_params(spec.numel, workers)
        planes = 2 if spec.abstain else 1
        down = self.result_levels(spec.rule, g, m, spec.abstain)[0]
        return [
            FLAG_CALL,
            CollectiveCall("all_to_all", planes * workers * c // 8, "votes", scope="intra", dtype="uint8"),
            CollectiveCall("all_to_all", m * packed_size(c, self.node_bits(spec.rule, g, spec.abstain)),
                           "node summaries", scope="inter", dtype="uint8"),
            CollectiveCall("all_gather", m * packed_size(c, down), "result codes", scope="inter", dtype="uint8"),
            CollectiveCall("all_gather", g * m * packed_size(c, down), "result codes", scope="intra", dtype="uint8"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> tuple[float, float]:
        """Up: the votes inside the node (none on a flat network), plus this worker's 1/g share of
        its node's summary; down: the result's code (the flag byte is per step: wire_bytes and
        comm_s count it)."""
        g, m = node_layout(workers, workers_per_node)
        planes = 2.0 if spec.abstain else 1.0
        up = (planes if g > 1 else 0.0) + (self.node_bits(spec.rule, g, spec.abstain) / g if m > 1 else 0.0)
        return up, float(self.result_levels(spec.rule, g, m, spec.abstain)[0])

    def wire_bytes(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> TransportBytes:
        """g workers per node: a worker packs all its votes, counts its node chunk (n/g) and packs
        its summaries, combines its block (n/N)."""
        g = min(workers_per_node, workers)
        bits = spec.rule.bits_down(workers)
        s = sum_bytes(workers)
        # votes -> bits (read 1, write 1/8); the chunk's sums -> summaries (at most a byte each);
        # the block's combined codes (read sums, write codes)
        pack = I8 + 1 / 8 + (s + I8) / g + (s + bits / 8) / workers
        # the node's bits of my chunk (n/8 in all) -> sums; M summaries of my block -> its sum;
        # every block's codes -> the int8 results
        unpack = 1 / 8 + s / g + (I8 + s) / workers + bits / 8 + I8
        return TransportBytes(pack=pack, unpack=unpack, aggregate=I8, **self.kernel_ops(spec, workers, g))

    def kernel_ops(self, spec: PayloadSpec, workers: int, g: int) -> dict:
        """The GPU path's kernels (aggregate above), per parameter of one worker, as a2a-1bit's: its
        votes packed, its node chunk (n/g) counted, summarized and packed, its block (n/N) combined
        and packed, every block's codes unpacked and decoded. summarize and combine are counted as
        the vote rule's encode (what they run but for the node's levels)."""
        rule, n, m = spec.rule, workers, max(1, workers // max(g, 1))
        node, down = self.node_bits(rule, g, False), self.result_levels(rule, g, m, False)[0]
        signs, sign_ops = pack_signs_passes(I8)
        encode, encode_ops = rule.encode_passes(workers)
        node_codes, node_ops = pack_codes_passes(node, in_bytes=8)
        down_codes, down_ops = pack_codes_passes(down, in_bytes=8)
        unpacked, unpack_ops = unpack_bools_passes()
        summaries, summary_ops = unpack_codes_passes(node)
        codes_out, codes_out_ops = unpack_codes_passes(down)
        decode, decode_ops = rule.decode_passes(workers)
        pack = [Op("pack-signs", signs, "int8 votes -> bits", sign_ops),
                Op("pack-codes", (encode + node_codes) / g, "my node chunk's sums -> summaries -> bits",
                   encode_ops + node_ops),
                Op("pack-codes", (encode + down_codes) / n, "my block's M summaries combined -> codes -> bits",
                   encode_ops + down_ops)]
        if spec.numel % (8 * workers):  # padded to whole bytes per block: F.pad copies the votes
            pack.insert(0, Op("cast", 2 * I8, "pad the int8 votes to a multiple of 8N (read 1, write 1)"))
        unpack = (Op("unpack-signs", unpacked + I8 + 20 / g, "the node's bits of my chunk -> bools, summed to int32, "
                     "x 2 - g", unpack_ops + 3),
                  Op("unpack-codes", summaries / g, "the M nodes' summaries of my block -> int64", summary_ops),
                  Op("unpack-codes", codes_out + decode, "every block's codes -> int64 -> the float32 result",
                     codes_out_ops + decode_ops))
        return dict(pack_ops=tuple(pack), unpack_ops=unpack, decoded=4.0)
