"""Every table lionsim prints at any COLUMNS: each row there, no number split across lines, the
table printed wider than the terminal rather than dropping rows (lionsim.reports.widths.fit,
applied where the CLI's console renders a table)."""

from __future__ import annotations

import re

import pytest

from tests.helpers.cli import run_cli

NUMBER = re.compile(r"[\d.,/]*\d[\d.,/]*")


def _at(columns: str, argv: list[str], capsys, monkeypatch) -> str:
    from lionsim.cli.app import console

    monkeypatch.setenv("COLUMNS", columns)
    # the width a fresh process's console takes from COLUMNS as it starts (rich pins it then)
    monkeypatch.setattr(console, "_width", type(console)()._width)
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    return out


def _names(command: str) -> list[str]:
    if command == "networks":
        from lionsim.network import NETWORKS

        return list(NETWORKS)
    if command == "devices":
        from lionsim.compute import DEVICES

        return [name for name, d in DEVICES.items() if name == d.name]
    from lionsim.strategies import STRATEGIES

    return list(STRATEGIES)


COMMANDS = {"networks": ["networks"], "devices": ["devices"], "strategies": ["strategies"],
            "comm": ["comm", "--sizes", "1KiB,1MiB"]}


@pytest.mark.parametrize("columns", ["0", "20", "40", "60", "80", "-3", "junk"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_row_prints_whole_at_any_columns(command, columns, capsys, monkeypatch):
    """COLUMNS=0 printed nothing; at 40 comm printed no rows and devices its header a letter a line;
    at 20-72 rows and columns were dropped and numbers cut ("0.01" / "3", "1" / "KiB", "0…")."""
    reference = _at("100", COMMANDS[command], capsys, monkeypatch)
    out = _at(columns, COMMANDS[command], capsys, monkeypatch)
    assert "…" not in out
    numbers = sorted(t for t in out.split() if NUMBER.fullmatch(t))
    assert numbers == sorted(t for t in reference.split() if NUMBER.fullmatch(t))  # each whole, as often
    if command == "comm":
        for size in ("1 KiB", "1 MiB"):  # a size stays on its row's line, number and unit together
            assert out.count(size) == reference.count(size) > 0
        assert len([line for line in out.splitlines() if "KiB" in line or "MiB" in line]) == \
            len([line for line in reference.splitlines() if "KiB" in line or "MiB" in line])
    else:
        firsts = {line.split()[0] for line in out.splitlines() if line.split()}
        assert not [name for name in _names(command) if name not in firsts]
