"""Real process groups for `lionsim bench --backend gloo|nccl`: started by lionsim on one
machine (spawn.py: R ranks, a watchdog, one line on a dead or hung rank) or by torchrun
(lionsim.group.env reads its environment); either way each rank runs rank.py: rendezvous
(lionsim.group.join), the same-configuration check, the bench on its W/R workers, outputs
from rank 0 (journal.py keeps every finished step on disk as it finishes).

What a bench's ranks share with the measured collectives' (lionsim.measure) lives a layer
below both, in lionsim.group; its names are listed here too. Names load lazily.
"""

from lionsim._lazy import lazy_attributes

_NAMES = {
    "Outcome": ".spawn",
    "RankFailure": ".rank",
    "Rendezvous": "lionsim.group.env",
    "check_backend": "lionsim.group.join",
    "check_layout": ".rank",
    "default_ranks": "lionsim.group.join",
    "free_port": "lionsim.group.env",
    "launcher_env": "lionsim.group.env",
    "run_rank": ".rank",
    "spawn_ranks": ".spawn",
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

__all__ = sorted(_NAMES)
