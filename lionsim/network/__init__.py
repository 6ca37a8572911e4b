"""The network cost model: links and topology, collective algorithms, pricing, cost tables.

    from lionsim.network import load_network, price, CollectiveCall
    cost = price(CollectiveCall("all_reduce", 4 * 10**6), workers=8, network=load_network("10gbe"))
"""

from lionsim.network.calls import OPS, REDUCING_OPS, CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, CollectiveAlgorithm, Group, Terms
from lionsim.network.cost import AUTO, CallCost, PhaseCost, algorithms_for, comm_time, price, wire_bytes
from lionsim.network.fitted import FittedCollective, Regime
from lionsim.network.link import GB, Link, Network
from lionsim.network.presets import NETWORKS
from lionsim.network.profile import canonical_network, load_network, network_from_dict
from lionsim.network.sizes import parse_size, parse_sizes
from lionsim.network.table import COMM_COLUMNS, TABLE_OPS, bandwidths, bus_factor, comm_table, normalize_op

__all__ = [
    "AUTO",
    "COLLECTIVE_ALGORITHMS",
    "COMM_COLUMNS",
    "GB",
    "NETWORKS",
    "OPS",
    "REDUCING_OPS",
    "TABLE_OPS",
    "CallCost",
    "CollectiveAlgorithm",
    "CollectiveCall",
    "FittedCollective",
    "Group",
    "Link",
    "Network",
    "PhaseCost",
    "Regime",
    "Terms",
    "algorithms_for",
    "bandwidths",
    "bus_factor",
    "canonical_network",
    "comm_table",
    "comm_time",
    "load_network",
    "network_from_dict",
    "normalize_op",
    "parse_size",
    "parse_sizes",
    "price",
    "wire_bytes",
]
