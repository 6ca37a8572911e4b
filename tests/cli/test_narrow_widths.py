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
    if command == "workloads":
        from lionsim.workloads import WORKLOADS

        return list(WORKLOADS)
    from lionsim.strategies import STRATEGIES

    return list(STRATEGIES)


COMMANDS = {"networks": ["networks"], "devices": ["devices"], "strategies": ["strategies"],
            "workloads": ["workloads"],
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


def _caption_width(print_table, monkeypatch) -> int:
    """The widest line of what `print_table(console)` prints past its rule, in a pipe."""
    import io

    from lionsim.cli.app import _Console

    monkeypatch.delenv("COLUMNS", raising=False)
    shown = _Console(file=io.StringIO())
    print_table(shown)
    lines = shown.file.getvalue().splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    caption = lines[lines.index("", rule):]
    return max(map(len, caption))


def test_few_column_tables_wrap_their_captions_at_80_columns_in_a_pipe(monkeypatch):
    """The gloo `comm` caption wrapped at about 52 columns and bench's "comm measured on gloo" at
    about 42 (each at its columns' width): both now take up to 80 (widths.shaped widens them)."""
    import pandas as pd

    from lionsim.cli.comm_view import print_measured
    from lionsim.reports.tables import model_check_table

    rows = pd.DataFrame([dict(collective="all_reduce", type="float", bytes=1024, time_s=1e-4, time_mean_s=1.2e-4,
                              time_p10_s=9e-5, time_p90_s=2e-4, busbw_GBps=0.01, model_time_s=1e-4, error=0.2)])
    width = _caption_width(lambda shown: print_measured(rows, "gloo", 2, "loopback", shown), monkeypatch)
    assert 72 <= width <= 80
    summary = pd.DataFrame([dict(backend="gloo", network="loopback", strategy="lion", transport="allreduce",
                                 comm_s=1e-3, comm_measured_s=1.1e-3, comm_model_s=9e-4, comm_model_error=-0.1,
                                 barrier_wait_s=1e-4)])
    table = model_check_table(summary, "loopback")
    width = _caption_width(lambda shown: shown.print(table), monkeypatch)
    assert 72 <= width <= 80


def test_the_estimate_table_takes_a_wider_columns_and_keeps_80_in_a_pipe(capsys, monkeypatch):
    """At COLUMNS=200 the estimate table kept its 80-column shape: its speedup header folded to
    "speed" / "up" though the width had room. It folds only where the table would pass the width."""
    argv = ["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe", "-s", "adamw",
            "-s", "dlion-mavo"]
    for columns, header in (("200", ["across", "speedup"]), ("80", ["across", "up"])):
        out = _at(columns, argv, capsys, monkeypatch)
        table = out.split("\n\n")[1]  # the title, then the table
        assert next(line for line in table.splitlines() if line.split()[:1] == ["run"]).split()[-2:] == header
        # whole: the header folds before a name breaks; at 200 the name is one line (next test)
        assert ("adamw*@fp32-allreduce" if columns == "200" else "@fp32-allreduce") in table.split()
        assert columns == "200" or max(map(len, table.splitlines())) <= 80


def _run_cells(table: str, lines: int | None = None) -> list[str]:
    """The first word of each line of a printed table's body (below its rule), its first `lines` alone
    where a caption follows."""
    body = [line for line in table.split("─")[-1].splitlines()[1:] if line.strip()]
    return [line.split()[0] for line in body[:lines]]


def test_a_columns_wider_than_80_puts_each_run_on_one_line_in_estimate_and_bench_alike(capsys, monkeypatch):
    """COLUMNS=200 in a pipe: strategies' listing took the 200 columns while estimate's table (and
    bench's) kept each run on two lines, `@fp32-allreduce` under `adamw*`. Past 80 a run's name is one
    line where the table then fits; at 80, or where a wider table would not fit, strategy then
    @transport. The reference: the runs priced, as strategy@transport."""
    argv = ["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe", "-s", "adamw",
            "-s", "dlion-mavo@a2a-1bit"]
    runs = ["adamw*@fp32-allreduce", "dlion-mavo@a2a-1bit"]
    wide = _at("200", argv, capsys, monkeypatch).split("\n\n")[1]
    assert _run_cells(wide) == runs
    needs = max(map(len, wide.splitlines()))  # the table with each name on one line (less a blank edge)
    assert 80 < needs <= 200
    assert _run_cells(_at(str(needs + 1), argv, capsys, monkeypatch).split("\n\n")[1]) == runs
    for columns in ("80", str(needs - 1)):  # a pipe's 80, or a width it would pass
        assert _run_cells(_at(columns, argv, capsys, monkeypatch).split("\n\n")[1]) == \
            ["adamw*", "@fp32-allreduce", "dlion-mavo", "@a2a-1bit"], columns

    import pandas as pd

    from lionsim.cli.app import console
    from lionsim.reports.tables import summary_table
    from tests.helpers import REPO

    summary = pd.read_csv(REPO / "reports" / "readme" / "default-bench" / "summary.csv")
    runs = [f"{s}{'*' * (i == 0)}@{t}" for i, (s, t) in enumerate(zip(summary["strategy"], summary["transport"]))]
    for columns in ("200", "80"):
        monkeypatch.setenv("COLUMNS", columns)
        monkeypatch.setattr(console, "_width", type(console)()._width)  # as a fresh process starts
        console.print(summary_table(summary))  # the console bench prints its table on (out_console)
        shown = _run_cells(capsys.readouterr().out, 2 * len(runs))
        assert (shown[:len(runs)] == runs) == (columns == "200"), (columns, shown)
        # at 80 strategy then @transport, broken after a '-' where the 19 runs' numbers leave no room
        assert columns == "200" or (shown[0] == "adamw*" and shown[1].startswith("@fp32-")), shown


def test_the_format_help_says_what_a_table_does_where_its_numbers_are_wider(capsys, monkeypatch):
    """--format's help said a table "fits 80 columns", yet a table whose numbers alone are wider
    prints wider, at 80 columns or at COLUMNS=60: the help says so (lionsim.reports.widths)."""
    argv = ["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe",
            "-s", "adamw@bf16-allreduce", "-s", "sparseloco", "-s", "streaming-diloco"]
    table = _at("60", argv, capsys, monkeypatch).split("\n\n")[1]
    assert max(map(len, table.splitlines())) > 60  # its numbers alone: wider
    # at 80 it fits: `streaming-diloco H=4` breaks before its H (it printed 82 columns, the name whole)
    table = _at("80", argv, capsys, monkeypatch).split("\n\n")[1]
    assert max(map(len, table.splitlines())) <= 80 and "\n streaming-diloco " in table and "\n H=4\n" in table
    said = " ".join(_at("200", ["estimate", "--help"], capsys, monkeypatch).replace("│", " ").split())
    assert "fits 80" not in said and "printed wider where its numbers alone need more" in said, said
