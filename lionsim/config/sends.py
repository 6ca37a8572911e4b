"""Every payload a bench's runs will send, asked of their transports before any training.

A run's transport is asked whether it carries the run's payload (Transport.check) as the run
starts, and what each step's payload costs (plan, bits, wire_bytes, footnote) as its steps are
booked, after training: a plug-in that answers one spec wrongly cost the runs before it, or the
whole run. What a run sends is known without training: its strategy says what each step sends
(Strategy.run_spec, a pure function of the step) for the model's shapes. So plan() builds each
run's strategy on those shapes on the meta device (every buffer a shape, no storage), walks the
run's steps and asks the transport for each spec they send (lionsim.steptime.answers); a vote
also with abstentions, which a vote transport marks on a step where some worker abstains. A
plug-in's strategy that cannot be built on the meta device (it reads a tensor's values) is asked
as it trains; every one of lionsim's builds there."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.steptime.answers import check_answers
from lionsim.strategies import ParamLayout
from lionsim.strategies.core.sends import sent_specs
from lionsim.transports import TRANSPORTS, PayloadSpec
from lionsim.usercode import is_users
from lionsim.workloads import workload_class

if TYPE_CHECKING:
    from lionsim.plan import BenchPlan, RunPlan


def check_sends(bench: BenchPlan) -> None:
    """Ask each run's transport about every payload the run sends (module doc): one LionsimError
    line for the first wrong answer. torch's generator is left as it was, should a model's probe
    or a strategy draw from it."""
    workers, per_node = bench.workload.workers, bench.network.network.workers_per_node
    with torch.random.fork_rng(devices=[]):
        layout = ParamLayout.meta(workload_class(bench.workload.name).param_shapes(bench.workload))
        sends = [(r, run_sends(r, layout, workers, per_node, bench.steps)) for r in bench.runs]
    for r, specs in sends:
        if specs is None:
            continue
        transport = TRANSPORTS.get(r.run.transport)()
        transport.check(specs[0], workers)  # as the run loop does, before the run's first step
        for spec in specs:
            check_answers(transport, spec, workers, per_node, wire=bench.compute.device is not None,
                          note=spec is specs[0])


def run_sends(r: RunPlan, layout: ParamLayout, workers: int, per_node: int, steps: int) -> list[PayloadSpec] | None:
    """The run's steady spec (the run loop checks its transport with it, bench's footer reads it),
    then what `r` sends in `steps` steps (sent_specs), its strategy built as the run builds it but
    on `layout` (meta); None where a plug-in's strategy cannot be built or asked there. A LionsimError
    is its refusal, as the run would meet it: raised now. lionsim's own strategies all build on
    meta (tests/config/test_sends.py), so any other error of theirs is a bug, raised as it is: a
    quiet None would switch their plan-time checks off."""
    try:
        strategy = r.run.strategy_class(r.strategy, layout, SimComm(workers, per_node))
        steady = strategy.payload_spec()
        # the steady spec first even where encode sends other payloads (sent_specs leaves it out then)
        return list(dict.fromkeys([steady, *sent_specs(strategy, steady, steps)]))
    except LionsimError:
        raise
    except Exception:  # noqa: BLE001 -- meta cannot run a plug-in's: the run builds it for real
        if not is_users(r.run.strategy_class):
            raise
        return None
