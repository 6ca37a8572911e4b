"""A bad strategy or transport name, or a pair that cannot work, is refused before torch loads, in
the line the registries give (lionsim.name_table): the table's answers are held to the registries'
own, in this process and through bench, estimate and sweep in one where torch cannot load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lionsim import name_table
from lionsim.config.bench import DEFAULT_STRATEGIES as BENCH_DEFAULTS
from lionsim.errors import LionsimError
from lionsim.estimate.defaults import DEFAULT_STRATEGIES as ESTIMATE_DEFAULTS
from lionsim.runs import parse_runs
from lionsim.strategies import STRATEGIES
from lionsim.transports import TRANSPORTS
from tests.cli.test_quick_imports import QUICK_PROBE, _refused_without_torch
from tests.helpers.installed import fake_distribution

ROOT = Path(__file__).resolve().parents[2]


def test_the_name_table_is_current():
    """lionsim/data/run_names.json is what the registries give now (`python -m lionsim.cli.flag_table`
    writes it again after a strategy or transport changed: a stale table is only slow, never wrong)."""
    assert json.loads(name_table.TABLE.read_text(encoding="utf-8")) == json.loads(json.dumps(name_table.table())), \
        "stale: run `python -m lionsim.cli.flag_table`"
    assert name_table.registry_tables.current(name_table.TABLE, *name_table.SOURCES) is not None


def test_a_crlf_checkout_matches_the_shipped_tables(tmp_path):
    """The fingerprint was over raw bytes: a checkout with CRLF line endings (git's autocrlf) never
    matched, and every command fell back to importing the registries. The reference: the
    fingerprints the shipped tables recorded from the LF sources, and the tables themselves."""
    import shutil

    from lionsim.cli import flag_table

    copies = []
    for folder in name_table.SOURCES:
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for path in copy.rglob("*.py"):
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        copies.append(copy)
    assert b"\r\n" in (copies[0] / "__init__.py").read_bytes()
    names = json.loads(name_table.TABLE.read_text(encoding="utf-8"))
    assert name_table.registry_tables.current(name_table.TABLE, *copies) == names
    flags = json.loads(flag_table.TABLE.read_text(encoding="utf-8"))
    assert name_table.registry_tables.current(flag_table.TABLE, copies[0]) == flags


def _outcome(specs, transport=None, source=None, names=None):
    """parse_runs' runs as labels, or its refusal's line."""
    try:
        return [r.label for r in parse_runs(specs, transport, source, names)]
    except LionsimError as e:
        return f"refused: {e}"


GIVEN = [  # typed as a user types them: any case, blanks, typos, lists, the hier: prefix
    (["nosuch"], None, None), (["lionn"], None, None), (["dlion-mavoo"], None, None), (["AdamW"], None, None),
    (["adamw@fp32-alreduce"], None, None), (["adamw@nosuch"], None, None), ([" Lion @ BF16-allreduce "], None, None),
    (["adamw,,lion"], None, None), (["adamw@"], None, None), ([], None, None), ([3], None, None),
    (["adamw", "adamw"], None, None), (["dlion-mavo", "dlion-mavo@a2a-1bit"], "a2a-1bit", None),
    (["adamw"], "a2a-1bit", None), (["adamw"], "nosuch", None), (["adamw@bf16-allreduce"], "a2a-1bit", None),
    (["adamw@HIER:FP32-Allreduce"], None, None), (["dlion-mavo@hier:hier-exact"], None, None),
    (list(BENCH_DEFAULTS), "sparse-allgather", "bench's default strategies"),
    (list(BENCH_DEFAULTS), "a2a-1bit", "bench's default strategies"),
    (list(ESTIMATE_DEFAULTS), "fp4-allreduce", "estimate's default strategies"),
    (list(ESTIMATE_DEFAULTS), "bf16-allreduce", "estimate's default strategies"),
]


def test_the_table_answers_every_name_and_pair_as_the_registries():
    """Every strategy over every transport (registered, and hier: before each), alone and through
    --transport, and names typed wrong: the same runs, or the same refusal, from the table as from
    the registries (the slow plain path)."""
    names = name_table.names_from(name_table.table())
    transports = TRANSPORTS.names() + [prefix + t for prefix in TRANSPORTS.prefixes() for t in TRANSPORTS.names()]
    cases = [*GIVEN, *(([s], None, None) for s in STRATEGIES.names()),
             *(([f"{s}@{t}"], None, None) for s in STRATEGIES.names() for t in transports),
             *(([s], t, None) for s in STRATEGIES.names() for t in transports)]
    assert len(cases) > 2000
    refused = 0
    for specs, transport, source in cases:
        expected = _outcome(specs, transport, source)
        assert _outcome(specs, transport, source, names) == expected, (specs, transport)
        refused += isinstance(expected, str)
    assert refused > 1000 and len(cases) - refused > 300  # both kinds of answer, many times


def test_a_name_it_holds_no_record_of_is_the_registrys():
    """hier: before a name that is no built-in transport: its refusal is hier:'s own, so the table
    leaves it (check_runs refuses nothing) and the registry answers."""
    names = name_table.names_from(name_table.table())
    for spec in ("adamw@hier:nosuch", "adamw@hier:hier:fp32-allreduce"):
        with pytest.raises(name_table.Unrecorded):
            parse_runs([spec], names=names)
        assert _outcome([spec]).startswith("refused: ")


def test_others_registering_leave_the_names_to_the_registries(monkeypatch):
    """The table answers only while neither registry is imported and nothing else may register: no
    plug-in file loaded (whatever it registered) and no installed entry point of either group."""
    from lionsim.plugins import LOADED

    monkeypatch.setattr(name_table, "_installed", lambda: False)
    assert name_table.table_names() is None  # this process imported the registries
    for module in ("lionsim.strategies", "lionsim.transports"):
        monkeypatch.delitem(sys.modules, module)
    assert name_table.table_names() is not None
    monkeypatch.setitem(LOADED, "/x/t.py", ("m_t", {"strategy": [], "transport": ["t"]}))
    assert name_table.table_names() is None
    monkeypatch.delitem(LOADED, "/x/t.py")
    monkeypatch.setattr(name_table, "_installed", lambda: True)
    assert name_table.table_names() is None


B = ["bench", "-w", "mlp", "--steps", "1"]
E = ["estimate", "--params", "1e9", "--tokens-per-worker", "1000"]
S = ["sweep", "-w", "mlp", "--steps", "1"]
BAD = [  # (the command line, parse_runs' arguments as the command passes them)
    ([*B, "-s", "nosuch"], (["nosuch"],)),
    ([*B, "-s", "dlion-mavoo"], (["dlion-mavoo"],)),
    ([*B, "-s", "dlion-mavo@nosuch"], (["dlion-mavo@nosuch"],)),
    ([*B, "-s", "adamw@a2a-1bit"], (["adamw@a2a-1bit"],)),
    ([*B, "-s", "adamw", "--transport", "a2a-1bit"], (["adamw"], "a2a-1bit")),
    ([*B, "--transport", "sparse-allgather"], (list(BENCH_DEFAULTS), "sparse-allgather", "bench's default strategies")),
    ([*B, "-s", "adamw@hier:a2a-1bit"], (["adamw@hier:a2a-1bit"],)),
    ([*B, "-s", "adamw@hier:sparse-allgather"], (["adamw@hier:sparse-allgather"],)),
    ([*E, "-s", "nosuch"], (["nosuch"],)),
    ([*E, "-s", "distributed-lion"], (["distributed-lion"],)),  # the paper's name: its strategies, not `lion`
    ([*E, "-s", "streaming_diloco"], (["streaming_diloco"],)),  # an underscore for the hyphen
    ([*E, "-s", "lion@fp32-alreduce"], (["lion@fp32-alreduce"],)),
    ([*E, "-s", "adamw@a2a-1bit"], (["adamw@a2a-1bit"],)),
    ([*E, "--transport", "fp4-allreduce"], (list(ESTIMATE_DEFAULTS), "fp4-allreduce", "estimate's default strategies")),
    ([*S, "-s", "nosuch"], (["nosuch"],)),
    ([*S, "-s", "lion,adamw@fp32-alreduce"], (["lion,adamw@fp32-alreduce"],)),
    ([*S, "-s", "adamw@a2a-1bit"], (["adamw@a2a-1bit"],)),
    ([*S, "-s", "adamw,lion", "--transport", "a2a-1bit"], (["adamw,lion"], "a2a-1bit")),
]


def test_bad_names_are_refused_before_torch_in_the_registrys_line():
    """Each command line of BAD exits 2 with the one line the registries refuse its names with
    (computed here, where they are imported), in a process where importing torch fails."""
    lines = []
    for _, args in BAD:
        with pytest.raises(LionsimError) as refused:
            parse_runs(*args)
        lines.append(str(refused.value))
    assert any("unknown strategy 'nosuch'; choose from: adamw, lion" in line for line in lines)
    assert any("did you mean 'dlion-mavo'?" in line for line in lines)
    assert any("unknown strategy 'distributed-lion'" in line and "did you mean 'dlion-mavo' or 'dlion-avg'?" in line
               for line in lines)
    assert any("unknown strategy 'streaming_diloco'" in line and "did you mean 'streaming-diloco'?" in line
               for line in lines)
    assert any(line.startswith("unknown transport 'nosuch'; choose from: fp32-allreduce") for line in lines)
    assert any(line.startswith("strategy 'adamw' cannot use transport 'a2a-1bit'") for line in lines)
    _refused_without_torch([argv for argv, _ in BAD], lines)


def test_good_names_and_unrecorded_ones_go_on_to_the_registries():
    """A run the table finds nothing wrong with goes on (to import torch, which fails here), as does
    a name the table holds no record of (the registry refuses it, once torch loads)."""
    cases = [[*B, "-s", "adamw@bf16-allreduce"], [*B, "-s", "DLION-MAVO", "--transport", "hier:a2a-1bit"],
             [*E, "-s", "adamw"], [*S, "-s", "lion"], [*B, "-s", "adamw@hier:nosuch"]]
    done = subprocess.run([sys.executable, "-c", QUICK_PROBE.format(cases=cases)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(got) == len(cases)
    for argv, code, err, tried in got:
        assert tried and tried[0].split(".")[0] in ("torch", "pandas", "matplotlib"), (argv, code, err)


def test_an_installed_strategy_is_the_registrys(tmp_path):
    """A strategy an installed package announces (entry point of lionsim.strategies) is unknown to
    the table: the table steps aside and the command prices it."""
    (tmp_path / "ep_lion_vote.py").write_text((ROOT / "examples/plugins/lion_vote.py").read_text())
    fake_distribution(tmp_path, "lionsim.strategies", {"lion-vote": "ep_lion_vote"})
    done = subprocess.run([sys.executable, "-m", "lionsim", *E, "-s", "lion-vote", "--format", "csv"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"})
    assert done.returncode == 0, done.stderr
    assert "lion-vote@a2a-1bit" in done.stdout
