"""The command layer's configuration: what `lionsim bench` and `lionsim sweep` gather from flags,
TOML and run.json, checked once and resolved into plans.

    bench.py     BenchConfig: a bench's options and their checks (`validate`)
    planning.py  plan(cfg): a BenchConfig resolved into the frozen BenchPlan (lionsim.plan)
    sends.py     every payload a plan's runs send, asked of their transports before any training
    sweep.py     SweepConfig: a grid and the bench options its cells share, planned into a SweepPlan

Only the command layer (lionsim.cli, the library entry lionsim.bench) and the harnesses that drive
commands (lionsim.docgen, lionsim.regress) import this package; training, launch, measure, sweep and
reports read plans (tests/architecture/test_layers.py holds the line).

bench.py and planning.py import no torch: BenchConfig.check_plain refuses a bad number, network,
device or layout in a moment, then validate a bad strategy or transport name (lionsim.name_table),
and only then does it read the registries (strategies, workloads), whose modules import it
(tests/cli/test_quick_imports.py, tests/cli/test_quick_names.py).
"""
