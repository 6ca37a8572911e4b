"""Real process groups for `lionsim bench --backend gloo|nccl`: started by lionsim on one
machine (spawn.py: R ranks, a watchdog, one line on a dead or hung rank) or by torchrun
(env.py reads its environment); either way each rank runs rank.py: rendezvous (group.py),
the same-configuration check, the bench on its W/R workers, outputs from rank 0. hosts.py
says where the ranks run.

Names load lazily, so the measured sweep (lionsim.measure) can join a group through
group.py without importing the bench.
"""

from lionsim._lazy import lazy_attributes

_NAMES = {
    "Outcome": ".spawn",
    "RankFailure": ".rank",
    "Rendezvous": ".env",
    "check_backend": ".group",
    "check_layout": ".rank",
    "default_ranks": ".group",
    "free_port": ".env",
    "launcher_env": ".env",
    "run_rank": ".rank",
    "spawn_ranks": ".spawn",
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

__all__ = sorted(_NAMES)
