"""Help and messages name what is accepted: no option a command lacks, every device an option takes,
an unknown option's near ones."""

from __future__ import annotations

from tests.helpers.cli import invoke_at, run_cli


def test_estimates_tie_help_names_no_option_it_lacks(capsys):
    import re

    import typer

    from lionsim.cli.app import app

    command = typer.main.get_command(app).commands["estimate"]
    options = {name for p in command.params for name in p.opts}
    tie = next(p for p in command.params if "--tie" in p.opts)
    named = set(re.findall(r"--[a-z][a-z-]*", tie.help))
    assert named <= options, named - options  # it once offered a --seed that estimate lacked
    code, out, _ = run_cli(["estimate", "--help"], capsys)
    assert code == 0 and "--tie" in out


def test_an_unknown_option_lists_the_commands_options_and_only_a_near_one(capsys):
    code, _, err = run_cli(["regress", "--lr", "3"], capsys)
    assert code == 2 and err.startswith("error: no such option --lr for `lionsim regress`; accepted: --all, ")
    assert "did you mean" not in err
    code, _, err = run_cli(["bench", "--stepz", "3"], capsys)
    # the near one first, not after the command's 80 options (--help lists them)
    assert code == 2 and err.strip() == ("error: no such option --stepz for `lionsim bench`; did you mean '--steps'? "
                                         "(every option: lionsim bench --help)")


def test_estimates_unknown_option_accepts_no_flag_estimate_then_refuses(capsys):
    """`estimate --lr` listed as accepted the strategy flags that change only training, each of which
    estimate then refuses ("estimate does not read it"). The reference: every strategy flag tried on
    estimate with its strategy and its default value; the list names exactly those not refused so."""
    from lionsim.strategies.core.given import flags

    unread, read = set(), set()
    for specs in flags().values():
        spec = specs[0]
        _, _, err = run_cli(["estimate", "--model", "gpt2-124m", "-s", spec.strategy, spec.flag, str(spec.default)],
                            capsys)
        (unread if "estimate does not read it" in err else read).add(spec.flag)
    assert {"--outer-lr", "--muon-momentum", "--streaming-alpha"} <= unread and "--local-steps" in read
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "--lr", "0.1"], capsys)
    assert code == 2 and err.startswith("error: no such option --lr for `lionsim estimate`; accepted: ")
    accepted = set(err.strip().split("; accepted: ", 1)[1].split(", "))
    assert not accepted & unread, accepted & unread
    assert read | {"--model", "--workers", "--network", "--from-run"} <= accepted


def test_params_message_says_what_is_accepted(capsys):
    code, _, err = run_cli(["estimate", "--params", "-5", "--tokens-per-worker", "1024"], capsys)
    assert code == 2 and err.strip() == ("error: bad --params -5; accepted: a whole number from 1 to "
                                         "1,000,000,000,000,000 (1,000x today's largest models; written in full, "
                                         "like 3e9, or with K, M, B or T: 350M, 1.5B)")
    code, _, err = run_cli(["estimate", "--params", "1e30", "--tokens-per-worker", "1024"], capsys)
    assert code == 2 and err.strip().startswith("error: bad --params 1e30; accepted: a whole number from 1 to 1,000,000,000,000,000")
    assert run_cli(["estimate", "--params", "3e9", "--tokens-per-worker", "1024"], capsys)[0] == 0


def test_bench_compute_help_names_every_device_the_option_accepts(capsys):
    from lionsim.compute import DEVICES

    code, out, _ = run_cli(["bench", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert all(name in text for name in DEVICES.names()), text


def test_estimate_help_and_the_commands_page_name_every_model_preset(monkeypatch):
    """The --model help is made from the model registry (resnet50-tf was missing from a hand-typed
    list), and docs/commands.md names every preset."""
    from pathlib import Path

    from lionsim.compute.models import MODELS

    done = invoke_at(200, ["estimate", "--help"], monkeypatch)
    model_help = " ".join(done.output[done.output.index("--model"):done.output.index("--params")].split())
    page = (Path(__file__).parents[2] / "docs" / "commands.md").read_text()
    assert "resnet50-tf" in MODELS.names()
    for name in MODELS.names():
        assert f"{name}," in model_help or f"{name} " in model_help, name
        assert f"`{name}`" in page, name


def test_bench_and_sweep_help_state_the_default_runs_and_betas():
    """-s/--strategy and --betas stated no default, while --lr says "(default: each strategy's
    own)". Reference: the runs a BenchConfig trains when none are named (its field's default)."""
    import dataclasses

    import typer

    from lionsim.cli.app import app
    from lionsim.config.bench import BenchConfig

    runs = next(f for f in dataclasses.fields(BenchConfig) if f.name == "strategies").default_factory()
    assert len(runs) == 5
    for name in ("bench", "sweep"):
        params = typer.main.get_command(app).commands[name].params
        helps = {opt: p.help for p in params for opt in p.opts}
        assert helps["--strategy"].endswith("Default: " + ", ".join(runs) + "."), helps["--strategy"]
        assert helps["--betas"].endswith("(default: each strategy's own)."), helps["--betas"]
