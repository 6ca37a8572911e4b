"""A sweep takes bench's options for every cell (SPEC: "any bench option for every cell"), so an
option added to bench and forgotten in sweep is caught here, not by a user whose sweep refuses it."""

from __future__ import annotations

import typer.main

from lionsim.cli.app import app
from lionsim.cli.click_compat import click
from lionsim.errors import LionsimError
from tests.helpers.cli import run_cli

BENCH_ONLY = {
    "--ranks": "gloo/nccl processes: a sweep prices every network on the simulator",
    "--timeout": "gloo/nccl collectives' wait",
    "--iface": "gloo/nccl's network interface",
    "--calibrate": "fits gloo/nccl traits on a live group",
    "--trace": "one run's trace.json: a cell is replayed with `lionsim bench` to draw one",
    "--resume": "a sweep resumes by rerunning the same command",
    "--overwrite": "a sweep never clears its finished cells (--overwrite-sweep restarts it)",
    "--overwrite-sweep": "bench's refusal of a sweep's folder names it; bench runs no sweep",
}
"""bench's options a sweep does not take, and why each needs no cell of a grid."""


def _options(command: str) -> set[str]:
    group = typer.main.get_command(app)
    found = group.get_command(click.Context(group), command)
    return {name for p in found.params for name in p.opts if name.startswith("--")}


def test_sweep_takes_every_bench_option_but_the_live_backend_and_output_ones():
    assert _options("bench") - _options("sweep") == set(BENCH_ONLY)


def test_sweep_passes_its_traits_to_every_cell(tmp_path, capsys, monkeypatch):
    """`lionsim sweep --traits` reaches the cells' bench configuration (the planning stops there)."""
    import lionsim.config.sweep as sweep_config

    def planned(cfg, train=True):
        raise LionsimError(f"planned with traits {cfg.bench.traits}")

    monkeypatch.setattr(sweep_config, "plan_sweep", planned)
    code, _, err = run_cli(["sweep", "-w", "mlp", "--traits", "GLOO", "--out", tmp_path / "s"], capsys)
    assert code == 2 and "planned with traits gloo" in err


def test_a_sweep_prices_every_network_with_its_traits(tmp_path):
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.network import network_for
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe", "10gbe"], seed=[0], strategies=["adamw"],
                      transport=None, lr=None)
    plan = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2, traits="gloo"),
                                  out=tmp_path))
    (unit,) = plan.units
    for net in ("1gbe", "10gbe"):
        priced = unit.plan.with_network(net).network.network
        assert priced.traits.name == "gloo" and priced == network_for(net, traits="gloo")
        assert priced != network_for(net)  # the preset's own traits price it otherwise
