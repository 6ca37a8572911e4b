"""Strategies: optimizer + what each worker sends + how it is combined (one module each)."""

# Each import registers its strategies, in the order `lionsim strategies` lists them; a module not
# named here registers when _import_the_rest imports it, after these.
from lionsim.strategies import baselines  # noqa: F401,I001
from lionsim.strategies import dlion  # noqa: F401
from lionsim.strategies import signum  # noqa: F401
from lionsim.strategies import ef_signsgd  # noqa: F401
from lionsim.strategies import terngrad  # noqa: F401
from lionsim.strategies import dgc  # noqa: F401
from lionsim.strategies import lioncub  # noqa: F401
from lionsim.strategies import signsgd  # noqa: F401
from lionsim.strategies import qsgd  # noqa: F401
from lionsim.strategies import onebit_adam  # noqa: F401
from lionsim.strategies import local_steps  # noqa: F401
from lionsim.strategies import outer_codecs  # noqa: F401
from lionsim.strategies import powersgd  # noqa: F401
from lionsim.strategies import demo  # noqa: F401
from lionsim.strategies.core.base import (  # noqa: I001
    STRATEGIES,
    Strategy,
    StrategyConfig,
    can_use,
    momentum_strategies,
    valid_transports,
)
from lionsim.strategies.core.layout import ParamLayout, flatten_parameters, frozen_positions, gather_grads
from lionsim.forms import MomentumSync


def _import_the_rest() -> None:
    """Import every other module of this package, in name order: a new strategy's module registers
    itself without an edit here (it lists after the ones above)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_the_rest()

__all__ = [
    "STRATEGIES",
    "MomentumSync",
    "ParamLayout",
    "Strategy",
    "StrategyConfig",
    "flatten_parameters",
    "frozen_positions",
    "gather_grads",
    "momentum_strategies",
    "can_use",
    "valid_transports",
]
