"""sparse-as-dense: a sparse payload (DGC's top-k, random-k, DeMo's DCT coefficients) scattered into
a dense float32 vector and averaged by one all-reduce, as Horovod does with sparse gradients under
`hvd.DistributedOptimizer(..., sparse_as_dense=True)`: a lionsim transport written as a plug-in,
in one file.

    each worker i:  d_i = 0 (P floats); d_i[idx_i] += val_i          (pack: a scatter-add)
    all-reduce:     D = sum_i d_i                                      (float32, 4 P bytes)
                    a payload averaged over its senders (DeMo) also sums
                    C = sum_i [position sent by i]                     (int8 up to 127 workers)
    aggregate:      D / N, or D / max(C, 1) over the senders          (as sparse-allgather)

The aggregate is sparse-allgather's (up to the order floats are added in). What differs is the
wire: sparse-allgather hands every worker all N x k pairs of 8 bytes, (N - 1) 8 k bytes sent per
worker whatever P is; a ring all-reduce of the dense vector sends 2 (N - 1) / N x 4 P bytes
whatever k is. Densifying wins once each worker sends more than P / N pairs.

It runs per bucket as well as after backward: a bucket's pairs index into that bucket alone, so
its dense part is all-reduced on its own (Transport.overlap). Its packing is a scatter-add and its
unpacking (over the senders) a float pass: both rows of lionsim's kernel table.

Load it with `--plugin examples/plugins/sparse_as_dense.py`; then `-s dgc@sparse-as-dense` (or any
strategy that sends `sparse`) works in bench, estimate, sweep and report.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, PER_BUCKET, TRANSPORTS, Payload, PayloadSpec, Transport
from lionsim.transports.base import F32, TransportBytes, section
from lionsim.transports.payloads import container_dtype


@TRANSPORTS.register("sparse-as-dense")
class SparseAsDense(Transport):
    name = "sparse-as-dense"
    summary = "sparse pairs scattered into a dense float32 vector, one all-reduce (Horovod's sparse_as_dense)"
    carries = ("sparse",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a bucket's pairs index into that bucket alone
    kernels = ("scatter-add", "float-pass")  # pack: zero the vector, add the pairs in; unpack: divide by the senders

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, values, where = payload.spec, payload.values.float(), payload.indices
        w = values.shape[0]
        with section(clock, "encode"):
            dense = torch.zeros(w, spec.numel, device=values.device).scatter_add_(1, where, values)
            if spec.over_senders:
                sent = torch.zeros(w, spec.numel, dtype=container_dtype(comm.world_size), device=values.device)
                sent.scatter_add_(1, where, torch.ones_like(where, dtype=sent.dtype))
        with section(clock, "collective"):
            total = comm.all_reduce(dense)
            senders = comm.all_reduce(sent) if spec.over_senders else None
        with section(clock, "decode"):
            if senders is None:
                return total / comm.world_size
            return total / senders.float().clamp_min(1)  # the mean over the workers that sent each position

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        calls = [CollectiveCall("all_reduce", 4 * spec.numel, "densified")]
        if spec.over_senders:
            count = container_dtype(workers)
            calls.append(CollectiveCall("all_reduce", count.itemsize * spec.numel, "senders",
                                        dtype=str(count).removeprefix("torch.")))
        return calls

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 32.0 + (8.0 * container_dtype(workers).itemsize if spec.over_senders else 0.0)
        return bits, bits

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        share = spec.k / spec.numel
        # pack: write the zeroed vector (4), then per pair read it (int64 index, float32 value: 12) and
        # read-modify-write its target (8); over the senders the counts likewise (c, then 2c per pair)
        pack = F32 + 20 * share
        if not spec.over_senders:  # the update divides the sum by N as it reads it (as fp32-allreduce)
            return TransportBytes(pack=pack, unpack=0.0, aggregate=F32)
        c = container_dtype(workers).itemsize
        return TransportBytes(pack=pack + c + 2 * c * share, unpack=F32 + c + F32, aggregate=F32)
