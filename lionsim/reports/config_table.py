"""A report's Configuration rows from a run's record (run.json's `config`, a sweep.json's `bench`):
the options that say what ran, always, then every other option set away from its default, by one
rule (`at_default`), so a report read alone carries --compute-spread, --local-steps, --traits
and any strategy option the run was given, with no list of them to keep up to date."""

from __future__ import annotations

ALWAYS = ("workload", "model_size", "workers", "batch_size", "steps", "network", "backend", "compute", "seed",
          "data", "data_split", "momentum_sync", "tie", "warmup_steps")
"""Rows every bench report shows where recorded (None left out): what ran, at its default or not."""

NOT_OPTIONS = ("hyper", "strategy", "strategies", "out")
"""Recorded keys that are not rows: each run's resolved hyperparameters and the runs (the `runs`
row names them), and the output folder (the report's own)."""

DEFAULTS = {"sync_tensors": "all", "eval_every": 25, "overlap": "auto", "threads": 1}
"""The bench options outside ALWAYS whose default is a value; every other defaults to None, False
or empty (tests/reports/test_config_table.py holds both against lionsim.config.bench.BenchConfig)."""


def at_default(key: str, value) -> bool:
    """Whether a recorded option is as lionsim sets it when not given."""
    if value is None or value is False or (isinstance(value, (list, tuple, dict, str)) and not value):
        return True
    return key in DEFAULTS and DEFAULTS[key] == value


def value_text(value) -> str:
    """A recorded value in a table cell: a list as its items, comma-separated."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def option_rows(values: dict, skip: tuple[str, ...] = ()) -> list[list[str]]:
    """[option, value] rows: ALWAYS's keys in their order (None left out), then every other recorded
    option away from its default, in the record's order; `skip`: keys shown elsewhere or meaningless
    here (a sweep's grid axes; model_size of a workload file, which sizes its own model)."""
    rows = [[k, value_text(values[k])] for k in ALWAYS if k not in skip and values.get(k) is not None]
    return rows + [[k, value_text(v)] for k, v in values.items()
                   if k not in ALWAYS and k not in skip and k not in NOT_OPTIONS and not at_default(k, v)]
