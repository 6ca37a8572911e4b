"""Real process groups for `lionsim bench --backend gloo|nccl`: started by lionsim on one
machine (spawn.py: R ranks, a watchdog, one line on a dead or hung rank) or by torchrun
(env.py reads its environment); either way each rank runs rank.py: rendezvous, the
same-configuration check, the bench on its W/R workers, outputs from rank 0."""

from lionsim.launch.env import Rendezvous, free_port, launcher_env
from lionsim.launch.rank import RankFailure, check_backend, check_layout, default_ranks, run_rank
from lionsim.launch.spawn import Outcome, spawn_ranks

__all__ = [
    "Outcome",
    "RankFailure",
    "Rendezvous",
    "check_backend",
    "check_layout",
    "default_ranks",
    "free_port",
    "launcher_env",
    "run_rank",
    "spawn_ranks",
]
