"""The comm plots' size axis reads in the unit system of the table that lists the same sizes
(lionsim.cli.comm_view.size_column): `--sizes 1KiB:1GiB` was plotted on a "1 kB = 1e3 B" axis
with decimal ticks while the table said "1 GiB"."""

from __future__ import annotations

from pathlib import Path

import pytest

from lionsim.cli.comm_view import size_column
from lionsim.network import comm_rows, load_network, parse_sizes, rows_frame


def _axes(sizes: str, monkeypatch) -> list:
    """The (time, bandwidth) axes plot_comm draws for all_reduce over `sizes` on 10gbe."""
    import lionsim.reports.plots.comm as comm

    drawn = []
    monkeypatch.setattr(comm, "save", lambda fig, path: drawn.append(fig) or [])
    frame = rows_frame(comm_rows(["all_reduce"], parse_sizes(sizes), [8], load_network("10gbe")))
    comm.plot_comm(Path("plots"), frame)
    return drawn[0].axes[:2]


def _ticks(ax) -> list[str]:
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    return [t.get_text() for t, x in zip(ax.get_xticklabels(), ax.get_xticks()) if low <= x <= high]


def test_binary_sizes_plot_on_a_binary_axis_as_the_table_lists_them(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    sizes = parse_sizes("1KiB:1GiB")
    listed = set(size_column(sizes))
    assert "1 GiB" in listed
    for ax in _axes("1KiB:1GiB", monkeypatch):
        assert "1 KiB = 1024 B" in ax.get_xlabel() and "1e3" not in ax.get_xlabel()
        ticks = _ticks(ax)
        assert ticks[0] == "1 KiB" and ticks[-1] == "1 GiB" and "1 MiB" in ticks, ticks
        assert set(ticks) <= listed  # every tick a size as the table prints it


def test_decimal_sizes_keep_the_decimal_axis(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert not any("iB" in text for text in size_column(parse_sizes("1KB:1GB")))  # decimal in the table
    for ax in _axes("1KB:1GB", monkeypatch):
        assert "1 kB = 1e3 B" in ax.get_xlabel()
        ticks = _ticks(ax)
        assert "1 MB" in ticks and "1 kB" in ticks and not any("iB" in t for t in ticks), ticks


def test_two_priced_sizes_are_marked_and_a_narrow_busbw_axis_reads_plain_numbers(monkeypatch, tmp_path):
    """--sizes 1MB,1GB among 32 on 25gbe: two priced points, drawn as a bare line before, and a
    busbw axis of 3.07 to 3.71 GB/s labelled "3.1x10^0 ... 3.7x10^0": each priced size gets a
    marker, and the narrow axis reads plain round numbers inside or at its range."""
    monkeypatch.chdir(tmp_path)
    frame = rows_frame(comm_rows(["all_reduce"], parse_sizes("1MB,1GB"), [32], load_network("25gbe")))
    import lionsim.reports.plots.comm as comm

    drawn = []
    monkeypatch.setattr(comm, "save", lambda fig, path: drawn.append(fig) or [])
    comm.plot_comm(Path("plots"), frame)
    time_ax, bw_ax = drawn[0].axes[:2]
    for ax in (time_ax, bw_ax):
        line = ax.get_lines()[0]
        assert line.get_marker() not in (None, "None", "", " ") and len(line.get_xdata()) == 2
    bw_ax.figure.canvas.draw()
    low, high = sorted(frame.busbw_GBps)
    assert high < 10 * low
    labels = [t.get_text() for t in bw_ax.get_yticklabels() + bw_ax.get_yticklabels(minor=True) if t.get_text()]
    assert labels and all(float(text) == float(f"{float(text):g}") for text in labels), labels
    assert not any("times" in t or "^" in t for t in labels), labels


def test_every_comm_plot_labels_its_axes_in_plain_digits(monkeypatch, tmp_path):
    """all_reduce's busbw spanned over two decades and read 10^-2, 10^-1, 10^0, all_to_all's under
    two and read 0.005 ... 0.5 in the same --out: one style, positional digits, for every y axis."""
    monkeypatch.chdir(tmp_path)
    import lionsim.reports.plots.comm as comm

    drawn = []
    monkeypatch.setattr(comm, "save", lambda fig, path: drawn.append(fig) or [])
    frame = rows_frame(comm_rows(["all_reduce", "all_to_all"], parse_sizes("1KB,100KB,10MB,1GB"), [32],
                                 load_network("10gbe")))
    comm.plot_comm(Path("plots"), frame)
    assert len(drawn) == 2
    spans = []
    for fig in drawn:
        for ax in fig.axes[:2]:
            low, high = ax.get_ylim()
            ticks = [t for t in ax.yaxis.get_majorticklocs() if low <= t <= high]
            labels = ax.yaxis.get_major_formatter().format_ticks(ticks)
            assert labels and all(float(text.replace(",", "")) == pytest.approx(t) for text, t in zip(labels, ticks)), labels
            assert all(set(text) <= set("0123456789.,") for text in labels), labels  # no 10^k, no 1e-05
            # thousands grouped, as a table prints them: 10,000,000 us, not 10000000
            assert all(text.split(".")[0] == f"{int(text.split('.')[0].replace(',', '')):,}" for text in labels), labels
            spans.append(high / low)
    assert max(spans) > 100  # an axis over two decades among them: the one matplotlib labelled 10^k
