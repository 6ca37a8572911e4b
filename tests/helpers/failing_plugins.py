"""Plug-ins that go wrong on purpose, for tests/training/test_user_code.py: a strategy that raises at its
step FAILING_STEP (the environment variable; 0: never), strategies whose encode returns what no
transport can read (or an inf), and a transport whose aggregate has the wrong shape."""

import os

import torch

from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies import STRATEGIES
from lionsim.strategies.core.base import Hyper
from lionsim.strategies.baselines import GlobalStrategy
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.allreduce_float import Fp32AllReduce


class PlainSGD(GlobalStrategy):
    summary = "plain SGD on the averaged gradient (a test's plug-in)"
    defaults = Hyper(lr=0.05, weight_decay=0.0, betas=(0.0, 0.0))
    bytes = StrategyBytes(0, 2 * F32, "update reads p, writes p")

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.steps = 0

    def apply(self, params, aggregate) -> None:
        params.sub_(self.hyper.lr * aggregate[0])


@STRATEGIES.register("flaky-sgd")
class FlakySGD(PlainSGD):
    name = "flaky-sgd"

    def encode(self, grads, params, comm, clock):
        self.steps += 1
        if self.steps == int(os.environ.get("FAILING_STEP", "3")):
            raise ValueError(f"boom at step {self.steps}")
        return super().encode(grads, params, comm, clock)


@STRATEGIES.register("tensor-sgd")
class TensorSGD(PlainSGD):
    name = "tensor-sgd"

    def encode(self, grads, params, comm, clock):
        return grads  # not a Payload


@STRATEGIES.register("uneven-sparse")
class UnevenSparse(PlainSGD):
    name = "uneven-sparse"
    payload_kind = "sparse"
    default_transport = "sparse-allgather"

    def payload_spec(self):
        return PayloadSpec(kind="sparse", numel=self.layout.numel, k=4)

    def spec_scaled(self, params, tensors):  # its k at any size (a sparse spec must say it: lionsim.plugins)
        return PayloadSpec(kind="sparse", numel=params, k=4)

    def encode(self, grads, params, comm, clock):
        indices = torch.arange(3).expand(grads.shape[0], 3)  # three positions for four values
        return Payload(self.payload_spec(), grads[:, :4], indices=indices)


@TRANSPORTS.register("first-row-allreduce")
class FirstRowAllReduce(Fp32AllReduce):
    name = "first-row-allreduce"
    summary = "fp32 all-reduce that returns one row for all workers (a test's plug-in)"

    def aggregate(self, payload, comm, clock=None):
        return super().aggregate(payload, comm, clock)[:1]


@STRATEGIES.register("inf-sgd")
class InfSGD(PlainSGD):
    """Sends an inf at worker 1's position 5 on its step 2; a plain SGD before and after."""

    name = "inf-sgd"

    def encode(self, grads, params, comm, clock):
        self.steps += 1
        payload = super().encode(grads, params, comm, clock)
        if self.steps == 2:
            payload.values = payload.values.clone()
            payload.values[1, 5] = float("inf")
        return payload
