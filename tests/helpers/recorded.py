"""A bench booked as a real backend's, on the simulator: calls.csv written without gloo ranks."""

from __future__ import annotations

from lionsim.training.runner import Runner


def as_three_ranks(made) -> Runner:
    """A runner of `made` booked as three real ranks' are, on the simulator, its comm's log
    holding one recorded call per step: calls.csv is written, the same for every run."""
    from lionsim.backends import SimComm
    from lionsim.backends.timed import MeasuredCall
    from lionsim.training.loop import Place

    class Recorded(SimComm):
        def take_log(self) -> list:
            return [MeasuredCall("all_reduce", 4000, 0.002, wait_s=0.0005)]

    comm = Recorded(3)
    comm.ranks = 3
    return Runner(made, Place(comm))
