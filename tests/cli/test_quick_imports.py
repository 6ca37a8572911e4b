"""Commands that train nothing answer at once: they never import torch or matplotlib;
nor do the help of the commands that train (their strategies' flags come from a table while it
is current: lionsim.cli.flag_table), nor a bench refusing a value that needs no torch to check."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_bad_input import NO_TORCH

HEAVY = ("torch", "matplotlib")

PROBE = """
import sys
from lionsim.cli.app import main
try:
    main({args!r})
except SystemExit:
    pass
print("HEAVY:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def _heavy_after(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_cli_is_light():
    code = f"import sys, lionsim, lionsim.cli; print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    assert _heavy_after(code) == "HEAVY:"


@pytest.mark.parametrize("args", [["--version"], ["networks"], ["--help"], ["bench", "--help"], ["estimate", "--help"],
                                  ["sweep", "--help"]], ids=" ".join)
def test_quick_commands_are_light(args):
    assert _heavy_after(PROBE.format(args=args, heavy=HEAVY)) == "HEAVY:"


VIEWS = ("lionsim.cli.estimate_view", "lionsim.cli.estimate_notes", "lionsim.schedules")
"""What only estimate prints with: loaded by its command, not at start-up."""


@pytest.mark.parametrize("args", [["--help"], ["bench", "--help"], ["estimate", "--help"]], ids=" ".join)
def test_estimate_views_load_with_the_command_not_at_start_up(args):
    assert _heavy_after(PROBE.format(args=args, heavy=VIEWS)) == "HEAVY:"


def test_public_api_still_importable():
    from lionsim import pack_signs, unpack_signs  # lazy: torch on first use

    assert callable(pack_signs) and callable(unpack_signs)


def test_the_flag_table_is_current():
    """lionsim/data/strategy_flags.json is what the registry gives now (`python -m lionsim.cli.flag_table`
    writes it again after a strategy changed: a stale table is only slow, never wrong)."""
    from lionsim.cli.flag_table import TABLE, table

    assert json.loads(TABLE.read_text(encoding="utf-8")) == json.loads(json.dumps(table())), \
        "stale: run `python -m lionsim.cli.flag_table`"


def test_a_loaded_plugin_file_with_strategies_makes_the_table_unusable(monkeypatch):
    """LOADED maps a file to (its module, what it registered by kind): one that registered a strategy
    means the table does not list every flag; one that registered only a transport changes none."""
    from lionsim.cli import flag_table
    from lionsim.plugins import LOADED

    monkeypatch.setattr(flag_table, "_installed", lambda: False)
    monkeypatch.setitem(LOADED, "/x/t.py", ("m_t", {"strategy": [], "transport": ["t"]}))
    assert not flag_table._others_register()
    monkeypatch.setitem(LOADED, "/x/s.py", ("m_s", {"strategy": ["s"], "transport": []}))
    assert flag_table._others_register()


def test_the_flag_table_gives_the_registrys_flags():
    """While current, the table and the registry give every command the same flags (names, types,
    defaults, help, what estimate prices of each: its --help hides by it) in the same order."""
    from lionsim.cli.flag_table import FlagSpec, fingerprint, table
    from lionsim.strategies.core.given import flags

    data = table()
    assert data["fingerprint"] == fingerprint()
    shown = {key: [FlagSpec(**{**s, "type": s["type"]}) for s in specs] for key, specs in data["flags"].items()}
    expected = {key: [FlagSpec(s.strategy, s.field, s.flag, s.type.__name__, s.default, s.help, s.rule.priced)
                      for s in specs]
                for key, specs in flags().items()}
    assert list(shown) == list(expected) and shown == expected


QUICK_PROBE = """
import contextlib, io, json, os, sys, tempfile

tried = []
BLOCKED = ["torch", "pandas", "matplotlib"]


class NoTorch:  # a meta path finder: this process may not import torch, pandas or matplotlib
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            tried.append(name)
            raise ImportError(name + " imported")


sys.meta_path.insert(0, NoTorch())
from lionsim.cli.app import main

os.chdir(tempfile.mkdtemp())
for argv in {cases!r}:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as e:
            code = e.code
        except BaseException as e:
            code = repr(e)
    print(json.dumps([argv, code, err.getvalue(), tried]))
"""

def test_a_bench_refuses_what_needs_no_torch_before_importing_it():
    """Every bad value the configuration checks without torch (numbers, hyperparameters, the
    network, the device, the backend's layout, the bucket, the option parsing) is refused, one
    line and exit 2, in a process where importing torch, pandas or matplotlib fails: estimate's
    as bench's (`estimate --workers 0` once loaded pandas first)."""
    assert len(NO_TORCH) >= 30
    done = subprocess.run([sys.executable, "-c", QUICK_PROBE.format(cases=NO_TORCH)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == len(NO_TORCH)
    for line in done.stdout.splitlines():
        argv, code, err, tried = json.loads(line)
        assert (code, len(err.splitlines()), tried) == (2, 1, []), (argv, code, err, tried)
        assert err.startswith("error: "), (argv, err)
@pytest.mark.parametrize("package", ["lionsim", "lionsim.backends", "lionsim.compute", "lionsim.estimate", "lionsim.regress",
                                     "lionsim.reports", "lionsim.steptime", "lionsim.sweep"])
def test_every_lazy_name_resolves(package):
    import importlib

    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == [], f"{package} lists names no submodule defines"


def test_a_light_command_leaves_every_option_to_the_next_in_process_caller(capsys):
    """main(["networks"]) builds no strategy flags; a caller that invokes the app itself afterwards
    (typer's runner, as the docs blocks and published tables do) still gets every option."""
    from typer.testing import CliRunner

    from lionsim.cli import app
    from lionsim.cli.app import main

    with pytest.raises(SystemExit):
        main(["networks"])
    capsys.readouterr()
    done = CliRunner().invoke(app, ["estimate", "-m", "gpt2-124m", "-s", "diloco", "--local-steps", "4",
                                    "--format", "csv"])
    assert done.exit_code == 0, done.output


SPREAD_FORMS = "accepted: lognormal:SIGMA, slow:K:FACTOR, episodes:P:FACTOR:STEPS or trace:FILE.csv"
KERNEL_FORMS = "accepted: table, table:DEVICE (a device of the kernel table, e.g. table:cpu or table:v100-tf1.15) or ideal"
PLAIN_FORMS = {  # estimate's options whose forms need no registry: the line each got once torch had loaded
    "--overlap bogus": "bad --overlap bogus; accepted: auto, buckets, tensors, none (or after, as none)",
    "--algorithm bogus": "unknown collective algorithm 'bogus'; choose from: ring, recursive_doubling, rabenseifner, "
                         "tree, bruck, pairwise, binomial, param_server",
    "--optimizer bogus": "bad --optimizer 'bogus'; accepted: fused, foreach, eager",
    "--kernels bogus": f"bad --kernels 'bogus'; {KERNEL_FORMS}",
    "--kernels table:": f"bad --kernels 'table:'; {KERNEL_FORMS}; did you mean 'table'?",
    # the option's house line (once the installed table's absolute path): torch-free as before
    "--kernels table:tpu": "bad --kernels table:tpu; accepted: table, ideal, or table:DEVICE with DEVICE one of: cpu, "
                           "t4, v100, a10g, l4, l40s, rtx3090, rtx4090, a100-40gb, a100-80gb, h100, h200, b200, mi300x, "
                           "v100-tf1.15; did you mean 'cpu'?",
    "--optimizer eager --kernels ideal": "--optimizer eager prices torch's op chains with the kernel table; --kernels "
                                         "ideal prices every pass as one fused kernel: give --kernels table (or "
                                         "--optimizer fused)",
    "--compute-spread lognormal:-1": ("bad --compute-spread lognormal:-1: SIGMA -1 must be a number from 0 to 3 (at 3 one "
                                      "step in 100 runs a worker over 1,000x its median); " + SPREAD_FORMS),
    "--compute-spread slow:9:2": f"bad --compute-spread slow:9:2: K = 9 slow workers is more than the 8 workers; "
                                 f"{SPREAD_FORMS}",
    "--momentum-sync every:0": "bad --momentum-sync 'every:0'; accepted: never, every:K or schedule:K with K a "
                               "whole number from 1 to 10,000,000 (the most steps lionsim runs)",
    # and the options that need another
    "--trace": "--trace writes DIR/trace.json: give --out DIR with it",
    "--need utilisation=0.5 --sweep workers=8,16": "--need solves for the inter-node bandwidth itself: give --need or "
                                                   "--sweep, not both",
}


def test_estimate_refuses_each_plain_form_before_importing_torch():
    """docs/commands.md: a value that needs no torch to check is refused before torch is imported.
    --overlap, --algorithm, --kernels, --optimizer, --compute-spread, --momentum-sync, and --trace or
    --need given with what they cannot take, were each refused only after torch had loaded (about
    4 s); each is now refused in the words it had then."""
    from lionsim.compute.kernel_table import default_path

    base = ["estimate", "--params", "1e9", "--tokens-per-worker", "1000"]
    _refused_without_torch([[*base, *given.split()] for given in PLAIN_FORMS],
                           [line.format(table=default_path()) for line in PLAIN_FORMS.values()])


def _refused_without_torch(cases: list[list[str]], lines: list[str]) -> None:
    """Each of `cases` exits 2 with its one line of `lines`, in a process where importing torch,
    pandas or matplotlib fails (QUICK_PROBE)."""
    done = subprocess.run([sys.executable, "-c", QUICK_PROBE.format(cases=cases)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(got) == len(lines)
    for (argv, code, err, tried), line in zip(got, lines):
        assert (code, tried) == (2, []), (argv, code, err, tried)
        assert err == f"error: {line}\n", argv


ROOT = Path(__file__).resolve().parents[2]
WORKERS = "a whole number from 1 to 100,000,000 (the most workers lionsim takes)"
SEEDS = "a whole number from 0 to 9,223,372,036,854,775,807 (torch's seeds are signed 64-bit)"
PRESETS = ("100mbe, 1gbe, 10gbe, 25gbe, 100gbe, ib-hdr, ib-ndr, nvlink4, nvlink3, dgx-h100, dgx-a100, a100x8-4hdr, "
           "h100x8-10gbe, h100x8-100gbe, loopback")
SWEEP_PLAIN = {  # sweep's values that need no registry: the line each got once torch had loaded
    # the grid's axes (lionsim.sweep.grid.check_axes)
    "--workers 2,,4": "bad --workers 2,,4: an empty item; accepted: a comma list like 4,8,16",
    "--workers 2,2": "bad --workers 2,2: 2 given twice; accepted: a comma list like 4,8,16, each value once",
    "--workers 2,x": f"bad --workers x: not a whole number; accepted: {WORKERS}",
    "--workers 0": f"bad --workers 0; accepted: {WORKERS}",
    "--seed -1": f"bad --seed -1; accepted: {SEEDS}",
    "--seed 0,x": f"bad --seed x: not a whole number; accepted: {SEEDS}",
    "--lr 0": "bad --lr 0; accepted: a finite number above 0, or default (each strategy's own); a comma list like "
              "0.0003,0.001 sweeps them",
    "--lr 0.001,1e-3": "bad --lr 0.001,1e-3: 0.001 given twice; accepted: a comma list like 0.0003,0.001, each value once",
    "--network nosuch": f"unknown network 'nosuch'; choose a preset ({PRESETS}) or a .toml/.json profile file",
    "--network 1gbe,1GbE": "bad --network 1gbe,1gbe: 1gbe given twice; accepted: a comma list like 1gbe,10gbe, each "
                           "value once",
    "--network missing.toml": f"network profile not found: missing.toml; accepted: a preset ({PRESETS}) or an existing "
                              ".toml/.json profile file",
    "-w mlp,nosuch": "unknown workload 'nosuch'; choose from: gpt, mlp, vit, an installed plug-in, or FILE.py:FUNC or "
                     "package.module:FUNC",
    "-w mlp,MLP": "bad --workload mlp,mlp: mlp given twice; accepted: a comma list like mlp,vit, each value once",
    "-w missing.py:f": "bad --workload 'missing.py:f': no file missing.py; accepted: FILE.py:FUNC or package.module:FUNC",
    # the options (lionsim.config.sweep_plain), and each cell's bench options (BenchConfig.check_plain)
    "--backend gloo": "lionsim sweep runs on the sim backend only, not gloo; use `lionsim bench --backend gloo|nccl` "
                      "for real collectives",
    "--ray-address x:1": "--ray-address x:1 needs --executor ray (the executor is local)",
    "--shard 3/2": "bad --shard '3/2': shard 3 of 2 does not exist; accepted: I/N with 1 <= I <= N, e.g. --shard 1/3",
    "--steps 0": "bad --steps 0; accepted: a whole number from 1 to 10,000,000 (the most steps lionsim runs or prices)",
    "--overlap bogus": "bad --overlap bogus; accepted: auto, buckets, tensors, none (or after, as none)",
    "--workers 2,8 --compute-spread slow:3:2": f"bad --compute-spread slow:3:2: K = 3 slow workers is more than the 2 "
                                               f"workers; {SPREAD_FORMS}",
    "--momentum-sync every:0": "bad --momentum-sync 'every:0'; accepted: never, every:K or schedule:K with K a "
                               "whole number from 1 to 10,000,000 (the most steps lionsim runs)",
    "--sync-tensors min-numel:5": "--sync-tensors min-numel:5 needs --momentum-sync every:K or schedule:K",
    "--bucket-mb 0": ("bad --bucket-mb 0; accepted: a finite number at least 0.000004 (MB of fp32 gradients; a "
                      "smaller bucket holds not one 4-byte gradient)"),
    "--workers 1,2 --bucket-mb 5 --overlap none": "--bucket-mb 5 sizes per-bucket exchanges and --overlap none runs "
                                                  "every exchange after backward; accepted with --overlap auto or buckets",
    "--compute tpu": "bad --compute 'tpu'; accepted: measured, a device: a100 (a100-40gb), a100-40gb, a100-80gb, "
                     "a10g, b200, h100, h200, l4, l40s, mi300x, rtx3090, rtx4090, t4, v100, or a device file FILE.toml of its "
                     "datasheet (docs/clusters.md)",
    "--betas 0.9": "bad --betas '0.9'; accepted: two numbers like 0.9,0.99, each at least 0 and below 1",
    "--data-split skewed": "bad --data-split skewed; accepted: iid, dirichlet:ALPHA (ALPHA above 0, e.g. dirichlet:0.5)",
    "--eval-samples -3": "bad --eval-samples -3; accepted: a whole number at least 1, or all",
    "--warmup-steps 5 --compute measured": "bad --warmup-steps 5: a run of 1 step would have no timed step left; "
                                           "accepted: only 0",
    "--threads 0": "bad --threads 0; accepted: a whole number from 1 to 1,024 (torch threads of one training process; "
                   "more than its cores only wait on each other)",
    "--target-loss -1": "bad --target-loss -1; accepted: a finite number above 0 (a cross-entropy is never below 0, "
                        "and only a perfect model reaches 0)",
    "-w {cnn} --model-size tiny": "--model-size tiny applies to no workload of this sweep: a workload file builds its "
                                  "own model (--model-size is for the built-in workloads: lionsim workloads)",
    "--out {root}/pyproject.toml/x": "bad --out {root}/pyproject.toml/x: {root}/pyproject.toml is not a directory; "
                                     "accepted: a writable directory",
}


def test_sweep_refuses_each_plain_value_before_importing_torch():
    """docs/commands.md: `lionsim sweep` refused every value below only once its grid had imported
    the registries, and torch (about 4 s); each is now refused before, in the words it had then
    (a strategy's or transport's name too: tests/cli/test_quick_names.py)."""
    given = {"root": ROOT, "cnn": f"{ROOT}/examples/plugins/cnn_workload.py:make"}
    base = ["sweep", "-w", "mlp", "--steps", "1"]
    _refused_without_torch([[*base, *case.format(**given).split()] for case in SWEEP_PLAIN],
                           [line.format(**given) for line in SWEEP_PLAIN.values()])


REGRESS_PLAIN = {  # regress's values and its baseline file: the line each got once torch had loaded
    "--case nosuch": "unknown case 'nosuch'; choose from: mlp-n4-iid, mlp-n8-iid, mlp-n4-dir0.5, mlp-n8-dir0.5, "
                     "gpt-n4-iid, vit-n4-iid, mlp-n8-defaults (globs like 'mlp-*' work)",
    "--mode bogus": "bad --mode 'bogus'; accepted: auto, strict, float, spread",
    "--seeds 0": "bad --seeds 0; accepted: a whole number at least 1 (extra seeds that measure the spread)",
    "--list --update": "--list and --update are two actions; give one (or neither: a check)",
    "--update --mode strict": "--mode does not apply to --update; accepted with it: --case, --seeds, --baseline-dir",
    "--junit .": "bad --junit .: it is a directory; accepted: a file path",
    "--report {tmp}/file/x.md": "bad --report {tmp}/file: {tmp}/file is not a directory; accepted: a writable directory",
    "--baseline-dir missing-dir": "baseline file missing-dir/regress.json not found; point at it with --baseline-dir "
                                  "DIR or create it with `lionsim regress --update --baseline-dir missing-dir` "
                                  "(directory missing-dir does not exist)",
    "--baseline-dir {tmp}/bad": "malformed baseline {tmp}/bad/regress.json: not JSON (Expecting property name "
                                "enclosed in double quotes: line 2 column 1 (char 2))",
}


def test_regress_refuses_each_plain_value_before_importing_torch(tmp_path):
    """docs/commands.md: `lionsim regress` refused every value below, a missing or malformed baseline
    file among them, only once torch had loaded (its baseline module imported it); each is now
    refused before, in the words it had then."""
    (tmp_path / "file").write_text("")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "regress.json").write_text("{\n")
    _refused_without_torch([["regress", *case.format(tmp=tmp_path).split()] for case in REGRESS_PLAIN],
                           [line.format(tmp=tmp_path) for line in REGRESS_PLAIN.values()])


FOLDER_REFUSALS = {  # each line as it was once torch (or pandas) had loaded, 8-13 s on a busy machine
    "estimate --model gpt2-124m --from-run /nonexistent-lionsim-dir":
        "bad --from-run /nonexistent-lionsim-dir: no such directory; accepted: a finished `lionsim bench` --out "
        "directory (run.json with status complete and summary.csv) or a finished `lionsim sweep` root (sweep.json "
        "and sweep_summary.csv)",
    "estimate --workers 64 -s lion":
        "give exactly one of --model (one of: gpt2-124m, gpt2-345m, gpt2-1.3b, transformer-3b, llama-7b, vit-s, "
        "vit-b, resnet18, resnet50, resnet50-tf, gpt2 (gpt2-124m), gpt2-medium (gpt2-345m)) or --params N",
    "plot .": ". holds no plottable CSV; expected sweep: sweep_summary.csv + sweep_steps.csv; estimate-sweep: "
              "sweep.csv + crossover.csv; run: steps.csv; comm: comm.csv; estimate: estimate.csv",
    "report .": ". holds neither steps.csv (a bench run), sweep_summary.csv (a sweep), sweep.csv (an estimate sweep) "
                "nor estimate.csv (an estimate); `lionsim report` needs one of them (summary.csv and run.json are "
                "read when present)",
}


def test_a_missing_model_or_folder_is_refused_before_importing_torch():
    """`estimate --from-run` a folder that is not there, an estimate given neither --model nor
    --params, and `plot` / `report` on a folder holding nothing of theirs (the probe's empty working
    directory) need no torch, pandas or matplotlib to refuse: each is its line, as it was."""
    _refused_without_torch([given.split() for given in FOLDER_REFUSALS], list(FOLDER_REFUSALS.values()))
