"""fp8-allreduce and fp8-e5m2-allreduce: a gradient average that travels in 8-bit floats with a
float32 scale per block, reduced in float32 where it is summed (as torchft's quantized
all-reduce does: an all-to-all reduce-scatter of fp8 chunks, float32 local sums, fp8 all-gather).

    pad the [n] gradient to a multiple of N * BLOCK; cut it into N chunks (one per worker)
    encode   per block of BLOCK values: s = max|x| / FMAX; codes = fp8(x / s), clamped to +-FMAX
    1        all-to-all: worker j gets every worker's codes and scales of chunk j
    decode   worker j: dequantize the N chunks (codes * s), sum them in float32 in worker order,
             / N, quantize the mean again (per block)
    2        all-gather: every worker gets every chunk's fp8 mean and scales; dequantize

Two roundings to fp8 per value, whatever N is: the sums never travel in fp8 (a ring adding in
fp8 would round N - 1 times with 2-3 mantissa bits). Scales: one float32 per BLOCK = 256 values
(torchft scales per row; a flat gradient has no rows, so lionsim's rows are blocks of 256), so
bits per value 8 + 32 / 256 = 8.125 each way. A block whose values are all zero gets scale 1
(codes 0). e4m3 (torch.float8_e4m3fn: 3 mantissa bits, max 448, no infinities) is the more
precise; e5m2 (2 mantissa bits, max 57344) has the range the scales already give, so it mostly
loses a bit. On gloo the codes travel as uint8 (gloo sums no fp8, and nothing here is summed
on the wire), so gloo and the simulator compute the same bits.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.error import note_error
from lionsim.transports.payloads import Payload, PayloadSpec

BLOCK = 256
"""Values per float32 scale."""
SCALE_BYTES = 4


def quantize(x: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """x [..., n] float32, n a multiple of BLOCK -> (codes uint8 [..., n], scales float32 [..., n / BLOCK])."""
    fmax = torch.finfo(dtype).max
    blocks = x.reshape(*x.shape[:-1], -1, BLOCK)  # [..., n/B, B]
    amax = blocks.abs().amax(dim=-1)  # [..., n/B]
    scales = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    scaled = (blocks / scales.unsqueeze(-1)).clamp_(-fmax, fmax)  # rounding of amax / s can pass FMAX
    return scaled.to(dtype).view(torch.uint8).reshape(x.shape), scales


def dequantize(codes: Tensor, scales: Tensor, dtype: torch.dtype) -> Tensor:
    """(codes uint8 [..., n], scales [..., n / BLOCK]) -> float32 [..., n]."""
    blocks = codes.view(dtype).float().reshape(*codes.shape[:-1], -1, BLOCK)
    return (blocks * scales.unsqueeze(-1)).reshape(codes.shape)


def pack(codes: Tensor, scales: Tensor) -> Tensor:
    """One uint8 buffer [..., n + 4 n / BLOCK]: the codes, then the scales' bytes."""
    return torch.cat([codes, scales.contiguous().view(torch.uint8)], dim=-1)


def unpack(buffer: Tensor, n: int) -> tuple[Tensor, Tensor]:
    return buffer[..., :n], buffer[..., n:].contiguous().view(torch.float32)


QUANTIZE = 8 + 4 + 8 + 8 + 5 + 38 / BLOCK
"""quantize(), per value: |x| (read 4, write 4), the block maximum (read 4), x / scale (4, 4), the clamp
(4, 4), to fp8 (read 4, write 1); per block, the maximum's 4 bytes, > 0, / FMAX, ones_like, where."""
DEQUANTIZE = 5 + 8 + 12 / BLOCK
"""unpack() then dequantize(), per value: the scales made contiguous (a block's 4 bytes read and
written), the codes to float32 (read 1, write 4), x scale (read 4, write 4)."""


def padded(numel: int, workers: int) -> int:
    """The vector's length once padded to N chunks of whole blocks."""
    return math.ceil(numel / (workers * BLOCK)) * workers * BLOCK


class Fp8AllReduce(Transport):
    rounds = True
    carries = ("dense",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a scale per block of BLOCK values: a bucket is blocked on its own
    dtype: torch.dtype

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        values, workers = payload.values.float(), comm.world_size  # [w, n]
        w, n = values.shape
        if n == 0:  # nothing of it is sent whole (muloco codes every tensor of a model without norms)
            return values
        total = padded(n, workers)
        chunk = total // workers
        with section(clock, "encode"):
            codes, scales = quantize(torch.nn.functional.pad(values, (0, total - n)), self.dtype)
            send = pack(codes.view(w, workers, chunk), scales.view(w, workers, chunk // BLOCK))  # [w, N, bytes]
        with section(clock, "collective"):
            got = comm.all_to_all(send)  # [w, N, bytes]: my chunk from every worker
        with section(clock, "decode"):
            parts = dequantize(*unpack(got, chunk), self.dtype)  # [w, N, c]
            mean = parts[:, 0].clone()
            for j in range(1, workers):  # float32, in worker order
                mean += parts[:, j]
            mean /= workers
            mine = pack(*quantize(mean, self.dtype))  # [w, bytes]
        with section(clock, "collective"):
            every = comm.all_gather(mine)  # [w, N, bytes]: every chunk's mean
        with section(clock, "decode"):
            out = dequantize(*unpack(every, chunk), self.dtype).reshape(w, total)[:, :n]
        note_error(payload, out, comm)
        return out

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        wire = padded(spec.numel, workers) * (1 + SCALE_BYTES / BLOCK)  # codes + scales, all chunks
        # the buffers travel as uint8 (codes and scale bytes together): nothing is reduced on the wire
        return [CollectiveCall("all_to_all", int(wire), "fp8 chunks (reduce-scatter)", dtype="uint8"),
                CollectiveCall("all_gather", int(wire), "fp8 means", dtype="uint8")]

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        code = I8 + SCALE_BYTES / BLOCK  # an fp8 code and its share of a block's scale
        # decode: N workers' codes of my chunk (n in all), the fp32 mean of my chunk written, read and
        # quantized again; after the all-gather every chunk's codes read and the fp32 aggregate written
        unpack = code + (F32 + F32 + code) / workers + code + F32
        return TransportBytes(pack=F32 + code, unpack=unpack, aggregate=F32,  # read fp32 g, write codes
                              pack_ops=(stream(2 * F32, "pad to N chunks of whole blocks (a copy: read 4, write 4)"),
                                        Op("cast", QUANTIZE + (2 + 8 / BLOCK), "quantize, then the codes and scales "
                                           "concatenated into one buffer (read 1, write 1)", 10)),
                              unpack_ops=(Op("cast", DEQUANTIZE, "my chunk from N workers dequantized", 3),
                                          stream((8 + 12 * (workers - 1) + 8) / workers, "their float32 sum, "
                                                 "worker by worker, / N", workers + 1),
                                          Op("cast", (QUANTIZE + 2 + 8 / BLOCK) / workers, "the mean quantized and "
                                             "concatenated again", 10),
                                          Op("cast", DEQUANTIZE, "every chunk's mean dequantized", 3)))

    def bits_note(self, spec: PayloadSpec, workers: int) -> str:
        if not spec.numel:
            return ""
        total = padded(spec.numel, workers)
        return (f"8-bit codes and a float32 scale per {BLOCK} values ({8 * (1 + SCALE_BYTES / BLOCK):g} bits), "
                f"{spec.numel:,} values padded to {workers} chunks of whole blocks ({total:,}): "
                f"{self.bits_per_param(spec, workers)[0]:.3g} bits (a smaller model pads more)")

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        if not spec.numel:  # nothing to send (muloco on a model whose every tensor travels coded)
            return 0.0, 0.0
        bits = 8 * padded(spec.numel, workers) * (1 + SCALE_BYTES / BLOCK) / spec.numel
        return bits, bits


@TRANSPORTS.register("fp8-allreduce")
class Fp8E4m3AllReduce(Fp8AllReduce):
    name = "fp8-allreduce"
    kernels = ("cast", "float-pass")
    summary = "fp8 e4m3 gradients with a scale per 256: all-to-all reduce-scatter, fp32 sums, fp8 all-gather"
    dtype = torch.float8_e4m3fn


@TRANSPORTS.register("fp8-e5m2-allreduce")
class Fp8E5m2AllReduce(Fp8AllReduce):
    name = "fp8-e5m2-allreduce"
    kernels = ("cast", "float-pass")
    summary = "fp8-allreduce in e5m2 (2 mantissa bits, wider range)"
    dtype = torch.float8_e5m2
