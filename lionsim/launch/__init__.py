"""Real process groups for `lionsim bench --backend gloo|nccl`: started by lionsim on one
machine (spawn.py: R ranks, a watchdog, one line on a dead or hung rank) or by torchrun
(lionsim.group.env reads its environment); either way each rank runs rank.py: rendezvous
(lionsim.group.join), the same-configuration check, the bench on its W/R workers, outputs
from rank 0 (journal.py keeps every finished step on disk as it finishes).

What a bench's ranks share with the measured collectives' (lionsim.measure) lives a layer
below both, in lionsim.group; its names are listed here too.
"""

from lionsim.group.env import Rendezvous, free_port, launcher_env
from lionsim.group.join import check_backend, default_ranks
from lionsim.launch.rank import RankFailure, check_layout, run_rank
from lionsim.launch.spawn import Outcome, spawn_ranks

__all__ = ["Outcome", "RankFailure", "Rendezvous", "check_backend", "check_layout", "default_ranks", "free_port",
           "launcher_env", "run_rank", "spawn_ranks"]
