"""Bad invocations across every command get exit 2, exactly one line on stderr, no traceback, and
nothing written (the working directory stays empty); one case each, so pytest-xdist can spread them.
NO_TORCH are refused before torch is imported (tests/cli/test_quick_imports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lionsim.cli.app import main
from tests.helpers.cli import one_line_exit_2, run_cli

B = ["bench", "-w", "mlp", "--steps", "1", "-n", "2"]
S = ["sweep", "--workload", "mlp", "--steps", "1", "--workers", "2"]
E = ["estimate", "-m", "gpt2-124m"]
NO_TORCH = [
    # bench: numbers, hyperparameters, the network, the device, the backend's layout, option parsing:
    # refused before torch is imported (tests/cli/test_quick_imports.py)
    [*B, "--steps", "0"], [*B, "--steps", "10000001"], [*B, "-n", "0"], [*B, "-b", "0"], [*B, "--seed", "-1"],
    [*B, "--seed", "1180591620717411303424"], [*B, "--lr", "0"], [*B, "--lr", "nan"], [*B, "--weight-decay", "-1"],
    [*B, "--lr", "1e300"], [*B, "--weight-decay", "1e39"], [*B, "--hyper", '{"lion": {"lr": 1e39}}'],
    [*B, "--betas", "0.9"], [*B, "--betas", "1.0,0.9"], [*B, "--betas", "a,b"], [*B, "--eval-every", "0"],
    [*B, "--threads", "0"], [*B, "--warmup-steps", "-1"], [*B, "--bucket-mb", "0"], [*B, "--timeout", "0"],
    [*B, "--target-loss", "inf"], [*B, "--steps", "ten"], [*B, "--network", "nosuch"],
    [*B, "--network", "missing.toml"], [*B, "--backend", "mpi"], [*B, "--model-size", "huge"], [*B, "--tie", "coin"],
    [*B, "--compute", "tpu"], [*B, "--ranks", "2"], [*B, "--backend", "gloo", "--ranks", "0"], [*B, "--hyper", "{"], [*B, "--out", ""], [*B, "--format", "xml"],
    [*B, "--no-such-option"], [*B, "--config", "missing.toml"], [*B, "--config", "."],
    [*B, "--target-loss", "-1"], [*B, "--target-loss", "0"], ["bench", "-w", "mlp", "--steps", "5", "--warmup-steps", "200"],
    # estimate: its plain numbers, network, device, --sweep and --need (lionsim.estimate.plain)
    [*E, "--workers", "0"], [*E, "--steps", "-1"], [*E, "--tokens", "0"], [*E, "--tokens", "3e11"], [*E, "--steps", "2", "--tokens", "9"],
    [*E, "--gpus-per-node", "0"], [*E, "--replica-gpus", "0"], [*E, "--tensors", "0"], [*E, "--tokens-per-worker", "0"],
    [*E, "--mfu", "2"], [*E, "--mfu", "1e-300"], [*E, "--bucket-mb", "-1"], [*E, "--seed", "-1"], [*E, "--network", "nosuch"],
    [*E, "--device", "tpu"], [*E, "--sweep", "bandwidth=-1,2"], [*E, "--need", "utilisation=2"],
    # bench: the workload's name, the data split, the momentum sync and its tensors, the evaluation's samples
    [*B, "-w", "nosuch"], [*B, "--data-split", "dirichlet:0"], [*B, "--data-split", "skewed"],
    [*B, "--momentum-sync", "sometimes"], [*B, "--momentum-sync", "every:x"], [*B, "--sync-tensors", "min-numel:5"],
    [*B, "--eval-samples", "0"], [*B, "--eval-samples", "many"],
    # sweep: --jobs, its grid's axes and options, each cell's bench options (lionsim.config.sweep_plain)
    [*S, "--jobs", "0"], [*S, "--workers", "2,x"], [*S, "--workers", "0"], [*S, "--backend", "gloo"],
    [*S, "--network", "nosuch"], [*S, "--out", ""], [*S, "--format", "yaml"], [*S, "--eval-samples", "-3"],
    [*S, "--workload", "mlp,nosuch"],
    # regress: its values and its baseline file
    ["regress", "--lr", "3"], ["regress", "--case", "nosuch"], ["regress", "--baseline-dir", "missing-dir"],
    # plot and report of a missing directory (no pandas, no matplotlib either)
    ["plot", "missing-dir"], ["report", "missing-dir"],
]
CNN = str(Path(__file__).resolve().parents[2] / "examples" / "plugins" / "cnn_workload.py") + ":make"

BAD = [
    *NO_TORCH,
    ["bench", "-w", CNN, "--model-size", "tiny", "--steps", "1"],  # a workload file builds its own model
    ["sweep", "-w", CNN, "--model-size", "tiny", "--steps", "1", "--workers", "2"],  # likewise in a sweep
    # bench: what the registries check (strategies, their options, transports, workloads) and the plan
    [*B, "--qsgd-levels", "0"], [*B, "--freeze-steps", "-1"],
    [*B, "-s", "nosuch"], [*B, "-s", "adamw@a2a-1bit"], [*B, "-s", "adamw@nosuch"], [*B, "-s", "adamw,,lion"],
    [*B, "-s", "adamw", "-s", "adamw"], [*B, "-s", "adamw", "--transport", "a2a-1bit"],
    [*B, "--transport", "nosuch"], [*B, "-s", "adamw", "--tie", "random"],
    [*B, "-s", "adamw", "--momentum-sync", "every:2"],
    [*B, "--baseline", "nosuch"], [*B, "--hyper", '{"nosuch": {"lr": 1}}'], [*B, "--data", "missing-dir"],
    [*B, "-n", "100000", "--batch-size", "100000"],
    # bench: the local-step methods, PowerSGD and 1-bit Adam's options
    [*B, "-s", "diloco", "--local-steps", "0"], [*B, "--local-steps", "2"], [*B, "-s", "diloco", "--outer-lr", "0"],
    [*B, "-s", "diloco", "--outer-momentum", "1"], [*B, "-s", "diloco", "--inner-optimizer", "sgdx"],
    [*B, "-s", "powersgd", "--powersgd-rank", "0"], [*B, "-s", "powersgd", "--powersgd-warmup-steps", "-1"],
    [*B, "-s", "adamw", "--powersgd-rank", "2"], [*B, "-s", "onebit-adam", "--freeze-steps", "0"],
    [*B, "-s", "diloco-int8@fp32-allreduce"], [*B, "-s", "demo", "--demo-topk", "0"], [*B, "-s", "demo", "--demo-chunk", "0"],
    [*B, "-s", "lion", "--demo-topk", "4"],
    # bench: --out and --resume
    [*B, "--resume"], [*B, "--out", "/proc/forbidden"],
    # sweep: what the registries check
    [*S, "-s", "nosuch"], [*S, "--transport", "nosuch"],
    # comm
    ["comm", "--sizes", "0"], ["comm", "--sizes", "abc"], ["comm", "--collective", "nosuch"],
    ["comm", "--workers", "1"], ["comm", "--network", "nosuch"], ["comm", "--fit", "p.toml"],
    ["comm", "--backend", "mpi"], ["comm", "--out", ""], ["comm", "--format", "html"],
    ["comm", "--algorithm", "nosuch"], ["comm", "--sizes", "1KB:1GB:x1.0001"],
    # estimate
    ["estimate", "--workers", "0"], ["estimate", "--network", "nosuch"], ["estimate", "-s", "nosuch"],
    ["estimate", "--model", "nosuch"], ["estimate", "-s", "powersgd", "--params", "1e9", "--tokens-per-worker", "8"],
    ["estimate", "-s", "diloco", "--local-steps", "0"], ["estimate", "--local-steps", "3"],
    ["estimate", "-s", "demo", "--params", "1e9", "--tokens-per-worker", "8"],
    ["estimate", "-m", "gpt2-124m", "--sweep", "workers=2:64:100000"],
    ["estimate", "--params", "-5", "--tokens-per-worker", "8"], ["estimate", "--params", "1e30", "--tokens-per-worker", "8"], ["plot", "pyproject.toml"],
    # plot, report
    ["plot", "."], ["plot", "missing", "--baseline", "x"],
    ["report", "."],
    # listings and the app
    ["strategies", "-n", "0"], ["strategies", "-w", "nosuch"], ["strategies", "--format", "xml"],
    ["networks", "--format", "tsv"], ["workloads", "--format", "md"], ["nosuch"],
]


def test_the_bad_invocations_cover_every_command():
    assert len(BAD) >= 60 and len({tuple(a) for a in BAD}) == len(BAD)
    assert {argv[0] for argv in BAD} >= {"bench", "sweep", "comm", "estimate", "plot", "report", "regress",
                                         "strategies", "networks", "workloads"}


@pytest.mark.parametrize("argv", BAD, ids=" ".join)
def test_bad_invocations_are_one_line_exit_2_and_write_nothing(argv, tmp_path, monkeypatch, capsys, available_memory):
    monkeypatch.chdir(tmp_path)
    available_memory(16 * 10**9)  # the same answer on any machine
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert exit_info.value.code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err + out
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def bad_configs(tmp_path):
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "dir.toml").mkdir()
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")  # ELOOP on open (was a traceback)
    (tmp_path / "loop.toml").symlink_to(tmp_path / "loop.toml")
    (tmp_path / "binary.toml").write_bytes(bytes(range(256)))
    (tmp_path / "binary.json").write_bytes(bytes(range(256)))
    return tmp_path


@pytest.mark.parametrize("command", ["bench", "estimate", "comm", "sweep", "regress"])
@pytest.mark.parametrize("name, message", [
    ("{tmp}", "it is a directory"),
    ("{tmp}/dir.json", "it is a directory"),
    ("{tmp}/dir.toml", "it is a directory"),
    ("{tmp}/loop.json", "cannot read config file"),
    ("{tmp}/loop.toml", "cannot read config file"),
    # bytes 0-127 are ASCII: the first that is not UTF-8 is 0x80, at offset 128
    ("{tmp}/binary.toml", "bad --config {tmp}/binary.toml: not text: byte 0x80 at offset 128 is not UTF-8 (a binary "
                          "file?); accepted: a TOML file or a run.json lionsim wrote"),
    ("{tmp}/binary.json", "bad --config {tmp}/binary.json: not text: byte 0x80 at offset 128 is not UTF-8"),
    ("{tmp}/missing.toml", "bad --config {tmp}/missing.toml: no such file; accepted: a TOML file or a run.json lionsim wrote"),
])
def test_a_config_that_is_not_a_readable_file_is_one_line(bad_configs, capsys, command, name, message):
    before = sorted(bad_configs.iterdir())
    one_line_exit_2([command, "--config", name.format(tmp=bad_configs)], capsys, message.format(tmp=bad_configs))
    assert sorted(bad_configs.iterdir()) == before  # nothing written


@pytest.mark.parametrize("text,expected", [
    ("workerz = 4\n", "unknown key 'workerz' in {path} for `lionsim bench`; did you mean 'workers'? accepted: "),
    ("zzz = 4\n", "unknown key 'zzz' in {path} for `lionsim bench`; accepted: backend, "),  # no near name: still a ';'
    ('workers = "four"\n', 'bad workers = "four" in {path}: not a whole number; accepted: a whole number from 1 to '
                           '100,000,000 (the most workers lionsim takes)\n'),
    ("steps = 2.5\n", "bad steps = 2.5 in {path}: not a whole number; accepted: a whole number from 1 to 10,000,000"),
    ("workers = true\n", "bad workers = true in {path}: not a whole number; accepted: a whole number from 1 to "),
    ('lr = "fast"\n', 'bad lr = "fast" in {path}: not a number; accepted: a finite number above 0\n'),
    # a flag takes TOML's booleans only: `overwrite = "yes"` ran as asked, `"false"` too ("steps = 0"
    # after it: old code refused that instead, without training)
    *((f'{text}\nsteps = 0\n', f'bad {text} in {{path}}: not a boolean; accepted: true or false, unquoted\n')
      for text in ('overwrite = "yes"', 'resume = "false"', 'trace = "0"', 'overwrite = 1')),
])
def test_a_bad_config_file_names_itself_and_the_key(tmp_path, capsys, text, expected):
    from lionsim.cli.app import main

    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(SystemExit) as done:
        main(["bench", "--config", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith("error: " + expected.format(path=path)), err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command, text, expected", [
    ("comm", "workers = 0\n", "bad workers = 0 in {path}; accepted: a whole number from 2 to "),
    ("comm", "workers = [4, 0]\n", "bad workers = [4, 0] in {path}; accepted: a whole number from 2 to "),
    ("comm", "workers = true\n", "bad workers = true in {path}; accepted: "),
    ("estimate", "workers = true\n", "bad workers = true in {path}: not a whole number; accepted: "),
])
def test_a_config_value_is_echoed_as_the_file_spells_it(tmp_path, capsys, command, text, expected):
    """comm's `workers = 0` was echoed "workers = [0]" (the list click got, its --workers being a list);
    `workers = true` as Python's True."""
    path = tmp_path / "run.toml"
    path.write_text(text)
    one_line_exit_2([command, "--config", str(path), *(["-m", "gpt2-124m"] if command == "estimate" else [])],
                    capsys, "error: " + expected.format(path=path))


@pytest.mark.parametrize("text, typed, expected", [
    ("workers = -4\n", [], "bad workers = -4 in {path}; accepted: a whole number from 1 to 100,000,000"),
    ("lr = -1.0\n", ["-w", "mlp"], "bad lr = -1.0 in {path}; accepted: a finite number above 0"),
    ("steps = 10\nwarmup-steps = 50\ncompute = \"measured\"\n", ["-w", "mlp"],
     "bad warmup-steps = 50 in {path}: a run of 10 steps would have no timed step left"),
    ("workers = 4\n", ["--workers", "-4"], "bad --workers -4; accepted: a whole number from 1 to 100,000,000"),  # typed: as typed
    ("workers = -4\n", ["-n", "-3"], "bad --workers -3; accepted: a whole number from 1 to 100,000,000"),
    # a key inside a table the file gave: the file named after the key, the table's keys accepted
    ("[hyper.adamw]\nlrr = 0.1\n", ["-w", "mlp", "-s", "adamw"],
     "bad hyper.adamw in {path}: unknown key 'lrr'; accepted: lr, weight_decay, betas; did you mean 'lr'?\n"),
    ("[hyper.adamw]\nlr = -1.0\n", ["-w", "mlp", "-s", "adamw"],
     "bad hyper.adamw.lr -1 in {path}; accepted: a finite number above 0"),
    ("[hyper.adamww]\nlr = 0.1\n", ["-w", "mlp", "-s", "adamw"],
     "bad hyper.adamww in {path}: it names no run of this bench; accepted: its runs (adamw@fp32-allreduce) or "
     "their strategies' names; did you mean 'adamw'?"),
    ("[hyper.adamw]\nlrr = 0.1\n", ["-w", "mlp", "-s", "adamw", "--hyper", '{"adamw": {"lrr": 0.1}}'],
     "bad hyper.adamw: unknown key 'lrr'"),  # typed: no file to name
])
def test_a_config_value_its_check_refuses_names_the_file_and_key(tmp_path, capsys, text, typed, expected):
    """`workers = -4` in a --config file was reported as "bad --workers -4", a flag nobody typed;
    a value typed on the command line is still reported as typed."""
    path = tmp_path / "run.toml"
    path.write_text(text)
    one_line_exit_2(["bench", "--config", str(path), *typed, "--out", str(tmp_path / "out")], capsys,
                    "error: " + expected.format(path=path))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, line", [
    (["bench", "--steps", "1.5"], "error: bad --steps 1.5: not a whole number; accepted: a whole number from 1 to 10,000,000"),
    (["bench", "--workers", "2.5"], "error: bad --workers 2.5: not a whole number; accepted: a whole number from 1 to "
                                    "100,000,000 (the most workers lionsim takes)\n"),
    (["bench", "--threads", "2.5"], "error: bad --threads 2.5: not a whole number; accepted: a whole number (1000, 1e3 or 2.5e3)\n"),
    (["bench", "--lr", "abc"], "error: bad --lr abc: not a number; accepted: a finite number above 0\n"),
    (["estimate", "-n", "x"], "error: bad --workers x: not a whole number; accepted: a whole number from 1 to 100,000,000"),
    (["sweep", "--weight-decay", "0,0.1"], "error: bad --weight-decay 0,0.1: not a number; accepted: a finite number at least 0; a "
                                           "sweep's grid axes are --workload, --workers, --network, --seed and --lr, "
                                           "not --weight-decay: run one sweep per value, each with its own --out\n"),
    (["sweep", "--lr", "0,-1"], "error: bad --lr 0; accepted: a finite number above 0, or default (each strategy's "
                                "own); a comma list like 0.0003,0.001 sweeps them\n"),
    (["bench", "--lr", "0.001,0.003"], "error: bad --lr 0.001,0.003: not a number; accepted: a finite number above 0; bench takes one "
                                       "value, `lionsim sweep --lr 0.001,0.003` a comma list\n"),
    (["bench", "--workers", "2,4"], "; bench takes one value, `lionsim sweep --workers 2,4` a comma list\n"),
    (["sweep", "--traits", "nccl,ideal"], "error: bad --traits 'nccl,ideal': --traits takes one value; accepted: ideal, "
                                          "gloo, nccl, mpi; a sweep's grid axes are --workload, --workers, --network, "
                                          "--seed and --lr, not --traits: run one sweep per value, each with its own --out\n"),
    (["sweep", "--tie", "zero,alternate"], "error: bad --tie 'zero,alternate': --tie takes one value; accepted: zero, "),
    (["estimate", "--traits", "nccl,ideal"], "error: bad --traits 'nccl,ideal'; accepted: ideal, gloo, nccl, mpi; did "
                                             "you mean 'ideal'?\n"),
    (["sweep", "--steps", "ten"], "error: bad --steps ten: not a whole number; accepted: a whole number from 1 to 10,000,000"),
    (["bench", "--format", "xml"], "error: bad --format xml; accepted: table, csv, json\n"),
    (["estimate", "-m", "gpt2-124m", "--format", "jsn"], "error: bad --format jsn; accepted: table, csv, json; did you mean 'json'?\n"),
    (["bench", "--data-split", "dirichlet:0"], "error: bad --data-split dirichlet:0: ALPHA must be a number above 0; accepted: iid, "),
    (["bench", "--overlap", "bucket"], "error: bad --overlap bucket; accepted: auto, buckets, tensors, none (or after, as none); "
                                       "did you mean 'buckets'?\n"),
    (["bench", "--plugin", "/nonexist.py"], "error: bad --plugin /nonexist.py: no such file; accepted: a Python file (FILE.py) "),
    (["comm", "--sizes", "1KiB:1MiB:x1"], "error: bad --sizes 1KiB:1MiB:x1: step x1 is not a factor above 1; accepted: START:END"),
    (["estimate", "-m", "gpt2-124m", "--gpus-per-node", "3", "--workers", "8"],
     "error: bad --gpus-per-node 3: 8 workers do not fill whole nodes of 3; accepted: a divisor of --workers (1, 2, 4) or "),
    # --gpus-per-node sets the network's nodes: a layout the network refuses is the option's line, naming it
    (["estimate", "-m", "gpt2-124m", "--workers", "64", "--network", "dgx-h100", "--gpus-per-node", "1"],
     "error: bad --gpus-per-node 1: network 'dgx-h100' runs NVLink SHARP (nvls = 'hopper') on NVSwitch nodes of 2 "
     "or more GPUs; accepted: at least 2, or a network without nvls\n"),
    (["comm", "--network", "dgx-h100", "--workers", "16", "--gpus-per-node", "1"],
     "error: bad --gpus-per-node 1: network 'dgx-h100' runs NVLink SHARP"),
    (["estimate", "-m", "gpt2-124m", "--workers", "8", "--network", "10gbe", "--device", "t4", "--gpus-per-node", "4"],
     "error: bad --gpus-per-node 4: nodes of several need an intra-node link: network '10gbe' has none and device "
     "'t4' has no NVLink; accepted: 1 (one worker a node); more with a --device that has NVLink or a network with "
     "an intra link\n"),
    # the kernel table's devices, not the installed file's path
    (["estimate", "-m", "gpt2-124m", "--kernels", "table:foo"],
     "error: bad --kernels table:foo; accepted: table, ideal, or table:DEVICE with DEVICE one of: cpu, t4, "),
    (["estimate", "-m", "gpt2-124m", "--kernels", "table:h10"], ", v100-tf1.15; did you mean 'h100'?\n"),
    (["estimate", "-m", "gpt2-124m", "--sweep", "bandwidth=100:0.1:5"],
     "error: bad --sweep bandwidth=100:0.1:5: END must exceed START; accepted: workers=N,N,... | "),
    (["comm", "--collective", "allreduce"], "did you mean 'all_reduce'?"),
    # --opt names an unknown strategy: the option and its whole value, as its other refusals do
    ([*E, "--opt", "foo.bar=1"], "error: bad --opt foo.bar=1: unknown strategy 'foo'; accepted: adamw, lion, "),
    ([*B, "--opt", "dilco.local_steps=3"], "error: bad --opt dilco.local_steps=3: unknown strategy 'dilco'; "
                                           "accepted: adamw, "),
    ([*B, "--opt", "dilco.local_steps=3"], ", streaming-diloco; did you mean 'diloco'?\n"),
    ([*S, "--opt", "foo.bar=1"], "error: bad --opt foo.bar=1: unknown strategy 'foo'; accepted: adamw, "),
    (["bnech"], "error: no such command 'bnech'; did you mean 'bench'? (every command: lionsim --help)"),
    (["xyzzy"], "error: no such command 'xyzzy'; accepted: bench, "),
    # an argument too many: which, and the command's usage (click named neither: "Got unexpected extra ...")
    (["networks", "--traits", "bogus"], "error: unexpected argument 'bogus' after --traits, a flag that takes no "
                                        "value; accepted: lionsim networks [OPTIONS], no arguments\n"),
    (["plot", "a", "b"], "error: unexpected argument 'b'; accepted: lionsim plot [OPTIONS] {DIR}\n"),
    (["strategies", "x", "y"], "error: unexpected arguments 'x', 'y'; accepted: lionsim strategies [OPTIONS], no "
                               "arguments\n"),
])
def test_a_typed_option_a_collective_and_a_command_are_refused_in_the_house_style(argv, line, capsys):
    err = one_line_exit_2(argv, capsys, line)
    assert "Input should" not in err and "No such" not in err


@pytest.mark.parametrize("network, line", [
    ("nosuch.toml", "network profile not found: nosuch.toml; accepted: a preset (100mbe, 1gbe, "),
    ("{dir}", "is a directory, not a profile file; accepted: a preset (100mbe, 1gbe, "),
    ("{dir}.toml", "is a directory, not a profile file; accepted: a preset (100mbe, 1gbe, "),
])
def test_a_network_that_is_not_a_profile_file_says_what_is_accepted(network, line, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir.toml").mkdir()
    err = one_line_exit_2([*B, "--network", network.format(dir="adir"), "--out", str(tmp_path / "o")], capsys, line)
    assert "or an existing .toml/.json profile file" in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, line", [
    ([*B, "--lr", "1e300"], "error: bad --lr 1e300: beyond float32's range, +-3.403e+38 (training runs "
                            "in float32); accepted: a finite number above 0"),
    ([*B, "-s", "diloco", "--outer-lr", "1e300"], "error: bad --outer-lr 1e300: beyond float32's range"),
    ([*B, "-s", "lion", "--hyper", '{"lion": {"lr": 1e39}}'], "error: bad hyper.lion.lr 1e39: beyond"),
])
def test_a_real_option_past_float32_is_refused_not_a_traceback(argv, line, capsys, tmp_path):
    """--lr 1e300 trained into torch's "value cannot be converted to type float without overflow"
    (57 lines, exit 1); 3.4e38 is float32's largest (torch.finfo(torch.float32).max)."""
    import torch

    from lionsim.forms import FLOAT32_MAX

    assert FLOAT32_MAX == torch.finfo(torch.float32).max
    one_line_exit_2([*argv, "--out", str(tmp_path / "o")], capsys, line)
    assert not (tmp_path / "o").exists()


def test_workers_that_do_not_fill_nodes_are_told_one_node_also_fits(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --out: a checkout's reports/bench from the README's first command
    one_line_exit_2(["bench", "-w", "mlp", "--steps", "1", "-n", "12", "--network", "h100x8-10gbe"], capsys,
                    "bad --workers 12: 12 workers do not fill whole nodes of h100x8-10gbe (8 a node); accepted: at most 8 "
                    "(one node) or a multiple of 8")


def test_a_number_option_given_text_says_its_range_as_an_out_of_range_value_does(capsys):
    """`--lr abc` said "accepted: a number", `--lr -1` the real range: the same words now, for each
    option whose range lionsim keeps (the reference: its out-of-range value's line)."""
    for option, below in (("--lr", "-1"), ("--weight-decay", "-1"), ("--bucket-mb", "-1"), ("--target-loss", "-1")):
        ranged = one_line_exit_2([*B, option, below], capsys).strip()
        said = one_line_exit_2([*B, option, "abc"], capsys).strip()
        words = ranged.split("; accepted: ", 1)[1]
        assert said == f"error: bad {option} abc: not a number; accepted: {words}", (said, ranged)
        assert words != "a number"


@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "syntax.toml").write_text('name = "x"\n[inter\nalpha_us = 25\n')
    (tmp_path / "binary.toml").write_bytes(b"\x89PNG\r\n\x1a\n binary")
    (tmp_path / "empty.toml").write_text("# nothing yet\n")
    return tmp_path


def test_a_profile_or_config_that_does_not_parse_is_the_options_one_line_with_a_plain_reason(bad_files, capsys):
    """They read "malformed TOML in FILE: ..." without the option, the accepted form, or (a binary
    file) anything but Python's codec message; an empty profile said "missing key 'inter'"."""
    profile = "accepted: a TOML or JSON table with at least [inter] alpha_us and bandwidth_GBps"
    broken = "not valid TOML: Expected ']' at the end of a table declaration (at line 2, column 7)"
    binary = "not text: byte 0x89 at offset 0 is not UTF-8 (a binary file?)"
    for name, why in (("syntax", broken), ("binary", binary), ("empty", "it is empty (no keys)")):
        path = bad_files / f"{name}.toml"
        err = one_line_exit_2([*E, "--network", str(path)], capsys)
        assert err.startswith(f"error: bad --network {path}: {why}; {profile}"), err
        if name != "empty":
            err = one_line_exit_2([*B, "--config", str(path)], capsys)
            assert err.strip() == f"error: bad --config {path}: {why}; accepted: a TOML file or a run.json lionsim wrote"
        assert "codec" not in err and "malformed" not in err


def test_a_misspelt_momentum_sync_mode_gets_a_suggestion(capsys):
    """--data-split diri:0.3 suggested 'dirichlet'; --momentum-sync evry:10 suggested nothing."""
    err = one_line_exit_2([*B, "--momentum-sync", "evry:10"], capsys)
    assert err.strip().endswith("with K a whole number from 1 to 10,000,000 (the most steps lionsim runs); did you "
                                  "mean 'every'?"), err
    assert "did you mean" not in one_line_exit_2([*B, "--momentum-sync", "every:0"], capsys)  # the mode is right


@pytest.mark.parametrize("size, unit", [("1gb", "GB"), ("1mb", "MB"), ("2kb", "KB"), ("1Mb", "MB"), ("1mib", "MiB"),
                                        ("1b", "B")])
def test_a_size_in_bits_suggests_the_bytes_unit_as_the_accepted_list_spells_it(capsys, size, unit):
    """`1mb` suggested mB (millibytes, to a reader); the suggestion is one of the units SIZES lists."""
    from lionsim.network.sizes import SIZES

    err = one_line_exit_2(["comm", "--sizes", size], capsys)
    assert f"bad --sizes {size}: b is bits; write B for bytes ({unit}); accepted: " in err, err
    assert unit == "B" or f" {unit}," in SIZES or f" {unit} " in SIZES or f", {unit}" in SIZES


@pytest.mark.parametrize("extra, line", [
    # comm's line for the same option: lionsim's own ranks all run on this host
    (["--backend", "gloo", "--iface", "eth0"], "error: --iface eth0 picks the interface between hosts: run under a "
                                               "launcher (torchrun); lionsim's own ranks talk over this host's loopback\n"),
    # estimate's and comm's line for the same profile: its device picks the library's traits
    (["--network", "net.toml"], "error: bad --network net.toml: unknown device 'bogus'; accepted: a100 (a100-40gb), "
                                "a100-40gb, a100-80gb, a10g, b200, "),
])
def test_bench_refuses_what_comm_and_estimate_refuse(extra, line, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):  # not under a launcher
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "net.toml").write_text('device = "bogus"\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n')
    one_line_exit_2([*B, "--model-size", "tiny", "-b", "2", "-s", "adamw", *extra, "--out", "o"], capsys, line)
    assert not (tmp_path / "o").exists()
    if "--network" in extra:  # the same line as estimate's
        one_line_exit_2([*E, "--network", "net.toml"], capsys, line)


def test_sweep_resume_says_a_sweep_resumes_by_itself(capsys):
    """bench's --resume, brought to sweep, got the 80 options sweep has; a sweep resumes when rerun."""
    code, _, err = run_cli(["sweep", "-s", "adamw", "--resume"], capsys)
    assert code == 2 and "Traceback" not in err
    assert ("no such option --resume for `lionsim sweep`: a sweep resumes by itself: rerun the same command and "
            "its finished cells are kept") in " ".join(err.split())


def test_bench_gpus_per_node_says_where_benchs_nodes_come_from(capsys):
    """A new user with 2 nodes of 8 H100 over 25 GbE typed estimate's --gpus-per-node to bench."""
    code, _, err = run_cli(["bench", "-w", "mlp", "--gpus-per-node", "8"], capsys)
    said = " ".join(err.split())
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
    assert "no such option --gpus-per-node for `lionsim bench`: bench's nodes are its --network's" in said
    assert "workers_per_node" in said


def test_comm_fit_refuses_to_replace_a_profile_without_overwrite(tmp_path, capsys):
    """A second `comm --fit loop.toml` on fewer sizes replaced a measured profile by its prior's bandwidth
    without a word."""
    from lionsim.cli.comm_cmd import _check_fit_path
    from lionsim.errors import LionsimError

    profile = tmp_path / "loop.toml"
    profile.write_text("[inter]\n")
    code, _, err = run_cli(["comm", "--backend", "gloo", "--fit", str(profile)], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--fit {profile} exists: pass --overwrite to replace it" in " ".join(err.split())
    assert profile.read_text() == "[inter]\n"
    _check_fit_path(profile, overwrite=True)  # --overwrite lets it through
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(LionsimError, match="a directory"):
        _check_fit_path(tmp_path / "d.toml", overwrite=True)
