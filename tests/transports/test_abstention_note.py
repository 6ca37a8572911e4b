"""bench's line under its table for a run whose payload held zeros on some steps (sign(0) = 0 in a
scaled-signs payload; a vote's abstention): how many steps, and the abstention bitmap's bits they
cost, which the bits column averages in (lionsim.transports.abstain.abstention_note)."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from lionsim.aggregators import MajorityVote
from lionsim.transports import TRANSPORTS, PayloadSpec
from lionsim.transports.abstain import abstention_note
from tests.helpers.cli import run_cli

ZEROS = '''
import torch
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import Hyper
from lionsim.transports import Payload, PayloadSpec


@STRATEGIES.register("odd-zeros")
class OddZeros(Strategy):
    """Scaled signs of the gradient, with a 0 sign at position 0 on its odd steps."""

    name = "odd-zeros"
    summary = "scaled signs with a zero sign on odd steps (a test's plug-in)"
    payload_kind = "scaled-signs"
    default_transport = "allgather-1bit"
    defaults = Hyper(lr=0.01, weight_decay=0.0, betas=(0.0, 0.0))
    bytes = StrategyBytes(F32, 2 * F32, "rule reads g; update reads p, writes p")

    def __init__(self, cfg, layout, comm):
        super().__init__(cfg, layout, comm)
        self.steps = 0

    def payload_spec(self):
        return PayloadSpec(kind="scaled-signs", numel=self.layout.numel, segments=self.layout.segments)

    def encode(self, grads, params, comm, clock):
        self.steps += 1
        signs = torch.where(grads >= 0, 1, -1).to(torch.int8)
        if self.steps % 2:
            signs[:, 0] = 0
        scales = self.layout.segment_mean(grads.abs())
        return Payload(self.payload_spec(), signs, scales=scales, segment_ids=self.layout.segment_ids)

    def apply(self, params, aggregate):
        params.sub_(aggregate[0], alpha=self.hyper.lr)
'''


def test_the_line_counts_the_steps_and_the_bitmaps_bits():
    allgather = TRANSPORTS.get("allgather-1bit")()
    plain = PayloadSpec(kind="scaled-signs", numel=1000, segments=4)
    zeros = replace(plain, abstain=True)
    assert abstention_note("s@allgather-1bit", allgather, [zeros, plain, None, zeros], 1000, 4) == (
        "s@allgather-1bit: 2 of 3 steps sent a 0 among the scaled-signs values, which allgather-1bit carries as an "
        "abstention (a bitmap of who sent a nonzero: +1 bit up per parameter on those steps); map sign(0) to +1 in "
        "encode where a 0 means nothing")
    assert abstention_note("s@allgather-1bit", allgather, [plain, plain], 1000, 4) == ""
    assert abstention_note("s@allgather-1bit", allgather, [zeros], 1000, 1) == ""  # a lone worker sends nothing
    votes = PayloadSpec(kind="votes", numel=1000, rule=MajorityVote(), abstain=True)
    plain_votes = replace(votes, abstain=False)
    # a vote's 0 is no bug in encode: the line says where it comes from (a 1-bit-sign user saw 2/2 bits unexplained)
    assert abstention_note("v@a2a-1bit", TRANSPORTS.get("a2a-1bit")(), [votes, plain_votes], 1000, 4) == (
        "v@a2a-1bit: on 1 of 2 steps some worker abstained (a 0 vote: a parameter its batches had not touched yet, "
        "such as an unseen token's embedding row), which a2a-1bit carries by marking who voted: +1 bit up per "
        "parameter on those steps (docs/decisions.md)")


def test_bench_prints_it_under_the_table_and_records_it(tmp_path, capsys, forget_plugins):
    path, out = tmp_path / "odd_zeros.py", tmp_path / "o"
    path.write_text(ZEROS)
    code, stdout, err = run_cli(["bench", "--plugin", path, "-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8",
                                 "--steps", "4", "--eval-every", "4", "-s", "odd-zeros", "--out", out], capsys)
    assert code == 0, err
    note = ("odd-zeros@allgather-1bit: 2 of 4 steps sent a 0 among the scaled-signs values, which allgather-1bit "
            "carries as an abstention (a bitmap of who sent a nonzero: +1 bit up per parameter on those steps); map "
            "sign(0) to +1 in encode where a 0 means nothing")
    assert "".join(note.split()) in "".join(stdout.split())  # wrapped at the terminal's width, hyphens too
    assert note in json.loads((out / "run.json").read_text())["notes"]
    up = pd.read_csv(out / "steps.csv").set_index("step").bits_per_param_up
    assert (up[1] - up[2], up[3] - up[4]) == pytest.approx((1.0, 1.0))  # the bitmap: one bit a parameter
