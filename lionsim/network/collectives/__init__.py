"""Collective algorithms, one per module, each with its alpha-beta formula in its docstring.

Registration order is the tie-break order of `algorithm="auto"`.
"""

from lionsim.network.collectives.base import (
    COLLECTIVE_ALGORITHMS,
    CollectiveAlgorithm,
    Group,
    Terms,
)

# Each import registers its algorithm.
from lionsim.network.collectives import ring  # noqa: E402,F401
from lionsim.network.collectives import recursive_doubling  # noqa: E402,F401
from lionsim.network.collectives import rabenseifner  # noqa: E402,F401
from lionsim.network.collectives import tree  # noqa: E402,F401
from lionsim.network.collectives import bruck  # noqa: E402,F401
from lionsim.network.collectives import pairwise  # noqa: E402,F401
from lionsim.network.collectives import binomial  # noqa: E402,F401
from lionsim.network.collectives import param_server  # noqa: E402,F401

__all__ = ["COLLECTIVE_ALGORITHMS", "CollectiveAlgorithm", "Group", "Terms"]
