"""One lookup for every way of naming a workload: a built-in (`mlp`), an installed plugin (an entry
point of `lionsim.workloads`), or a user's function (`FILE.py:FUNC`, `package.module:FUNC`).

Everything that takes a workload name (bench, sweep, regress, the memory guard, the listings)
goes through here, so a plugin is a workload like the built-ins.
"""

from __future__ import annotations

from lionsim.forms import unknown_workload
from lionsim.plugin_load import is_spec, parse_spec
from lionsim.workloads.base import WORKLOADS, Workload
from lionsim.workloads.config import WorkloadConfig
from lionsim.workloads.plugin import is_plugin, plugin_class, plugin_names


def canonical_workload(name: str) -> str:
    """The name run.json and the CSVs record: a built-in's listed spelling, an entry point's name,
    or `ABSOLUTE_FILE.py:FUNC` / `module:FUNC` (the file and function must exist)."""
    if name in WORKLOADS:
        return WORKLOADS.canonical(name)
    return workload_class(name).name


def workload_class(name: str) -> type[Workload]:
    """The Workload class `name` names (see the module docstring); an unknown name is one line
    listing the built-ins, the installed plugins and the spec forms."""
    if name in WORKLOADS:
        return WORKLOADS.get(name)
    if is_spec(name):
        return plugin_class(parse_spec(name, "--workload").text)
    try:
        return plugin_class(name)
    except KeyError:
        pass
    raise unknown_workload(name, list(plugin_names()))


def build_workload(cfg: WorkloadConfig) -> Workload:
    """The workload `cfg.name` (a built-in, an installed plugin or FILE.py:FUNC), built from `cfg`
    (LionsimError on any bad input)."""
    return workload_class(cfg.name)(cfg)


def check_workload(cfg: WorkloadConfig) -> None:
    """Everything that could fail in building `cfg`'s workload, before anything is written: for a
    plugin it is built (its function called once per process, its pieces checked, the split
    drawn); for a built-in, its --data path as far as it can be told unread (Workload.check_data)
    and --eval-samples against what its generated data holds out (a data set's is checked where
    it is read)."""
    cls = workload_class(cfg.name)
    if is_plugin(cls):
        cls(cfg)
        return
    cls.check_data(cfg)
    if cls.heldout_limit(cfg) is not None:
        cls.generated_eval_size(cfg)
