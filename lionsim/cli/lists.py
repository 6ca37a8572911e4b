"""`lionsim --version` and the registry listings."""

from __future__ import annotations

from typing import Optional

import typer

import lionsim
from lionsim.cli.app import app, console


def _version(value: bool) -> None:
    if value:
        console.print(f"lionsim {lionsim.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Benchmark and simulator for sign-compressed distributed Lion over modelled networks."""


@app.command()
def strategies(
    workers: int = typer.Option(8, "--workers", "-n", help="Worker count the bits per parameter are given for."),
    workload: Optional[str] = typer.Option(
        None, "--workload", "-w", help="Show the default lr and weight decay a run on this workload gets."),
) -> None:
    """List the strategies: what each sends, over which transports, at how many bits, with their defaults."""
    from rich.table import Table

    from lionsim.aggregators import MajorityVote
    from lionsim.errors import LionsimError
    from lionsim.strategies import STRATEGIES, valid_transports
    from lionsim.transports import TRANSPORTS, PayloadSpec

    if workers < 1:
        raise LionsimError(f"bad --workers {workers}; accepted: an integer >= 1")
    if workload is not None:
        from lionsim.workloads import WORKLOADS

        WORKLOADS.get(workload)  # an unknown name fails with the list
    where = f"; defaults on {workload}" if workload else ""
    table = Table(title=f"strategies (bits per parameter for {workers} workers, default transport first{where})")
    for col in ("strategy", "what it does", "sends", "transports", "bits up/down", "lr", "wd"):
        table.add_column(col, overflow="fold")
    for name, cls in STRATEGIES.items():
        transports = valid_transports(cls)
        transports.sort(key=lambda t: t != cls.default_transport)
        rule = getattr(cls, "rule", MajorityVote())
        spec = PayloadSpec(kind=cls.payload_kind, numel=10**6, rule=rule, max_level=cls.levels(workers) if hasattr(cls, "levels") else max(1, 127 // workers),
                           segments=10, k=10**4)
        bits = [TRANSPORTS.get(t)().bits_per_param(spec, workers) for t in transports]
        table.add_row(name, cls.summary, cls.payload_kind, "\n".join(transports),
                      "\n".join(f"{u:.3g}/{d:.3g}" for u, d in bits),
                      f"{cls.defaults_for(workload).lr:g}", f"{cls.defaults_for(workload).weight_decay:g}")
    console.print(table)
    console.print("Transports: " + "; ".join(f"{n}: {t.summary}" for n, t in TRANSPORTS.items()))


@app.command()
def workloads() -> None:
    """List the workloads with a line each."""
    from rich.table import Table

    from lionsim.workloads import WORKLOADS

    table = Table(title="workloads")
    table.add_column("workload")
    table.add_column("what it is", overflow="fold")
    for name, cls in WORKLOADS.items():
        table.add_row(name, cls.summary)
    console.print(table)
