"""`lionsim sweep --executor ray` on a real two-node Ray cluster (ray.cluster_utils.Cluster, one
CPU per node): its files equal the local executor's cell for cell; a node killed while it
trains a unit loses no finished cell, Ray retries the lost task and the sweep completes with
the same files; a unit that fails in lionsim is recorded once, never retried. Bad input (Ray
missing, an unreachable --ray-address) is one line, exit 2, nothing written.

Every Ray process started here is shut down, the test failing or not (the `cluster` fixture).
Skipped with the reason where the `ray` extra is not installed (pip install -e ".[ray]");
`python -m lionsim.perf sweep` records a run with two local nodes either way."""

import importlib.util
import json
import sys

import pytest

from lionsim.cli.app import main
from lionsim.config.bench import BenchConfig
from lionsim.config.sweep import SweepConfig, plan_sweep
from lionsim.sweep import Grid, SweepEvents, run_sweep
from tests.helpers.cli import run_cli
from tests.helpers.sweeps import sweep_files

SMALL = ["--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--network", "1gbe,10gbe", "--steps", "4",
         "--eval-every", "2", "--batch-size", "8", "--strategy", "adamw", "--strategy", "dlion-mavo"]


@pytest.fixture(autouse=True)
def no_plots(monkeypatch):
    """Plots are the same code on both executors (test_sweep.py draws them); they cost seconds here."""
    monkeypatch.setattr("lionsim.cli.sweep_cmd.draw_plots", lambda out, summary, rounds: [])


def test_without_ray_one_line_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    monkeypatch.delitem(sys.modules, "lionsim.sweep.execute.ray", raising=False)
    code, out, err = run_cli(["sweep", *SMALL, "--executor", "ray", "--out", str(tmp_path / "s")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and 'pip install -e ".[ray]"' in err, err
    assert not (tmp_path / "s").exists()


needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason='the ray extra is not installed (pip install -e ".[ray]")')


@pytest.fixture(scope="module")
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        worker = made.add_node(num_cpus=1)
        made.wait_for_nodes()
        yield made, worker
    finally:
        ray.shutdown()
        made.shutdown()


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "s"
    with pytest.raises(SystemExit) as done:
        main(["sweep", *SMALL, "--out", str(out)])
    assert done.value.code == 0
    return out


@needs_ray
def test_unreachable_address_is_one_line_and_writes_nothing(tmp_path, capsys):
    code, out, err = run_cli(["sweep", *SMALL, "--executor", "ray", "--ray-address", "127.0.0.1:9",
                         "--out", str(tmp_path / "s")], capsys)
    assert code == 2 and "cannot reach the Ray cluster at --ray-address 127.0.0.1:9" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "s").exists()


@needs_ray
def test_two_nodes_equal_the_local_executor_cell_for_cell(cluster, local, tmp_path, capsys):
    made, _ = cluster
    code, out, err = run_cli(["sweep", *SMALL, "--executor", "ray", "--ray-address", made.address,
                         "--out", str(tmp_path / "r")], capsys)
    assert code == 0, err
    assert sweep_files(tmp_path / "r") == sweep_files(local)
    record = json.loads((tmp_path / "r" / "sweep.json").read_text())
    assert record["executor"] == "ray" and record["grid"] == json.loads((local / "sweep.json").read_text())["grid"]


class KillAWorkerNode(SweepEvents):
    """Removes the worker node once two units train at once (one CPU per node: one of them is
    there), and counts starts and published cells."""

    def __init__(self, made, worker) -> None:
        self.made, self.worker = made, worker
        self.starts: dict[str, int] = {}
        self.running: set[str] = set()
        self.published: list[str] = []
        self.before_kill: list[str] | None = None

    def unit_started(self, key: str) -> None:
        self.starts[key] = self.starts.get(key, 0) + 1

    def step(self, key: str, step: int, loss: float) -> None:
        self.running.add(key)
        if self.before_kill is None and len(self.running) == 2:
            self.before_kill = list(self.published)
            self.made.remove_node(self.worker)

    def unit_finished(self, key: str) -> None:
        self.running.discard(key)

    def cell_finished(self, cell, summary, finished: int, total: int) -> None:
        self.published.append(cell.id)


@needs_ray
def test_a_node_killed_mid_sweep_loses_nothing_and_the_sweep_completes(cluster, tmp_path):
    made, worker = cluster
    grid = Grid.parse(workload=["vit"], workers=[2], network=["1gbe", "10gbe"], seed=[0, 1],
                      strategies=["dlion-mavo@a2a-1bit"], transport=None)
    bench = BenchConfig(model_size="tiny", steps=150, eval_every=50, batch_size=8)
    events = KillAWorkerNode(made, worker)
    try:
        run_sweep(plan_sweep(SweepConfig(grid=grid, bench=bench, out=tmp_path / "r", executor="ray",
                                         ray_address=made.address)), events)
    finally:
        if events.before_kill is not None:
            made.add_node(num_cpus=1)  # two nodes again for the tests after this one
    assert events.before_kill is not None, "the two units never trained at once: no node was killed"
    assert max(events.starts.values()) == 2  # the unit on the killed node ran again, on the head
    assert sorted(events.published) == sorted(set(events.published))  # every cell published once
    assert len(events.published) == 4 and set(events.before_kill) <= set(events.published)
    run_sweep(plan_sweep(SweepConfig(grid=grid, bench=bench, out=tmp_path / "l")))
    assert sweep_files(tmp_path / "r") == sweep_files(tmp_path / "l")


@needs_ray
def test_a_unit_failing_in_lionsim_is_recorded_once_not_retried(cluster, tmp_path, capsys):
    made, _ = cluster
    bad = tmp_path / "data.txt"
    bad.write_text("x")
    out = tmp_path / "f"  # mlp generates its data: --data fails inside each unit, in lionsim
    code, stdout, err = run_cli(["sweep", *SMALL, "--data", str(bad), "--executor", "ray",
                            "--ray-address", made.address, "--out", str(out)], capsys)
    assert code == 1 and "failed: 4 cells" in err and "takes no data path" in err, err
    assert sorted(json.loads((out / "failed.json").read_text())) == sorted(
        f"mlp-w2-{net}-s0-{run}" for net in ("1gbe", "10gbe") for run in ("adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"))
    assert err.count("failed: the workload") == 0 and err.count("mlp-w2-s0-adamw@fp32-allreduce failed") == 1
