"""Commands that train nothing answer at once: they never import torch or matplotlib;
nor do the help of the commands that train (their strategies' flags come from a table while it
is current: lionsim.cli.flag_table), nor a bench refusing a value that needs no torch to check."""

import json
import subprocess
import sys

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
                           "t4, v100, a10g, l4, l40s, rtx4090, a100-40gb, a100-80gb, h100, h200, b200, mi300x, "
                           "v100-tf1.15; did you mean 'cpu'?",
    "--optimizer eager --kernels ideal": "--optimizer eager prices torch's op chains with the kernel table; --kernels "
                                         "ideal prices every pass as one fused kernel: give --kernels table (or "
                                         "--optimizer fused)",
    "--compute-spread lognormal:-1": ("bad --compute-spread lognormal:-1: SIGMA -1 must be a number from 0 to 3 (at 3 one "
                                      "step in 100 runs a worker over 1,000x its median); " + SPREAD_FORMS),
    "--compute-spread slow:9:2": f"bad --compute-spread slow:9:2: K = 9 slow workers is more than the 8 workers; "
                                 f"{SPREAD_FORMS}",
    "--momentum-sync every:0": "bad --momentum-sync 'every:0'; accepted: never, every:K or schedule:K with K a "
                               "positive integer",
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
    cases = [[*base, *given.split()] for given in PLAIN_FORMS]
    done = subprocess.run([sys.executable, "-c", QUICK_PROBE.format(cases=cases)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(got) == len(PLAIN_FORMS)
    for (argv, code, err, tried), line in zip(got, PLAIN_FORMS.values()):
        assert (code, tried) == (2, []), (argv, code, err, tried)
        assert err == f"error: {line.format(table=default_path())}\n", argv
