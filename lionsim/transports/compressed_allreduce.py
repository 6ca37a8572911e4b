"""compressed-allreduce: DeepSpeed 1-bit Adam's error-compensated 1-bit all-reduce (Tang et
al. 2021), for the `onebit` payload: signs of the worker-compensated momentum with one float scale per worker.

    1. signs packed 8 per byte, split in N chunks (n rounded up to a multiple of 8N, the
       padding carrying no value); all-to-all, so worker i holds chunk i of every worker; the
       worker scales travel in a small all-gather;
    2. server i averages its chunk, y = mean_j(scale_j * sign_j) + e_server, and compresses it
       again: scale = ||y|| / sqrt(len), sign(y) (0 -> +1, as DeepSpeed), keeping
       e_server = y - scale * sign(y) (the strategy's buffer, passed in payload.extra);
    3. all-gather the servers' packed signs and scales; every worker decodes all chunks.

Traffic per worker about 2(N-1)/N * n/8 bytes: flat in N. DeepSpeed lets the zero padding of
each chunk into its norms; here the norms are over the real coordinates only. A `dense`
payload (1-bit Adam's full-precision warm-up steps) is averaged by an fp32 all-reduce; the
transport still carries only `onebit` strategies (check() refuses a dense strategy).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_signs, unpack_signs
from lionsim.schedules import AFTER_BACKWARD
from lionsim.timing import Clock
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, ceil_div, section
from lionsim.transports.payloads import Payload, PayloadSpec


def chunk_params(numel: int, workers: int) -> int:
    """Parameters per server chunk: n split N ways, rounded up to whole bytes."""
    return 8 * ceil_div(numel, 8 * workers)


def server_compress(y: Tensor, real: Tensor) -> tuple[Tensor, Tensor]:
    """y [w, c] (zero where not `real`) -> (signs +-1 [w, c], scale ||y||/sqrt(len) [w, 1])."""
    count = real.sum(1, keepdim=True).clamp_min(1)
    scale = y.norm(dim=1, keepdim=True) / count.sqrt()
    return torch.where(y >= 0, 1.0, -1.0), scale


@TRANSPORTS.register("compressed-allreduce")
class CompressedAllReduce(Transport):
    rounds = True
    name = "compressed-allreduce"
    kernels = ("float-pass", "float-pass")  # DeepSpeed's chains: elementwise ops and cupy's bit kernels (deepspeed_ops)
    carries = ("onebit",)
    overlap = frozenset({AFTER_BACKWARD})  # one scale per worker and the servers' error over the whole flat buffer
    summary = "1-bit Adam's compressed all-reduce: all-to-all of scaled signs, server error feedback, all-gather"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        if spec.kind == "dense":  # the warm-up: full precision
            with section(clock, "collective"):
                return comm.all_reduce(payload.values.float()) / workers
        chunk = chunk_params(spec.numel, workers)
        error = payload.extra["server_error"]  # [w, c], updated in place
        with section(clock, "encode"):
            signs = torch.nn.functional.pad(payload.values, (0, chunk * workers - spec.numel), value=1)
            packed = pack_signs(signs).reshape(signs.shape[0], workers, chunk // 8)  # [w, W, c/8]
        with section(clock, "collective"):
            mine = comm.all_to_all(packed)  # [w, W, c/8]: my chunk from every worker
            worker_scales = comm.all_gather(payload.scales)  # [w, W, 1]
        with section(clock, "decode"):
            rows = torch.arange(error.shape[0], device=error.device) + comm.first_worker
            position = rows.unsqueeze(1) * chunk + torch.arange(chunk, device=error.device)
            real = position < spec.numel  # [w, c]
            y = (unpack_signs(mine, chunk) * worker_scales).mean(1).add_(error) * real  # [w, c]
            server_signs, server_scale = server_compress(y, real)
            error.copy_((y - server_scale * server_signs) * real)
        with section(clock, "encode"):
            packed = pack_signs(server_signs)  # [w, c/8]
        with section(clock, "collective"):
            everyone = comm.all_gather(packed)  # [w, W, c/8]
            scales = comm.all_gather(server_scale)  # [w, W, 1]
        with section(clock, "decode"):
            out = unpack_signs(everyone, chunk) * scales  # [w, W, c]
            return out.reshape(out.shape[0], -1)[:, : spec.numel]

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        if spec.kind == "dense":
            return [CollectiveCall("all_reduce", 4 * spec.numel, "gradients (warm-up)")]
        chunk = chunk_params(spec.numel, workers)
        return [
            CollectiveCall("all_to_all", workers * chunk // 8, "signs", dtype="uint8"),
            CollectiveCall("all_gather", workers * 4, "worker scales"),
            CollectiveCall("all_gather", workers * chunk // 8, "server signs", dtype="uint8"),
            CollectiveCall("all_gather", workers * 4, "server scales"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        if spec.kind == "dense":
            return 32.0, 32.0
        bits = (workers * chunk_params(spec.numel, workers) + 32) / spec.numel
        return bits, bits

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        if spec.kind == "dense":  # the warm-up steps: an fp32 all-reduce
            return TransportBytes(pack=0.0, unpack=0.0, aggregate=F32)
        # phase 1 packs all signs; the server packs its chunk's signs (reads y, writes n/8N)
        pack = I8 + 1 / 8 + (F32 + 1 / 8) / workers
        # the server reads N workers' bits of its chunk (n/8 in all), reads and writes y and its error;
        # phase 2 reads every chunk's bits and writes the float32 momentum
        unpack = 1 / 8 + 3 * F32 / workers + 1 / 8 + F32
        return TransportBytes(pack=pack, unpack=unpack, aggregate=F32, **deepspeed_ops(spec.numel, workers))


def deepspeed_ops(numel: int, workers: int) -> dict:
    """DeepSpeed's compressed_allreduce (deepspeed/runtime/comm/nccl.py, NcclBackend), the implementation
    1-bit Adam, 0/1 Adam and 1-bit LAMB run, counted op by op per parameter of the momentum buffer
    (float32; server terms on a chunk of n/N). Its worker error feedback runs inside it, so it is
    counted here (lionsim's onebit-adam does that part in its rule; its Strategy.bytes counts only
    the momentum for the kernels).

    Every op is priced as an eager elementwise stream (float-pass), its sign packing too: DeepSpeed's
    chains are torch elementwise ops around cupy.packbits / unpackbits, one streaming kernel each. The
    pack-signs and unpack-signs rows are lionsim's own torch chains (8-plane shifts), which an H200
    ran at 0.85 and 0.32 of its stream (lionsim.perf.kernels): DeepSpeed does not run them."""
    n = workers
    pack = []
    if numel % (8 * n):  # the buffer padded to the error's size: zeros, then a cat (read 4, write 4)
        pack.append(stream(2 * F32, "pad the momentum to 8N: torch.cat with zeros", 2))
    pack += [
        stream(3 * F32, "buffer_m.add_(worker_error): read 8, write 4"),
        stream(F32, "worker_scale = norm(buffer_m): read 4"),
        # buffer_m.sign() (read 4, write 4), .add_(1) (4, 4), .bool() (4, 1), .float() (1, 4), .add_(-0.5)
        # and .mul_(2.0) (4, 4 each), * worker_scale (4, 4), buffer_m - that (8, 4): the new worker_error
        stream(8 + 8 + 5 + 5 + 8 + 8 + 8 + 12, "worker_error = buffer_m - scale x sign(buffer_m): 8 ops", 8),
        # buffer_m.sign_(), .add_(1) (4, 4 each), .bool() (4, 1), .to(uint8) (1, 1), cupy.packbits (1, 1/8),
        # torch.stack of the N chunks (1/8, 1/8)
        Op("float-pass", 8 + 8 + 5 + 2 + 1.125 + 0.25, "signs -> uint8 -> packbits -> stacked chunks", 6),
        # the server's chunk packed the same way after its error feedback (below): / N
        Op("float-pass", (8 + 8 + 5 + 2 + 1.125) / n, "the server's signs -> packbits", 5),
    ]
    unpack = (
        # phase 1 on my chunk from N workers (n values in all): cupy.unpackbits (read 1/8, write 1), .float()
        # (1, 4), .add_(-0.5), .mul_(2.0), .mul_(scale / N) (4, 4 each), .sum(0) (read 4, write 4/N)
        Op("float-pass", 1.125 + 5 + 24 + 4 + 4 / n, "N workers' chunk bits -> +-scale/N floats -> summed", 6),
        # the server's error feedback on the chunk: add_(server_error) (8, 4), norm (4), the error as the
        # worker's (8 ops, 62 bytes)
        stream((12 + 4 + 62) / n, "server error feedback on my chunk: add, norm, new error", 10),
        # phase 2 on every chunk (n values): torch.stack (1/8, 1/8), cupy.unpackbits (1/8, 1), .float(),
        # .add_(-0.5), .mul_(2.0), .mul_(scales), buffer_m.copy_ (read 4, write 4)
        Op("float-pass", 0.25 + 1.125 + 5 + 24 + 8, "every chunk's bits -> +-scale floats -> the momentum", 7),
    )
    return dict(pack_ops=tuple(pack), unpack_ops=unpack)
