"""A plug-in that declares no memory passes (a strategy without `bytes`, a local-step one without
`local_step_bytes`, a transport without `wire_bytes`) is refused before any training wherever the compute is modelled (bench and sweep
at plan time, estimate), in one line naming its file and the fix; `--compute measured` trains it.
The plug-ins count their own calls, so "before any training" is what they saw, not a guess."""

from __future__ import annotations

import sys
import textwrap

import pandas as pd
import pytest

from lionsim.cli.strategy_flags import refresh
from lionsim.plugins import LOADED, load_plugin, unload_plugin
from tests.helpers.cli import exit_code, one_line_exit_2, run_cli, table_text

STRATEGY = '''
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.strategies.core.base import Hyper
from lionsim.transports import Payload, PayloadSpec

ENCODED = []  # one entry per encode call: the test reads it


@STRATEGIES.register("nobytes-sgd")
class NoBytesSgd(Strategy):
    name = "nobytes-sgd"
    summary = "SGD whose module declares no bytes"
    payload_kind = "dense"
    default_transport = "fp32-allreduce"
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))
    ignores = ("betas",)

    def payload_spec(self):
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def encode(self, grads, params, comm, clock):
        ENCODED.append(1)
        return Payload(self.payload_spec(), grads)

    def apply(self, params, aggregate):
        params.sub_(aggregate[0], alpha=self.hyper.lr)
'''

TRANSPORT = '''
from lionsim.network.calls import CollectiveCall
from lionsim.transports import AFTER_BACKWARD, TRANSPORTS, Transport

AGGREGATED = []  # one entry per aggregate call: the test reads it


@TRANSPORTS.register("nowire-allreduce")
class NoWireAllReduce(Transport):
    name = "nowire-allreduce"
    summary = "float32 all-reduce whose module declares no wire_bytes"
    carries = ("dense",)

    def aggregate(self, payload, comm, clock=None):
        AGGREGATED.append(1)
        return comm.all_reduce(payload.values.float()) / comm.world_size

    def plan(self, spec, workers):
        return [CollectiveCall("all_reduce", 4 * spec.numel, "gradients")]

    def bits_per_param(self, spec, workers):
        return 32.0, 32.0
'''


NOLOCAL = '''
from lionsim.strategies import STRATEGIES
from lionsim.strategies.local_steps import LocalSGD

ENCODED = []  # one entry per encode call: the test reads it


@STRATEGIES.register("nolocal-sgd")
class NoLocal(LocalSGD):
    name = "nolocal-sgd"
    summary = "local SGD whose module declares no local_step_bytes"
    local_step_bytes = None

    def encode(self, grads, params, comm, clock):
        ENCODED.append(1)
        return super().encode(grads, params, comm, clock)
'''

HALFWIRE = '''
from lionsim.transports import TRANSPORTS
from lionsim.transports.allreduce_float import Fp32AllReduce


@TRANSPORTS.register("halfwire-allreduce")
class HalfWire(Fp32AllReduce):
    name = "halfwire-allreduce"
    summary = "float32 all-reduce whose wire_bytes knows no spec"

    def wire_bytes(self, spec, workers):
        return None
'''


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """The plug-in files, loaded (a command's --plugin finds them loaded), forgotten after."""
    folder = tmp_path_factory.mktemp("undeclared")
    paths = {}
    for name, source in (("nobytes.py", STRATEGY), ("nowire.py", TRANSPORT), ("nolocal.py", NOLOCAL),
                           ("halfwire.py", HALFWIRE)):
        paths[name] = folder / name
        paths[name].write_text(textwrap.dedent(source))
    keys = [load_plugin(p) for p in paths.values()]
    refresh()
    yield paths
    for key in keys:
        if key in LOADED:
            unload_plugin(key)
    refresh()


def calls(path, counter: str) -> list:
    """A loaded plug-in file's call counter."""
    return getattr(sys.modules[LOADED[str(path.resolve())][0]], counter)


BENCH = ["-w", "mlp", "--model-size", "tiny", "-n", "2", "--steps", "2", "--eval-every", "2"]


def test_bench_sweep_and_estimate_refuse_a_strategy_without_bytes_in_one_line(plugins, tmp_path, capsys):
    path = plugins["nobytes.py"]
    plug = ["--plugin", str(path)]
    line = (f"error: plugin {path}: strategy 'nobytes-sgd' declares no bytes, which the modelled compute times its "
            "encode and update with; declare `bytes = StrategyBytes(rule, update, why)` as docs/writing-a-strategy.md "
            "shows, or run bench or sweep with --compute measured, which times the passes on the clock\n")
    calls(path, "ENCODED").clear()
    # bench trained both runs to the end, then failed booking the second: refused at plan time now
    bench = one_line_exit_2(["bench", *plug, "-s", "adamw", "-s", "nobytes-sgd", *BENCH, "--out", tmp_path / "b"],
                            capsys)
    sweep = one_line_exit_2(["sweep", *plug, "-s", "adamw", "-s", "nobytes-sgd", *BENCH, "--out", tmp_path / "s"],
                            capsys)
    estimate = one_line_exit_2(["estimate", *plug, "-s", "nobytes-sgd", "--params", "1e6", "--tokens-per-worker", "100",
                                "-n", "2"], capsys)
    assert bench == sweep == estimate == line
    assert calls(path, "ENCODED") == []  # nothing trained
    assert not (tmp_path / "b").exists() and not (tmp_path / "s").exists()


def test_measured_compute_needs_no_bytes_and_trains_it(plugins, tmp_path):
    path = plugins["nobytes.py"]
    calls(path, "ENCODED").clear()
    assert exit_code(["bench", "--plugin", str(path), "-s", "nobytes-sgd", *BENCH, "--compute", "measured",
                      "--out", str(tmp_path / "m")]) == 0
    assert len(pd.read_csv(tmp_path / "m" / "steps.csv")) == 2 and len(calls(path, "ENCODED")) == 2


def test_a_transport_without_wire_bytes_is_refused_before_training_naming_the_fix(plugins, tmp_path, capsys):
    path = plugins["nowire.py"]
    plug = ["--plugin", str(path)]
    line = (f"error: plugin {path}: transport 'nowire-allreduce' declares no wire_bytes, which the modelled compute "
            "times its packing and unpacking with; define `wire_bytes(self, spec, workers)` returning "
            "TransportBytes(pack, unpack, aggregate) as docs/writing-a-strategy.md shows, or run bench or sweep with "
            "--compute measured, which times the passes on the clock\n")
    calls(path, "AGGREGATED").clear()
    bench = one_line_exit_2(["bench", *plug, "-s", "adamw", "-s", "adamw@nowire-allreduce", *BENCH,
                             "--out", tmp_path / "b"], capsys)
    sweep = one_line_exit_2(["sweep", *plug, "-s", "adamw@nowire-allreduce", *BENCH, "--out", tmp_path / "s"], capsys)
    priced = ["--params", "1e6", "--tokens-per-worker", "100"]
    estimate = one_line_exit_2(["estimate", *plug, "-s", "adamw@nowire-allreduce", *priced, "-n", "2"], capsys)
    # across nodes, hier: prices its inner transport's passes: the inner is the one named
    hier = one_line_exit_2(["estimate", *plug, "-s", "adamw@hier:nowire-allreduce", *priced, "-n", "4",
                            "--gpus-per-node", "2"], capsys)
    assert bench == sweep == estimate == hier == line
    assert calls(path, "AGGREGATED") == []
    assert not (tmp_path / "b").exists() and not (tmp_path / "s").exists()
    # measured compute times the passes; a lone worker packs nothing, so the modelled one needs none: both train
    assert exit_code(["bench", *plug, "-s", "adamw@nowire-allreduce", *BENCH, "--compute", "measured",
                      "--out", str(tmp_path / "m")]) == 0
    assert len(calls(path, "AGGREGATED")) == 2
    alone = [a if a != "2" else "1" for a in BENCH[:6]] + BENCH[6:]  # -n 1
    assert exit_code(["bench", *plug, "-s", "adamw@nowire-allreduce", *alone, "--out", str(tmp_path / "one")]) == 0


def test_the_matrix_names_the_missing_bytes_not_model(plugins, capsys):
    from lionsim.cli.matrix import matrix_table, strategy_matrix

    row = next(r for r in strategy_matrix() if r["strategy"] == "nobytes-sgd")
    assert row["estimate"] == "no: it declares no bytes"
    text = table_text(matrix_table())
    block = text[text.index(" nobytes-sgd"):].split("\n\n")[0]
    assert "declares no bytes" in block and "--compute measured" in block and "--model" not in block
    code, out, _ = run_cli(["strategies", "--plugin", plugins["nobytes.py"], "--matrix", "--format", "csv"], capsys)
    assert code == 0 and "nobytes-sgd" in out and "no: it declares no bytes" in out


def test_a_local_step_strategy_without_local_step_bytes_is_refused_before_training(plugins, tmp_path, capsys):
    # it trained every step, then failed booking them, in a line naming neither the file nor the fix
    path = plugins["nolocal.py"]
    plug = ["--plugin", str(path)]
    line = (f"error: plugin {path}: strategy 'nolocal-sgd' declares no local_step_bytes, which the modelled compute "
            "times its local steps (those that do not exchange) with; declare `local_step_bytes = BYTES`, the bytes "
            "per parameter its inner step moves, as docs/writing-a-strategy.md shows, or run bench or sweep with "
            "--compute measured, which times the passes on the clock\n")
    calls(path, "ENCODED").clear()
    local = ["-s", "nolocal-sgd", "-w", "mlp", "--model-size", "tiny", "-n", "2", "--steps", "4", "--local-steps", "2"]
    bench = one_line_exit_2(["bench", *plug, *local, "--out", tmp_path / "b"], capsys)
    sweep = one_line_exit_2(["sweep", *plug, *local, "--out", tmp_path / "s"], capsys)
    estimate = one_line_exit_2(["estimate", *plug, "-s", "nolocal-sgd", "--local-steps", "2", "--params", "1e6",
                                "--tokens-per-worker", "100", "-n", "2"], capsys)
    assert bench == sweep == estimate == line
    assert calls(path, "ENCODED") == []
    assert not (tmp_path / "b").exists() and not (tmp_path / "s").exists()
    # one step per sync takes no local step, so it needs none; measured compute times them on the clock
    synced = [*local[:-1], "1"]  # --local-steps 1
    assert exit_code(["bench", *plug, *synced, "--out", str(tmp_path / "one")]) == 0
    assert exit_code(["bench", *plug, *local, "--compute", "measured", "--out", str(tmp_path / "m")]) == 0
    assert len(pd.read_csv(tmp_path / "m" / "steps.csv")) == 4 and len(calls(path, "ENCODED")) == 8


def test_the_matrix_says_no_for_a_local_step_strategy_without_local_step_bytes(plugins):
    from lionsim.cli.matrix import strategy_matrix

    rows = {r["strategy"]: r["estimate"] for r in strategy_matrix()}
    assert rows["localsgd"] == "yes" and rows["nolocal-sgd"] == "no: it declares no local_step_bytes"


def test_a_wire_bytes_override_returning_none_is_named_as_such(plugins):
    # it overrides wire_bytes, so "declares no wire_bytes" was wrong; only pricing the spec shows it
    from lionsim.errors import LionsimError
    from lionsim.steptime.wire_passes import transport_bytes
    from lionsim.transports import PayloadSpec

    path = plugins["halfwire.py"]
    with pytest.raises(LionsimError) as raised:
        transport_bytes("halfwire-allreduce", PayloadSpec(kind="dense", numel=10), 2)
    assert str(raised.value) == (
        f"plugin {path}: transport 'halfwire-allreduce': its wire_bytes returned None for a 'dense' payload of 10 "
        "values on 2 workers, which this run sends, so the modelled compute cannot time its packing and unpacking; "
        "return TransportBytes(pack, unpack, aggregate) for every spec it carries, or run bench or sweep with "
        "--compute measured, which times the passes on the clock")
