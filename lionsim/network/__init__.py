"""The network cost model: links and topology, collective algorithms, pricing, cost tables.

    from lionsim.network import load_network, price, CollectiveCall
    cost = price(CollectiveCall("all_reduce", 4 * 10**6), workers=8, network=load_network("10gbe"))
"""

from lionsim.network.calls import OPS, REDUCING_OPS, CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, CollectiveAlgorithm, Group, Terms
from lionsim.network.cost import AUTO, CallCost, PhaseCost, algorithms_for, comm_time, price, wire_bytes
from lionsim.network.libraries import TRAITS, backend_traits
from lionsim.network.link import GB, Link, Network
from lionsim.network.presets import NETWORKS
from lionsim.network.profile import canonical_network, load_network, network_for, network_from_dict
from lionsim.network.sizes import parse_size, parse_sizes
from lionsim.network.table import (
    COMM_COLUMNS,
    TABLE_OPS,
    bandwidths,
    bus_factor,
    comm_rows,
    comm_table,
    normalize_op,
    rows_frame,
)
from lionsim.network.traits import IDEAL, OpTraits, SlowMode, Spread, Traits

__all__ = [
    "AUTO",
    "COLLECTIVE_ALGORITHMS",
    "COMM_COLUMNS",
    "GB",
    "IDEAL",
    "NETWORKS",
    "OPS",
    "REDUCING_OPS",
    "TABLE_OPS",
    "CallCost",
    "CollectiveAlgorithm",
    "CollectiveCall",
    "Group",
    "Link",
    "Network",
    "OpTraits",
    "SlowMode",
    "Spread",
    "TRAITS",
    "Traits",
    "PhaseCost",
    "Terms",
    "algorithms_for",
    "backend_traits",
    "bandwidths",
    "bus_factor",
    "canonical_network",
    "comm_table",
    "comm_rows",
    "rows_frame",
    "comm_time",
    "load_network",
    "network_for",
    "network_from_dict",
    "normalize_op",
    "parse_size",
    "parse_sizes",
    "price",
    "wire_bytes",
]
