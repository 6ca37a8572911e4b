"""bench's --timeout, --bucket-mb and --warmup-steps act or are refused in one line: --timeout only
where a run waits on other processes (gloo/nccl), --bucket-mb only where an exchange runs per bucket
(sim, --overlap auto or buckets, a run whose strategy and transport exchange so, more than one
worker), --warmup-steps only where a time is measured (gloo/nccl, or --compute measured)."""

from __future__ import annotations

import json

import pytest

from lionsim.backends import BACKENDS, MAX_TIMEOUT_S
from lionsim.backends.scope import SCOPE, SCOPES, shown
from lionsim.bench import BenchConfig
from lionsim.config.bench import for_backend
from lionsim.errors import LionsimError
from lionsim.steptime.overlap import DEFAULT_BUCKET_MB, OverlapConfig
from lionsim.strategies import STRATEGIES
from lionsim.training.resume import RECORDED_EVERYWHERE, drop_inert_defaults
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import one_line_exit_2

B = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2"]


@pytest.mark.parametrize("args, message", [
    (["--backend", "sim", "--timeout", "0.001"], "--timeout 0.001 needs --backend gloo or nccl: sim is one process"),
    (["--timeout", "0"], "bad --timeout 0; accepted: a number above 0 and at most 31,536,000 (seconds; a year)"),  # the value first
    (["--overlap", "none", "--bucket-mb", "1"], "--bucket-mb 1 sizes per-bucket exchanges and --overlap none runs "
                                                "every exchange after backward; accepted with --overlap auto or buckets"),
    (["--overlap", "after", "--bucket-mb", "1"], "--overlap none runs every exchange after backward"),
    (["--overlap", "tensors", "--bucket-mb", "1"], "--overlap tensors runs every exchange tensor by tensor"),
    (["--backend", "gloo", "--bucket-mb", "1"], "--bucket-mb 1 needs --backend sim: a gloo run sends after backward"),
    (["-s", "dlion-mavo", "--bucket-mb", "1"], "no run here has one: under --overlap auto dlion-mavo@int8-allreduce "
                                               "exchanges after backward"),
    (["-n", "1", "-s", "adamw", "--bucket-mb", "1"], "no run here has one: 1 worker exchanges nothing"),
    (["--overlap", "none", "--bucket-mb", "0"], "bad --bucket-mb 0; accepted: a finite number at least 0.000004 (MB of fp32 gradients; a smaller bucket holds not one 4-byte gradient)"),  # the value first
])
def test_an_option_that_cannot_act_is_refused_in_one_line(args, message, tmp_path, capsys):
    one_line_exit_2([*B, *args, "--out", str(tmp_path / "out")], capsys, message)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spelling", ["inf", "Infinity", "-inf", "1e400", "nan", "NaN", "0", "-0", "-1", "1e10",
                                      str(MAX_TIMEOUT_S + 1)])
def test_every_spelling_of_a_timeout_gloo_cannot_wait_is_refused_before_anything_runs(spelling, tmp_path, capsys):
    """inf, nan, 0, negatives and a wait past a year (torch overflows near 9.2e9 s: 1e10 failed at
    once in the rendezvous) are one line, exit 2, before any rank starts or --out is made."""
    one_line_exit_2([*B, "--backend", "gloo", "--timeout", spelling, "--out", str(tmp_path / "out")], capsys,
                    f"accepted: a number above 0 and at most {MAX_TIMEOUT_S:,} (seconds; a year)")
    assert not (tmp_path / "out").exists()


def test_a_timeout_up_to_a_year_is_taken():
    assert BenchConfig(backend="gloo", timeout=MAX_TIMEOUT_S).timeout == MAX_TIMEOUT_S
    BenchConfig(workload="mlp", backend="gloo", timeout=MAX_TIMEOUT_S).check_plain()
    BenchConfig(workload="mlp", backend="gloo", timeout=1e-3).check_plain()


def test_the_defaults_resolve_where_they_act():
    assert BenchConfig(backend="sim").timeout is None and BenchConfig(backend="gloo").timeout == 60.0
    assert BenchConfig(backend="gloo", timeout=5).timeout == 5
    assert OverlapConfig().bucket_params == OverlapConfig(bucket_mb=DEFAULT_BUCKET_MB).bucket_params == 25e6 // 4


@pytest.mark.parametrize("overlap", ["auto", "buckets"])
def test_bucketed_runs_are_those_the_schedule_runs_per_bucket(overlap):
    """Against the plain rule: a run's exchanges are sized by the bucket exactly when the overlap
    schedule of its (transport, strategy) is per bucket and not per tensor."""
    cfg = BenchConfig(workload="mlp", workers=4, overlap=overlap,
                      strategies=["adamw", "dlion-mavo", "onebit-adam", "diloco", "powersgd"])
    runs = cfg.validate()
    mode = OverlapConfig(mode=overlap)
    expected = [r.label for r in runs if mode.schedule(TRANSPORTS.get(r.transport), STRATEGIES.get(r.strategy)) == "buckets"]
    assert [r.label for r in cfg.bucketed(runs)] == expected and "adamw@fp32-allreduce" in expected
    assert len(expected) < len(runs)  # some run here exchanges after backward


def test_a_run_json_from_before_records_the_old_defaults_and_still_replays(tmp_path, capsys):
    """run.json recorded timeout 60 on sim and bucket_mb 25 where no bucket formed: a replay takes
    them as not given (they changed nothing), where a typed --timeout on sim is refused."""
    from tests.helpers.cli import run_cli

    record = {"command": "bench", "config": {"workload": "mlp", "model_size": "tiny", "workers": 2, "steps": 1,
                                             "warmup_steps": 0, "strategy": ["dlion-mavo"], "backend": "sim",
                                             "timeout": 60.0, "bucket_mb": 25.0, "overlap": "auto"}}
    (tmp_path / "run.json").write_text(json.dumps(record))
    code, _, err = run_cli(["bench", "--config", tmp_path / "run.json", "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "run.json").read_text())["config"]["bucket_mb"] is None


def _record(tmp_path, **config):
    """A bench's run.json: a tiny run of one step with `config` over it."""
    base = {"workload": "mlp", "model_size": "tiny", "workers": 2, "steps": 1, "warmup_steps": 0,
            "strategy": ["adamw"], "backend": "gloo", "timeout": 60.0, "compute": "measured"}
    path = tmp_path / "rec" / "run.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"command": "bench", "config": {**base, **config}}))
    return path


def test_a_gloo_runs_record_replays_on_sim_without_what_acts_on_gloo_alone(tmp_path, capsys):
    """--backend sim on a gloo run's run.json: the ranks, timeout, interface and calibration go (one
    line says which and why), the rest is the run as recorded (its measured compute too)."""
    from tests.helpers.cli import run_cli

    record = _record(tmp_path, ranks=2, iface="lo", calibrate=True)
    code, _, err = run_cli(["bench", "--config", record, "--backend", "sim", "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {record} sets --backend gloo; on --backend sim it runs without --timeout 60, --ranks 2, "
                     "--iface lo, --calibrate, which act on gloo, not on sim"]
    config = json.loads((tmp_path / "out" / "run.json").read_text())["config"]
    assert (config["backend"], config["ranks"], config["timeout"], config["iface"], config["calibrate"]) == \
        ("sim", None, None, None, False)
    assert config["compute"] == "measured" and config["workers"] == 2


@pytest.mark.parametrize("file, typed, warm_up", [
    ("run.json", ["--compute", "h100"], None),  # docs/commands.md's replay: the modelled GPU step
    ("bench.toml", ["--compute=H100"], None),  # any spelling of the typed compute
    ("run.json", ["--compute", "Measured"], 2),  # still measured: the warm-up acts
])
def test_a_measured_record_on_sim_drops_its_warm_up_by_the_compute_typed(file, typed, warm_up, tmp_path, capsys):
    """A gloo run's record (--compute measured, --warmup-steps 2) with --backend sim and a --compute
    typed: the compute the replay runs with, not the recorded one, decides whether the warm-up goes
    (it was refused: "--warmup-steps 2 ... sim on --compute h100 measures nothing")."""
    from tests.helpers.cli import run_cli

    if file == "run.json":
        config = _record(tmp_path, steps=3, warmup_steps=2)
    else:
        config = tmp_path / file
        config.write_text('workload = "mlp"\nmodel-size = "tiny"\nworkers = 2\nsteps = 3\nstrategy = ["adamw"]\n'
                          'backend = "gloo"\ncompute = "measured"\nwarmup-steps = 2\n')
    code, _, err = run_cli(["bench", "--config", config, "--backend", "sim", *typed, "--out", tmp_path / "out"],
                           capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert ("--warmup-steps 2" in "".join(notes)) == (warm_up is None), notes
    recorded = json.loads((tmp_path / "out" / "run.json").read_text())["config"]
    assert (recorded["backend"], recorded["warmup_steps"]) == ("sim", warm_up)
    assert recorded["compute"].lower() == typed[-1].split("=")[-1].lower()


@pytest.mark.parametrize("typed, message", [
    (["--timeout", "5"], "--timeout 5 needs --backend gloo or nccl"),
    (["--ranks", "2"], "--ranks 2 needs --backend gloo or nccl"),
    (["--calibrate"], "--calibrate needs --backend gloo or nccl"),
])
def test_what_the_command_line_types_is_refused_on_sim_as_ever(typed, message, tmp_path, capsys):
    from tests.helpers.cli import run_cli

    record = _record(tmp_path)
    code, _, err = run_cli(["bench", "--config", record, "--backend", "sim", *typed, "--out", tmp_path / "out"],
                           capsys)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("error: ") and message in lines[-1] and "Traceback" not in err
    assert all(typed[0] not in line for line in lines[:-1])  # the note names what the file set, not this
    assert not (tmp_path / "out").exists()


def test_a_sim_record_on_gloo_leaves_its_bucket_and_per_bucket_overlap(tmp_path, capsys):
    """The other way: the bucket and a per-bucket overlap act on sim alone; the defaults the
    command is given are what the file sets but those (no rank starts here: click's defaults only)."""
    from lionsim.cli.app import click_app, err_console
    from lionsim.cli.config_file import config_defaults

    record = _record(tmp_path, backend="sim", timeout=None, compute="h100", bucket_mb=5.0, overlap="buckets")
    defaults = config_defaults(["bench", "--config", str(record), "--backend", "gloo"], click_app, err_console)["bench"]
    assert "bucket_mb" not in defaults and "overlap" not in defaults
    assert defaults["compute"] == "h100" and defaults["workers"] == 2
    assert capsys.readouterr().err.strip() == (f"note: {record} sets --backend sim; on --backend gloo it runs without "
                                               "--bucket-mb 5, --overlap buckets, which act on sim, not on gloo")
    same = config_defaults(["bench", "--config", str(record), "--backend", "SIM"], click_app, err_console)["bench"]  # the same backend
    assert same["bucket_mb"] == 5.0 and capsys.readouterr().err == ""


REAL = {"gloo/h100", "gloo/measured", "nccl/h100", "nccl/measured"}
SIM = {"sim/h100", "sim/measured"}
ANYWHERE = REAL | SIM
ACCEPTED = [
    # key, value: the backend/compute pairs where check_plain takes it, written by hand
    ("warmup_steps", 1, REAL | {"sim/measured"}),  # where a time is measured
    ("warmup_steps", 0, ANYWHERE),  # 0 leaves no step out: nothing to refuse anywhere
    ("ranks", 2, REAL), ("ranks", 1, ANYWHERE),  # one rank is sim's own layout
    ("timeout", 5.0, REAL), ("iface", "lo", REAL), ("calibrate", True, REAL),
    ("bucket_mb", 5.0, SIM), ("overlap", "buckets", SIM), ("overlap", "Tensors", SIM),
    ("overlap", "none", ANYWHERE), ("overlap", "auto", ANYWHERE),
]


def test_the_table_covers_every_option_bound_to_a_backend():
    assert {key for key, _, _ in ACCEPTED} == {scope.key for scope in SCOPES}


@pytest.mark.parametrize("key, value, accepted", [*ACCEPTED, ("workers", 4, ANYWHERE), ("seed", 3, ANYWHERE)])
def test_a_replay_drops_an_option_exactly_where_check_plain_refuses_it(key, value, accepted):
    """Per backend and compute: check_plain refuses the option (with its scope's line) where the
    table says it cannot act, a record of another backend replayed there drops it, and an older
    record holding it there loses it where an older lionsim recorded it everywhere."""
    for backend in BACKENDS:
        for compute in ("h100", "measured", "Measured"):  # check_plain takes measured in any case
            where = f"{backend}/{compute.lower()}"
            cfg = BenchConfig(workload="mlp", steps=10, backend=backend, compute=compute, **{key: value})
            try:
                cfg.check_plain()
                refused = None
            except LionsimError as e:
                refused = str(e)
            other = next(b for b in BACKENDS if b != backend)
            _, dropped = for_backend({"backend": other, "compute": compute, key.replace("_", "-"): value}, backend)
            if where in accepted:
                assert refused is None and not dropped, (key, value, where, refused)
            else:
                assert refused == SCOPE[key].refuse(getattr(cfg, key), backend, compute)  # its value as check_plain spells it
                assert refused.lower().startswith(shown(key, value).lower() + " ")
                assert dropped == {key.replace("_", "-"): value}, (key, value, where)
            if key in RECORDED_EVERYWHERE:
                record = {"backend": backend, "compute": compute, key: value}
                assert (key not in drop_inert_defaults(record)) == (refused is not None), (key, where)


def test_a_warm_up_acts_only_where_a_time_is_measured(tmp_path, capsys):
    """On sim with a --compute device every time is modelled: --warmup-steps 0 and 5 wrote the same
    steps.csv and summary.csv. Now it is refused there, left unset by default (run.json: null), and
    taken with --compute measured, where the medians drop that many steps."""
    from tests.helpers.cli import run_cli

    one_line_exit_2([*B, "--warmup-steps", "1", "--out", str(tmp_path / "x")], capsys,
                    "--warmup-steps 1 does not apply on sim with --compute h100: every time is modelled, none "
                    "measured, so no step is left out of the timing medians; accepted with --compute measured or "
                    "--backend gloo|nccl")
    assert not (tmp_path / "x").exists()
    assert BenchConfig(workload="mlp", steps=10).warmup_steps is None
    assert BenchConfig(workload="mlp", steps=10, compute="measured").warmup_steps == 3
    assert BenchConfig(workload="mlp", steps=10, backend="gloo").warmup_steps == 3
    code, _, err = run_cli([*B, "-s", "adamw", "--out", tmp_path / "a"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "a" / "run.json").read_text())["config"]["warmup_steps"] is None
    code, _, err = run_cli([*B, "-s", "adamw", "--compute", "measured", "--warmup-steps", "1", "--out", tmp_path / "m"],
                           capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "m" / "run.json").read_text())["config"]["warmup_steps"] == 1


def test_too_many_warm_up_steps_where_none_apply_is_refused_as_not_applying(capsys):
    """The range a refusal accepts is true for the configuration: on sim with a device no warm-up
    applies, so '--warmup-steps 5 --steps 2' is not told 'accepted: 0 to 1' (which 1 then refuses)."""
    one_line_exit_2(["bench", "-w", "mlp", "--warmup-steps", "5", "--steps", "2"], capsys,
                    "--warmup-steps 5 does not apply on sim with --compute h100")
    one_line_exit_2(["bench", "-w", "mlp", "--warmup-steps", "5", "--steps", "2", "--compute", "measured"], capsys,
                    "bad --warmup-steps 5: a run of 2 steps would have no timed step left; accepted: a whole number from 0 to 1")


def test_a_record_whose_warm_up_could_not_act_replays_without_it(tmp_path, capsys):
    """A sim run's run.json from before recorded the default warm-up on a device; a gloo run's (on a
    device) replayed on sim: both run, the warm-up dropped (with the note for the other backend)."""
    from tests.helpers.cli import run_cli

    old = {"command": "bench", "config": {"workload": "mlp", "model_size": "tiny", "workers": 2, "steps": 2,
                                          "warmup_steps": 1, "strategy": ["adamw"], "backend": "sim",
                                          "compute": "h100"}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    code, _, err = run_cli(["bench", "--config", tmp_path / "old.json", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["bench", "--config", _record(tmp_path, compute="h100", warmup_steps=1), "--backend", "sim",
                            "--out", tmp_path / "g"], capsys)
    assert code == 0 and "--warmup-steps 1" in err, err
    assert json.loads((tmp_path / "g" / "run.json").read_text())["config"]["warmup_steps"] is None


def test_no_warm_up_is_taken_on_sim_with_a_device(tmp_path, capsys):
    """--warmup-steps 0 was refused on sim with --compute h100 ("does not apply"), though it leaves
    nothing out: it is what a modelled run does anyway."""
    from tests.helpers.cli import run_cli

    code, _, err = run_cli([*B, "-s", "adamw", "--warmup-steps", "0", "--out", tmp_path / "z"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "z" / "run.json").read_text())["config"]["warmup_steps"] == 0
