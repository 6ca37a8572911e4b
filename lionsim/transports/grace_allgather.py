"""grace-allgather: sparse-allgather's exchange, decompressed as GRACE's TensorFlow
allgather communicator does it (grace_dl/tensorflow/communicator/allgather.py at 106e3de, with
grace_dl/tensorflow/compressor/topk.py's decompress and Compressor.aggregate).

GRACE gathers each tensor's top-k (values bitcast to int32 beside int32 indices) and then, for
each of the N ranks, slices that rank's part out of the gathered tensor, splits it into values
and indices and tf.scatter_nd's them into a dense zero tensor of the gradient's size; the N dense
tensors are then summed by one tf.math.add_n. So N + 1 dense passes and about 4N + 1 kernels a
tensor, where sparse-allgather adds every worker's pairs into one buffer by one scatter-add.

The wire (bytes, collectives, bits) and the aggregate's value are sparse-allgather's; only the
decode differs, and its unpack_ops price GRACE's kernels, not the torch ops below (which compute the
same per-sender passes in torch). Those ops are what a kernel table prices (`--kernels table`, as
the GRACE cases run); the ideal memory passes (`--kernels ideal`) stay sparse-allgather's. One
aggregation is one tensor's under `--overlap tensors`, as GRACE runs it (each gradient on its own),
so each Op's launches are per tensor there. GRACE's add_n has no mean over the workers that sent
each index (DeMo's, SparseLoCo's payloads): such a payload is exchanged, decoded and priced as
sparse-allgather does it.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import SECTOR, Op, stream
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec
from lionsim.transports.sparse_allgather import SparseAllGather

ADD_N_WIDTH = 8
"""Inputs one launch of TensorFlow's AddN sums into its output after the first (Add8pFunctor,
tensorflow/core/kernels/aggregate_ops.h): the first launch takes 2 to 9 inputs (N mod 8, or 8
or 9 where that is 0 or 1), each further launch 8 more, reading its output back."""


def add_n_launches(workers: int) -> int:
    """Kernels tf.math.add_n launches to sum `workers` (>= 2) dense tensors (ADD_N_WIDTH)."""
    first = workers % ADD_N_WIDTH
    first = first + ADD_N_WIDTH if first < 2 else first
    return 1 + max(0, -(-(workers - first) // ADD_N_WIDTH))


@TRANSPORTS.register("grace-allgather")
class GraceAllGather(SparseAllGather):
    name = "grace-allgather"  # kernels, carries and overlap: sparse-allgather's
    summary = ("sparse-allgather decompressed as GRACE's TensorFlow allgather communicator: per sender a dense "
               "scatter, then a sum of the N")

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        if spec.over_senders:  # GRACE has no mean over senders (DeMo, SparseLoCo): sparse-allgather's (module doc)
            return super().aggregate(payload, comm, clock)
        all_idx, all_val = self.gathered(payload, comm, clock)  # [w, W, k] each
        with section(clock, "decode"):
            w = all_idx.shape[0]
            dense = [torch.zeros(w, spec.numel, dtype=torch.float32, device=all_val.device)
                     .scatter_add_(1, all_idx[:, s].long(), all_val[:, s].float())
                     for s in range(all_idx.shape[1])]  # one sender's [w, n] each, as GRACE's scatter_nd
            return torch.stack(dense).sum(0) / workers  # add_n of the N, then the mean

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        base, n = super().wire_bytes(spec, workers), workers
        if spec.over_senders:
            return base
        adds = add_n_launches(n) if n > 1 else 0
        # per sender (GRACE's loop over ranks): a strided slice of its 2k int32 out of the gathered
        # tensor and a split of it into values and indices (each read 8, write 8 a pair; TF may alias an
        # aligned dim-0 slice or split, so these are at most); scatter_nd: zero a dense float32 tensor
        # (write 4), then each pair's int32 index and value read and its target's sector read and written.
        # add_n reads the N dense tensors and writes one, each further launch reading its output back;
        # then lionsim's / N (GRACE's allgather communicator returns the sum).
        unpack = (Op("float-pass", 16 * n, "per sender, its 2k int32 sliced out of the gathered tensor", n, per="pair"),
                  Op("float-pass", 16 * n, "per sender, its part split into values and indices", n, per="pair"),
                  stream(F32 * n, "per sender, scatter_nd's dense zero tensor (write 4)", n),
                  Op("scatter-add", (8 + 2 * SECTOR) * n, "per sender, its k pairs scattered into its own tensor",
                     n, per="pair"),
                  stream(F32 * n + F32 + 2 * F32 * (adds - 1), "tf.math.add_n of the N dense tensors", adds),
                  stream(2 * F32, "the sum / N (read 4, write 4)"))
        return dataclasses.replace(base, unpack_ops=unpack)  # the ideal passes stay sparse-allgather's
