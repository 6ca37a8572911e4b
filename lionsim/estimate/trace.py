"""`lionsim estimate --trace`: each strategy's modelled step as trace.json (lionsim.reports.trace).

Every worker of an estimate runs the same step, so each run is one process, "every worker":
its step on the compute and comm lanes as lionsim.steptime.lanes lays it out (buckets over
backward, each collective named by op, size and the algorithm that priced it). A local-step
strategy (localsgd, diloco*) shows its sync step, then one of its H - 1 local steps (whose update,
the inner optimizer's step, is drawn as "inner step"); a momentum
sync every K steps (--momentum-sync every:K), a step without it, then the step with it. The
even step is drawn: with --compute-spread the expected step of estimate.csv is a mean over
the slowest worker's factor, not one timeline (otherData says so).
"""

from __future__ import annotations

import dataclasses

from lionsim.estimate.config import EstimateConfig, Resolved, resolve
from lionsim.estimate.probe import probe_resolved
from lionsim.estimate.table import step_inputs
from lionsim.reports.trace import Track, trace_text
from lionsim.steptime.lanes import COMPUTE, Span, modelled_lanes, step_end

INNER_STEP = "inner step"
"""A local step's update: estimate.csv books the inner optimizer's step in update_s, as training
books it (LocalSteps.encode)."""


def estimate_trace(cfg: EstimateConfig, r: Resolved | None = None) -> str:
    """trace.json's text for `cfg` (module doc)."""
    r = resolve(cfg) if r is None else r  # the command's plan, resolved once
    workers, network = r.workers, r.network
    flops = r.step_flops()  # a counted model's own FLOPs, else 6 P per token
    tracks = []
    for run in r.runs:
        p = probe_resolved(r, run, workers)
        spans, at = [], 0.0
        steps = [("sync step" if p.sync_every > 1 else "step", False, p,
                  {"local_steps": p.sync_every} if p.sync_every > 1 else {})]
        if p.sync_calls:  # --momentum-sync every:K: one step in K also syncs the momenta (all of them at K = 1)
            synced = ("momentum-sync step", False, dataclasses.replace(p, extra_calls=p.extra_calls + p.sync_calls),
                      {"every": p.sync_rate.denominator})
            steps = [synced] if p.sync_rate == 1 else [*steps, synced]
        if p.sync_every > 1:
            steps.append(("local step", True, p, {}))
        for name, local, drawn, about in steps:
            work, pricing = step_inputs(r, run, drawn, flops, workers, network, local)
            step = modelled_lanes(work=work, factors=[1.0], **pricing)[0]  # every worker alike
            if local:  # a local step's update is the inner optimizer's step
                step = [dataclasses.replace(s, name=INNER_STEP) if (s.lane, s.name) == (COMPUTE, "update") else s
                        for s in step]
            end = step_end(step)
            spans.append(Span("step", name, at, end, about))
            spans += [Span(s.lane, s.name, s.start_s + at, s.dur_s, s.args) for s in step]
            at += end
        tracks.append(Track(f"{run.label} · every worker ({workers} alike)", spans))
    about = {"command": "estimate", "network": network.name, "workers": workers, "params": r.params,
             "device": r.device.name, "times": "modelled",
             **({"compute_spread": f"{r.spread.describe()}: not drawn (the even step is)"} if r.spread else {})}
    return trace_text(tracks, about)
