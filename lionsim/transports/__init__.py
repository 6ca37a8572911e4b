"""Transports: how each payload crosses the network (one module each), and what it costs."""

from lionsim.transports import (  # noqa: F401  (each import registers its transports)
    a2a_1bit,
    allgather_1bit,
    allreduce_float,
    int8_allreduce,
    param_server,
    pbit_allreduce,
    sparse_allgather,
)
from lionsim.transports.base import TRANSPORTS, Transport
from lionsim.transports.payloads import KINDS, Payload, PayloadSpec, container_dtype

__all__ = ["KINDS", "TRANSPORTS", "Payload", "PayloadSpec", "Transport", "container_dtype"]
