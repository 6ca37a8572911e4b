"""Transports: how each payload crosses the network (one module each), and what it costs."""

# Each import registers its transports, in the order `lionsim strategies` lists them; a module not
# named here registers when _import_the_rest imports it, after these.
from lionsim.transports import allreduce_float  # noqa: F401,I001
from lionsim.transports import int8_allreduce  # noqa: F401
from lionsim.transports import allgather_1bit  # noqa: F401
from lionsim.transports import a2a_1bit  # noqa: F401
from lionsim.transports import pbit_allreduce  # noqa: F401
from lionsim.transports import param_server  # noqa: F401
from lionsim.transports import sparse_allgather  # noqa: F401
from lionsim.transports import packed_allreduce  # noqa: F401
from lionsim.transports import allgather_levels  # noqa: F401
from lionsim.transports import compressed_allreduce  # noqa: F401
from lionsim.transports import hier_exact  # noqa: F401
from lionsim.transports import hier_1bit  # noqa: F401
from lionsim.transports import lowrank_allreduce  # noqa: F401
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET, SCHEDULES
from lionsim.transports.base import TRANSPORTS, Transport
from lionsim.transports.payloads import (PAYLOAD_KINDS, Payload, PayloadKind, PayloadSpec, combine_alone, container_dtype,
                                         spec_problem)

__all__ = ["AFTER_BACKWARD", "PAYLOAD_KINDS", "PER_BUCKET", "SCHEDULES", "TRANSPORTS", "Payload", "PayloadKind", "PayloadSpec",
           "Transport", "combine_alone", "container_dtype", "spec_problem"]


def _import_the_rest() -> None:
    """Import every other module of this package, in name order: a new transport's module registers
    itself without an edit here (it lists after the ones above)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_the_rest()
