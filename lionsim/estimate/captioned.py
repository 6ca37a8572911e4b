"""`lionsim estimate`'s table with its caption: the rows priced (lionsim.estimate.table) and the
lines about the whole table, each from its own module (the hier: forms priced, a node's replica
layout, the library's traits). Composing them here keeps the dependency one way: the notes that
price rows import the table; the table imports none of them.
"""

from __future__ import annotations

import pandas as pd

from lionsim.estimate.activation_note import activation_note
from lionsim.estimate.bucket_note import slower_line
from lionsim.estimate.codec_note import codec_share_line
from lionsim.estimate.config import EstimateConfig, Resolved, resolve
from lionsim.estimate.defaults import DEFAULT_STRATEGIES
from lionsim.estimate.fastest import fastest_line
from lionsim.estimate.hier_hint import faster_forms, hier_notes
from lionsim.estimate.layout_note import replica_layout_note
from lionsim.estimate.library_note import gloo_traits_line, sockets_cap_line, unmeasured_ops_line
from lionsim.estimate.run_baseline import run_baseline_note
from lionsim.estimate.launch_note import launch_bound_note
from lionsim.estimate.sample_note import default_sample_note, tokens_default_line
from lionsim.estimate.table import estimate_rows, frame
from lionsim.network.profile import host_slow_line
from lionsim.runs import split_specs
from lionsim.strategies.core.base import STRATEGIES
from lionsim.transports import TRANSPORTS
from lionsim.transports.allreduce_float import FloatAllReduce

DEFAULT_BASELINE = DEFAULT_STRATEGIES[0]
"""The baseline of estimate's default strategies (DEFAULT_STRATEGIES' first)."""
DEFAULT_BASELINE_NOTE = ("baseline: AdamW's bf16 gradients all-reduced, as large-model trainers run it; -s adamw "
                         "alone all-reduces fp32 (as bench trains it): -s adamw@fp32-allreduce for that baseline.")
"""What the caption says (the frame's attrs["caption_notes"]) where estimate ran its default
strategies: their baseline is not what a bare -s adamw resolves to (the strategy's default
transport, fp32-allreduce), so the two baselines differ."""


def precision_note(frame: pd.DataFrame, bare: set[str] = frozenset()) -> str:
    """The caption's line where the runs all-reduce float values at different precisions (fp32-allreduce
    beside bf16-allreduce) and one of them came from a bare name, "" otherwise (every transport spelled
    out: the mix was asked for). `bare`: the runs (strategy@transport) a bare -s NAME resolved to, its
    strategy's own transport (fp32-allreduce for adamw, lion, diloco: as bench trains it), while
    estimate's default set prices adamw and lion over bf16: the line names those among the float runs
    and how to compare like with like."""
    floats: dict[str, list[str]] = {}
    for strategy, transport in zip(frame["strategy"], frame["transport"]):
        if issubclass(TRANSPORTS.get(transport), FloatAllReduce):
            floats.setdefault(transport, []).append(f"{strategy}@{transport}")
    named = [label for labels in floats.values() for label in labels if label in bare]
    if not named:  # every transport spelled out: what was asked for, the run column says it
        return ""
    if len(floats) == 1 and TRANSPORTS.get(next(iter(floats))).bits == 32:  # all fp32, from bare names: say so
        return (f"fp32 gradients all-reduced: a bare -s NAME is its strategy's own transport "
                f"({', '.join(label.replace('@', ': ') for label in named)}, as bench trains "
                f"{'it' if len(named) == 1 else 'them'}); large-model trainers all-reduce bf16, half the bytes: "
                f"-s {named[0].split('@')[0]}@bf16-allreduce prices that.")
    if len(floats) < 2:
        return ""
    runs = ", ".join(f"{' and '.join(labels)} {transport.split('-')[0]}" for transport, labels in floats.items())
    return (f"Mixed precisions: {runs} gradients all-reduced. A bare -s NAME is its strategy's own transport "
            f"({', '.join(label.replace('@', ': ') for label in named)}, as bench trains "
            f"{'it' if len(named) == 1 else 'them'}): give NAME@TRANSPORT to compare like with like.")


def bare_runs(cfg: EstimateConfig, frame: pd.DataFrame) -> set[str]:
    """The runs (strategy@transport) of `frame` that a bare -s NAME resolved to its strategy's own
    transport: none where --transport or --from-run chose the transport of a bare name."""
    if cfg.strategies is None or cfg.transport is not None or cfg.from_run is not None:
        return set()
    names = {spec for spec in split_specs(list(cfg.strategies)) if "@" not in spec}
    return {f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])
            if s in names and t == STRATEGIES.get(s).default_transport}


def estimate(cfg: EstimateConfig, r: Resolved | None = None) -> pd.DataFrame:
    """The per-step breakdown of every strategy in cfg (one row each, ESTIMATE_COLUMNS first);
    attrs["caption_notes"]: lines about the whole table for its caption (DEFAULT_BASELINE_NOTE where the
    default strategies ran; precision_note where runs all-reduce different floats; hier_notes' priced
    hierarchical forms; replica_layout_note where a node holds several replicas), apart from attrs["notes"],
    the rows' transports' footnotes; attrs["baseline_line"]: run_baseline_note's line, where --from-run priced
    DIR's runs for want of -s and DIR's baseline is not a plain estimate's; attrs["cap_line"] and
    attrs["library_lines"]: the caption's lines about the library that priced comm
    (lionsim.estimate.library_note): the fabric's cap ("" where none binds), the others a line each,
    attrs["unmeasured_line"] among them (its own key: a CSV's notes say it too);
    attrs["faster_hier"]: the hier: forms hier_notes names; attrs["fastest_line"]: the fastest step
    among the rows and those forms (lionsim.estimate.fastest); attrs["slower_line"]: the runs
    exchanged per bucket or tensor that step slower than after backward (lionsim.estimate.bucket_note);
    attrs["codec_line"]: the runs whose encode + decode is a large share of their step (codec_note);
    attrs["tokens_line"]: the tokens a worker where --tokens or --from-run took the default (sample_note)."""
    r = resolve(cfg) if r is None else r  # the command's plan, resolved once
    memo: dict = {}  # the transport questions checked: the after-backward pricing below asks none again
    out = frame(estimate_rows(r, r.workers, r.network, memo))
    out.attrs["device_from"] = r.device_from  # the table's title says whose the device is
    out.attrs["library_chosen"] = r.library_chosen  # no hint to price another library where one was chosen
    notes = []
    if cfg.strategies is None and cfg.from_run is None and out["baseline"].iloc[0] == DEFAULT_BASELINE:
        notes.append(DEFAULT_BASELINE_NOTE)
    if cfg.strategies is None and cfg.baseline is None and r.convergence is not None:  # DIR's baseline, not ours
        base = out[out["strategy"] + "@" + out["transport"] == out["baseline"]].iloc[0]
        if line := run_baseline_note(r, r.convergence.measured, base["baseline"], float(base["step_s"])):
            out.attrs["baseline_line"] = line  # a line of its own: every speedup is against it
    if mixed := precision_note(out, bare_runs(cfg, out)):
        notes.append(mixed)
    faster = faster_forms(r, out.to_dict("records"))  # a flat compressing transport on multi-GPU nodes
    notes += hier_notes(r, out, faster)  # its hier: form, priced
    out.attrs["faster_hier"] = [hier for _run, hier, _priced in faster]  # a sweep's notes leave out what it said
    out.attrs["fastest_line"] = fastest_line(out, faster)  # the rows' and those forms' fastest step
    out.attrs["slower_line"] = slower_line(r, out, memo)  # per bucket, yet slower than after backward
    out.attrs["codec_line"] = codec_share_line(out)  # the speedups rest on lionsim's own codec kernels
    if layout := replica_layout_note(r.network, r.replica_gpus, r.device.name):
        notes.append(layout)  # a node of several workers that are each several devices
    if launches := launch_bound_note(r):
        notes.append(launches)  # compute is the kernels' launch floor, not the FLOPs the caption names
    fitting = out[out["memory_fits"]] if "memory_fits" in out.columns else out.iloc[:0]
    leanest = fitting.loc[fitting["memory_bytes"].idxmin()] if len(fitting) else None
    states = None if leanest is None else (f"{leanest['strategy']}@{leanest['transport']}",
                                           int(leanest["memory_bytes"]))
    if activations := activation_note(r, states):
        notes.append(activations)  # the batch's activations with the state outgrow the device: priced all the same
    if sample := default_sample_note(cfg.tokens_per_worker is not None, cfg.model, r.flops_per_unit is not None,
                                     r.tokens_per_worker):
        notes.append(sample)  # one image a worker: the speedups are an upper end
    out.attrs["tokens_line"] = tokens_default_line(cfg.tokens_per_worker is not None,
                                                   cfg.tokens is not None or cfg.from_run is not None,
                                                   r.tokens_per_worker, out["unit"].iloc[0])
    out.attrs["cap_line"] = sockets_cap_line(r.network, r.workers)  # left out where --need's table says it
    out.attrs["unmeasured_line"] = unmeasured_ops_line(r, cfg.network)  # also on stderr where no caption prints
    out.attrs["library_lines"] = [line for line in (gloo_traits_line(r.network, cfg.network, cfg.traits),
                                                    out.attrs["unmeasured_line"],
                                                    host_slow_line(cfg.network, "sim")) if line]
    if notes:
        out.attrs["caption_notes"] = notes
    return out
