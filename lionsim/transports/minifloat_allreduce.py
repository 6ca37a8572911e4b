"""fp4-allreduce: the mean of float vectors sent as 4-bit floats, torchft's
quantized all-reduce (torchft collectives.allreduce_quantized, as Streaming DiLoCo sends its outer
gradients), in blocks of BLOCK values each with its own float32 scale.

    each worker:  block b of x scaled by s_b = MAX / max|x_b| and rounded to the format
    all-to-all:   worker j receives block slice j of every worker (the blocks padded to a
                  multiple of N), decodes them and sums in float32, its own first
    re-quantize:  each summed block scaled by MAX / its max and rounded again
    all-gather:   every worker receives every summed slice, decodes it and divides by N

(fp8, e4m3 and e5m2, is lionsim.transports.fp8_allreduce, the same exchange for any dense
payload.) fp4 is e2m1, the OCP microscaling element (magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6: MAX 6; nearest, a
tie to the smaller), two codes a byte. torchft scales each row of a tensor; lionsim's payload
is a flat vector, so a row is a block of BLOCK values (4 scale bytes per 256 values).

Bytes one worker sends: (N - 1) / N of the buffer twice (all-to-all, then all-gather), the
buffer being ceil(n / BLOCK) blocks, padded to a multiple of N, of BLOCK bits/8 + 4 bytes.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_codes, unpack_codes
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section, shared_rows
from lionsim.transports.payloads import Payload, PayloadSpec

BLOCK = 256
"""Values sharing one float32 scale (a row of torchft's quantized all-reduce)."""

E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
"""The magnitudes of an fp4 e2m1 code's three low bits (its high bit is the sign)."""
VALUES = torch.cat([E2M1, -E2M1])
"""The value of each of the 16 fp4 codes."""


def blocks(numel: int, workers: int) -> int:
    """Blocks of a vector of `numel` values, padded so that N workers own equal slices."""
    return math.ceil(math.ceil(numel / BLOCK) / workers) * workers


class MinifloatAllReduce(Transport):
    """The mean through values rounded to a small float format, per block scaled (module doc)."""

    rounds = True
    carries = ("dense",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a scale per block of BLOCK values: a bucket is blocked on its own
    bits: ClassVar[int]
    """Bits of one value on the wire."""
    max_value: ClassVar[float]
    """The largest magnitude of the format: a block's largest value is scaled to it."""

    @classmethod
    def accepts(cls, strategy: type) -> bool:
        """Only a strategy that sends float deltas rounded on purpose (its `minifloat` flag)."""
        return getattr(strategy, "minifloat", False)

    def round(self, x: Tensor) -> Tensor:
        """x (scaled into the format's range) as codes: uint8 [..., n]."""
        raise NotImplementedError

    def decode(self, codes: Tensor) -> Tensor:
        """The float32 values codes stand for."""
        raise NotImplementedError

    def buffer_bytes(self, numel: int, workers: int) -> int:
        """One worker's whole quantized buffer: codes and a float32 scale per block."""
        return blocks(numel, workers) * (BLOCK * self.bits // 8 + 4)

    def quantize(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Blocks x [..., B, BLOCK] -> (codes, float32 scales [..., B]); an all-zero block gets scale 1."""
        scale = self.max_value / x.abs().amax(-1)
        scale = torch.where(torch.isinf(scale), torch.ones_like(scale), scale)
        return self.round(x * scale.unsqueeze(-1)), scale

    def dequantize(self, codes: Tensor, scale: Tensor) -> Tensor:
        return self.decode(codes) / scale.unsqueeze(-1)

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        x, workers = payload.values.float(), comm.world_size
        w, n = x.shape
        b = blocks(n, workers)
        with section(clock, "encode"):
            padded = torch.zeros(w, b * BLOCK, device=x.device)
            padded[:, :n] = x
            codes, scale = self.quantize(padded.reshape(w, b, BLOCK))
            wire = self.pack(codes).reshape(w, workers, b // workers, -1)  # slice j goes to worker j
        with section(clock, "collective"):
            got = comm.all_to_all(wire)  # [w, W, b/W, bytes]: my slice from every worker
            got_scale = comm.all_to_all(scale.reshape(w, workers, b // workers))
        with section(clock, "decode"):
            values = self.dequantize(self.unpack(got), got_scale)  # [w, W, b/W, BLOCK]
            me = torch.arange(comm.first_worker, comm.first_worker + w, device=x.device)
            total = torch.zeros_like(values[:, 0])
            for i in range(workers):  # in float32, the owner's own blocks first (torchft's order)
                total += values[torch.arange(w), (me + i) % workers]
        with section(clock, "encode"):
            codes, scale = self.quantize(total)  # the sums, rounded again
        with section(clock, "collective"):
            every = comm.all_gather(self.pack(codes))  # [w, W, b/W, bytes]
            every_scale = comm.all_gather(scale)
        with section(clock, "decode"):
            every, local = shared_rows(every)  # the simulator's gather: one view shared by every worker
            every_scale, _ = shared_rows(every_scale)
            mean = (self.dequantize(self.unpack(every), every_scale) / workers).reshape(-1, b * BLOCK)[:, :n]
            return mean.expand(local, -1) if local is not None else mean

    def pack(self, codes: Tensor) -> Tensor:
        return codes if self.bits == 8 else pack_codes(codes.reshape(*codes.shape[:-1], -1), self.bits)

    def unpack(self, wire: Tensor) -> Tensor:
        return wire if self.bits == 8 else unpack_codes(wire.contiguous(), BLOCK, self.bits).to(torch.uint8)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        b = blocks(spec.numel, workers)
        codes, scales = b * BLOCK * self.bits // 8, 4 * b
        return [CollectiveCall("all_to_all", codes, "blocks", dtype="uint8"),
                CollectiveCall("all_to_all", scales, "block scales"),
                CollectiveCall("all_gather", codes, "summed blocks", dtype="uint8"),
                CollectiveCall("all_gather", scales, "summed block scales")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 8.0 * self.buffer_bytes(spec.numel, workers) / spec.numel
        return bits, bits

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        code = self.bits / 8
        # pack: read x for the block maxima, read it again and write codes; the owner reads N slices of
        # codes (n/N each) and writes its float32 sum, reads it twice for the re-rounding and writes
        # codes; unpack reads every slice's codes and writes the float32 mean
        # as run (aggregate above, counted by lionsim.perf.bytecount on the GPU path), per value:
        # quantize() 95.2 bytes in 17 ops (|x|, the block maximum and its scale, x x scale, then the
        # e2m1 rounding: |x|, clamp, bucketize to int64, sign, + 8 and to uint8), lionsim.packing's
        # 4-bit fields 177.5 (9 ops), their unpacking 169.5 (9) and dequantize() 29 (to int64, the
        # table lookup, / scale: 3). The second quantize and pack work on my slice (/ N); the code
        # packs the sums inside its collective section, counted here all the same.
        quantize, pack, unpack, dequantize = 95.2, 177.5, 169.5, 29.0
        pack_ops = (stream(12, "zero-padded copy of the gradient (write 4; read 4, write 4)", 2),
                    Op("pack-codes", quantize + pack, "blocks scaled, rounded to e2m1 codes, packed 4 bits each", 26),
                    Op("pack-codes", (quantize + pack) / workers, "the summed slice rounded and packed again", 26))
        unpack_ops = (Op("unpack-codes", unpack + dequantize, "N workers' slices unpacked and dequantized", 12),
                      stream(20 + 4 / workers, "their float32 sum (each slice read, 4/N; + into the total: 12/N)",
                             2 * workers + 1),
                      Op("unpack-codes", unpack + dequantize + 8, "every slice's sum unpacked, dequantized, / N", 13))
        return TransportBytes(pack=2 * F32 + code + (code * workers + 3 * F32 + code) / workers, unpack=code + F32,
                              aggregate=F32, pack_ops=pack_ops, unpack_ops=unpack_ops)


@TRANSPORTS.register("fp4-allreduce")
class Fp4AllReduce(MinifloatAllReduce):
    name = "fp4-allreduce"
    summary = "mean through fp4 e2m1 values, a float32 scale per 256 (all-to-all, sum, re-round, all-gather)"
    bits = 4
    max_value = 6.0

    def round(self, x: Tensor) -> Tensor:
        grid = E2M1.to(x.device)
        middles = (grid[1:] + grid[:-1]) / 2  # a value on a middle goes to the smaller magnitude
        magnitude = torch.bucketize(x.abs().clamp(max=self.max_value), middles)
        return (magnitude + 8 * (x < 0)).to(torch.uint8)

    def decode(self, codes: Tensor) -> Tensor:
        return VALUES.to(codes.device)[codes.long()]
