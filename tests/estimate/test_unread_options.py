"""`lionsim estimate` refuses every option that would change nothing it prices, in one line: the
strategy options only training reads (OptionRule.priced), the run phases' options without a run,
and the command's own options where no run (or no other option) lets them act. Each strategy
option's declaration is checked against the estimate itself: a STEP option changes the steady
row, a RUN option only a whole run, a TRAINING one neither."""

from __future__ import annotations

import dataclasses

import pytest

from lionsim.estimate import EstimateConfig, estimate, resolve
from lionsim.estimate.table import estimate_rows, frame
from lionsim.strategies.core.form import RUN, STEP, TRAINING
from lionsim.strategies.core.given import registered_specs
from tests.helpers.cli import run_cli

SMALL = ["-m", "gpt2-124m", "--format", "csv"]
FIXED = {"streaming-diloco": {"local_steps": 8}}
"""Options a strategy needs beside the one varied (Streaming DiLoCo: H >= fragments)."""


def _other(spec):
    """A valid value of `spec` other than its default."""
    if spec.rule.choices is not None:
        return next(c for c in spec.rule.choices if c != spec.default)
    return next(v for v in (spec.default * 2 + 3, 0.5, 0.3, 1) if v != spec.default and spec.rule.check(v))


def _csv(strategy: str, options: dict, steps: int | None = None) -> str:
    """The estimate with `options` handed to the pricing as they are (past resolve's refusals)."""
    cfg = EstimateConfig(model="gpt2-124m", strategies=[strategy], workers=16, network="100gbe", steps=steps,
                         options=FIXED.get(strategy, {}))
    r = resolve(cfg)
    r = dataclasses.replace(r, options={**r.options, **options})
    return frame(estimate_rows(r, r.workers, r.network)).to_csv(index=False)


@pytest.mark.parametrize("spec", registered_specs(), ids=lambda s: f"{s.strategy}{s.flag}")
def test_declaration_matches_what_estimate_prices(spec):
    changed = {spec.qualified: _other(spec)}
    steady = _csv(spec.strategy, changed) != _csv(spec.strategy, {})
    run = _csv(spec.strategy, changed, steps=500) != _csv(spec.strategy, {}, steps=500)
    assert (steady, run) == {STEP: (True, True), RUN: (False, True), TRAINING: (False, False)}[spec.rule.priced]


@pytest.mark.parametrize("args, says", [
    (["-s", "diloco", "--outer-lr", "5"], "--outer-lr changes training, not a step's time or bytes: estimate does not "
                                          "read it; bench does"),
    (["-s", "streaming-diloco", "--streaming-alpha", "0.2"], "--streaming-alpha changes training"),
    (["-s", "muon", "--muon-momentum", "0.5"], "--muon-momentum changes training"),
    (["-s", "dion", "--dion-adamw-lr", "0.01"], "--dion-adamw-lr changes training"),
    (["-s", "sparseloco", "--sparseloco-error-decay", "0.5"], "--sparseloco-error-decay changes training"),
    (["-s", "muloco", "--muloco-inner-momentum", "0.5"], "--muloco-inner-momentum changes training"),
    (["-s", "muon", "--muon-precision", "fp32"], "--muon-precision sets the Newton-Schulz arithmetic"),
    (["-s", "diloco", "--opt", "diloco.outer_momentum=0.5"], "--opt diloco.outer_momentum=0.5 changes training"),
    (["-s", "onebit-adam", "--freeze-steps", "999"], "add --steps N, --tokens T or --from-run DIR"),
    (["-s", "dgc", "--dgc-warmup-steps", "50"], "--dgc-warmup-steps 50 acts on the first steps of a run"),
    (["-s", "powersgd", "--powersgd-warmup-steps", "3"], "add --steps N, --tokens T or --from-run DIR"),
    (["-s", "dlion-mavo", "--momentum-sync", "schedule:4"], "add --steps N, --tokens T or --from-run DIR"),
    (["-s", "adamw", "--tie", "random"], "--tie random applies to dlion-mavo"),
    (["-s", "adamw", "--algorithm", "pairwise"], "--algorithm pairwise runs all_to_all and no run issues one"),
    (["-s", "adamw", "--algorithm", "bruck"], "--algorithm bruck runs all_gather and no run issues one"),
    (["--tensors", "10", "-s", "powersgd"], "--tensors 10 prices the model as that many equal vectors"),
    (["-s", "adamw", "--overwrite"], "--overwrite lets --out DIR replace another run's files: give --out DIR"),
    (["-s", "adamw", "--seed", "7"], "--seed 7 seeds --compute-spread's draws"),
    (["-s", "adamw", "--seed", "7", "--compute-spread", "lognormal:0.1"], "has an exact distribution"),
    (["-s", "adamw", "--bucket-mb", "1", "--overlap", "none"], "--bucket-mb 1 sizes the buckets"),
    # auto: each run as its reference runs it, and dlion-mavo's exchanges after backward (the bucket did nothing)
    (["-s", "dlion-mavo", "--bucket-mb", "1"], "under --overlap auto none of these runs is (dlion-mavo@int8-allreduce"),
    (["-s", "streaming-diloco", "--bucket-mb", "1"], "give --overlap buckets, or drop --bucket-mb"),
    (["-s", "adamw", "--bucket-mb", "1", "--workers", "1"], "--bucket-mb 1 sizes per-bucket exchanges and 1 worker "
                                                            "exchanges nothing"),
])
def test_refused_in_one_line(args, says, capsys):
    code, out, err = run_cli(["estimate", *SMALL, *args], capsys)
    assert code == 2 and out == ""
    assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [
    ["-s", "onebit-adam", "--freeze-steps", "999", "--steps", "2000"],
    ["-s", "dlion-mavo", "--momentum-sync", "every:1"],  # the steady step syncs
    ["-s", "dlion-mavo", "--momentum-sync", "every:10"],  # one sync over 10 steps in the steady step
    ["-s", "dlion-mavo", "--momentum-sync", "every:10", "--tokens", "1e7"],
    ["-s", "dlion-mavo@a2a-1bit", "--algorithm", "pairwise"],
    ["-s", "adamw,diloco", "--local-steps", "4"],
    ["-s", "adamw", "--bucket-mb", "1"],  # auto: adamw per bucket
    ["-s", "adamw", "--bucket-mb", "1", "--workers", "1", "--sweep", "workers=1,8"],  # 8 workers exchange
    ["-s", "adamw", "--seed", "7", "--compute-spread", "lognormal:0.1", "--compute-spread", "slow:2:1.5"],
    # a default stated (scripts and configs that always pass it): changes nothing, so refuses nothing
    ["-s", "adamw", "--momentum-sync", "never"],
    ["-s", "adamw", "--seed", "0"],
    ["-s", "adamw", "--seed", "0", "--compute-spread", "lognormal:0.3"],
])
def test_acting_options_still_run(args, capsys):
    code, out, err = run_cli(["estimate", *SMALL, *args], capsys)
    assert code == 0, err


def test_seed_and_bucket_act_where_accepted():
    """What the accepted forms above change: the seed a Monte Carlo's draws, the bucket a per-bucket step."""
    def csv(**kw):
        return estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw"], **kw)).to_csv(index=False)
    spread = ["lognormal:0.1", "slow:2:1.5"]
    assert csv(compute_spread=spread, seed=7) != csv(compute_spread=spread)
    assert csv(bucket_mb=1.0) != csv()


def test_help_lists_exactly_the_strategy_flags_estimate_may_read(capsys):
    """estimate's --help leaves out every strategy flag it refuses whatever runs (only training reads
    it), and lists every other: for each flag, hidden in the help iff check_priced refuses it for
    every strategy that has it even in a whole run, and each hidden one is still taken and refused
    in one line (a user may type it, a config file carry it)."""
    import re

    from typer.main import get_command

    from lionsim.cli import app
    from lionsim.errors import LionsimError
    from lionsim.estimate.config import check_priced
    from lionsim.strategies.core.given import flags

    command = get_command(app).commands["estimate"]
    hidden = {p.opts[0] for p in command.params if getattr(p, "hidden", False)}
    code, help_text, _ = run_cli(["estimate", "--help"], capsys)
    assert code == 0
    refused_everywhere = []
    for key, specs in flags().items():
        refusals = 0
        for spec in specs:
            try:
                check_priced({key: spec.default}, [spec.strategy], whole_run=True)
            except LionsimError as e:
                assert "estimate does not read it" in str(e)
                refusals += 1
        never_read = refusals == len(specs)
        flag = specs[0].flag
        assert (flag in hidden) == never_read, flag
        assert (re.search(rf"{re.escape(flag)}(?![\w-])", help_text) is None) == never_read, flag
        if never_read:
            refused_everywhere.append(specs[0])
    assert {"--outer-lr", "--muon-momentum", "--streaming-alpha"} <= {s.flag for s in refused_everywhere}
    for spec in refused_everywhere:
        code, out, err = run_cli(["estimate", *SMALL, "-s", spec.strategy, spec.flag, str(spec.default)], capsys)
        assert code == 2 and out == "", spec.flag
        assert f"{spec.flag} {spec.rule.why}: estimate does not read it; bench does" in " ".join(err.split())
        assert len(err.strip().splitlines()) == 1


def test_a_flag_estimate_never_reads_is_refused_as_such_whatever_the_runs(capsys):
    """--outer-lr beside a run that has none said "applies to localsgd, diloco, ... and no run is one of
    them"; with diloco added it then said estimate does not read it. Now the second, at once."""
    line = "--outer-lr changes training, not a step's time or bytes: estimate does not read it; bench does"
    for strategy in ("dlion-mavo", "diloco"):
        code, _, err = run_cli(["estimate", *SMALL, "-s", strategy, "--outer-lr", "0.7"], capsys)
        assert code == 2 and line in " ".join(err.split())
    # a flag estimate reads for some strategies still names them where no run is one
    code, _, err = run_cli(["estimate", *SMALL, "-s", "dlion-mavo", "--local-steps", "5"], capsys)
    assert code == 2 and "applies to localsgd, diloco" in " ".join(err.split())
