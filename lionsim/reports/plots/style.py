"""What every lionsim plot shares: the run palette and line styles, units, figure and legend
helpers, and saving a figure as PNG and SVG atomically.

Figures are matplotlib.figure.Figure objects rendered by the Agg canvas, never pyplot: no
display is needed, no global backend is switched, and no figure outlives its call.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatterSciNotation, MaxNLocator, NullFormatter

from lionsim.numbers import binary_bytes_text, binary_sizes, bytes_text
from lionsim.reports.columns import workload_text
from lionsim.reports.files import write_atomic
from lionsim.reports.plots.title_wrap import balanced_wrap

FIGSIZE = (10.0, 5.2)  # inches
DPI = 120
FORMATS = ("png", "svg")  # every plot is written in each, same stem

# Saturated, pairwise distinct colours (min RGB distance > 75 of 441), so 13+ runs stay apart;
# tab10's nine saturated colours first (its grey would pass for a reference line), then a set
# picked greedily for the largest CIELAB distance to every earlier colour (no navy beside the
# first blue, no teal beside the cyan). Beyond 10 runs the line style changes as well (run_styles).
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
    "#0000ff", "#ff00ff", "#0b4008", "#ff0789", "#8fb67b", "#3a18b1", "#ffb07c", "#720058", "#645403",
    "#770001", "#5edc1f", "#ffd700",
)
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
STYLE_GROUP = 10  # runs per line style: runs 1-10 solid, 11-20 dashed, ...
TWIN_DASHES = (0, (4, 4))  # a curve identical to an earlier one: dashes over it, both colours show
CLOSE = 0.004  # curves closer than this fraction of the y span everywhere would hide each other
BASELINE_WIDTH = 2.6  # the baseline's lines are thicker than the others' (LINE_WIDTH)
LINE_WIDTH = 1.6
MAX_MARKED = 30  # up to this many points a line marks each; beyond, about MARKS markers along it
MARKS = 15
TITLE_CHARS = 120  # characters of a title line across an inch, over its font size in points (DejaVu Sans)


FEW_POINTS = 3  # a series of this many points or fewer is mostly its markers: drawn larger (marker_size)
FEW_MARKER = 7.0  # points: such a series' marker size


def marker_size(points: int, size: float) -> float:
    """A series' marker size: `size`, or FEW_MARKER where it has FEW_POINTS points or fewer, since
    such a series is its markers (one evaluation is one point: no line shows it)."""
    return max(size, FEW_MARKER) if points <= FEW_POINTS else size


def mark_every(points: int, k: int = 0) -> tuple[int, int] | None:
    """markevery for the k-th line of `points` points: None (every point) up to MAX_MARKED; beyond,
    about MARKS markers (a line of 1,000 points: a line, a marker now and then), each line's
    shifted by k so that two overlapping lines' markers do not land on the same points."""
    if points <= MAX_MARKED:
        return None
    every = math.ceil(points / MARKS)
    return (k % every, every)


def fit_title(text: str, inches: float, fontsize: float = 11) -> str:
    """`text` with each of its lines wrapped to the width of `inches` at `fontsize`, so that a
    long model, network or path is folded onto the next line rather than cut at the figure's edge;
    a wrapped line's parts balanced (balanced_wrap), never a last word alone on a line."""
    width = max(20, int(inches * TITLE_CHARS / fontsize))
    return "\n".join(balanced_wrap(line, width) if line else line for line in text.split("\n"))


def title_with_caption(fig: Figure, headline: str, context: str, caption: str, fontsize: float = 10) -> None:
    """A title of two lines at most, each cut to the figure's width ("..." where cut): `headline`
    (what is plotted) over `context` (the essentials: model, cluster); the full details,
    `caption`, in small type under the axes, wrapped, so a long model, network or run name
    neither folds the title onto many lines nor is lost."""
    width = max(20, int(fig.get_figwidth() * TITLE_CHARS / fontsize))
    fig.suptitle("\n".join(line if len(line) <= width else line[:width - 3] + "..." for line in (headline, context)),
                 fontsize=fontsize)
    fig.supxlabel(fit_title(caption, fig.get_figwidth(), 8), fontsize=8, color="#444444")


def run_colours(labels: list[str]) -> dict[str, tuple]:
    """One RGBA colour per run label, by order in `labels` (PALETTE, cycling past its end)."""
    return {label: to_rgba(PALETTE[i % len(PALETTE)]) for i, label in enumerate(labels)}


def run_styles(labels: list[str], baseline: str | None = None) -> dict[str, dict]:
    """matplotlib line keywords per run label: its colour, a line style that changes every
    STYLE_GROUP runs, a marker, and a thicker line for the baseline."""
    colours = run_colours(labels)
    return {
        label: {
            "color": colours[label],
            "linestyle": LINESTYLES[(i // STYLE_GROUP) % len(LINESTYLES)],
            "marker": MARKERS[i % len(MARKERS)],
            "linewidth": BASELINE_WIDTH if label == baseline else LINE_WIDTH,
        }
        for i, label in enumerate(labels)
    }


def ordered_labels(labels, baseline: str | None) -> list[str]:
    """Run labels in first-appearance order, the baseline first: the colour order of a directory."""
    unique = list(dict.fromkeys(labels))
    return ([baseline] + [x for x in unique if x != baseline]) if baseline in unique else unique


def display_label(label: str, baseline: str | None) -> str:
    return f"{label} (baseline)" if label == baseline else label


def overlapping(curves, span: float | None = None) -> dict[str, tuple[str, bool]]:
    """{label: (an earlier curve's label, exactly equal)} for each curve of `curves` (label, x, y
    in drawing order) whose y at the same x equals an earlier curve's, or lies within CLOSE of
    the y span (of every curve, unless given) of it everywhere: drawn plainly, it would hide
    under the earlier one. Such curves are drawn with TWIN_DASHES and named by twin_name."""
    curves = [(label, np.asarray(x, dtype=float), np.asarray(y, dtype=float)) for label, x, y in curves]
    if span is None:
        values = np.concatenate([y[np.isfinite(y)] for _, _, y in curves]) if curves else np.array([])
        span = float(values.max() - values.min()) if len(values) else 0.0
    found: dict[str, tuple[str, bool]] = {}
    seen: list[tuple[str, np.ndarray, np.ndarray]] = []
    for label, x, y in curves:
        if np.isnan(y).all():
            continue
        for other, ox, oy in seen:
            if len(ox) != len(x) or not np.array_equal(ox, x, equal_nan=True):
                continue
            if np.array_equal(oy, y, equal_nan=True):
                found[label] = (other, True)
                break
            if span > 0 and np.array_equal(np.isnan(oy), np.isnan(y)) and np.nanmax(np.abs(oy - y)) <= CLOSE * span:
                found[label] = (other, False)
                break
        else:
            seen.append((label, x, y))
    return found


def twin_name(text: str, twin: tuple[str, bool] | None, where: str = "") -> str:
    """A legend entry naming the curve `text` hides under: "(identical to X)" or "(overlaps X)"."""
    if twin is None:
        return text
    other, exact = twin
    return f"{text} ({'identical to' if exact else 'overlaps'} {other}{where})"


class _PlainLogFormatter(LogFormatterSciNotation):
    """The ticks a log axis labels by default, written as plain numbers ("60", "0.2", "200")."""

    def __call__(self, x, pos=None):
        return f"{x:g}" if super().__call__(x, pos) else ""


def plain_log(axis) -> None:
    """Label a log axis (ax.xaxis or ax.yaxis) in plain numbers, not 6x10^1."""
    base = getattr(axis.get_transform(), "base", 10.0)
    axis.set_major_formatter(_PlainLogFormatter(base))
    axis.set_minor_formatter(_PlainLogFormatter(base, labelOnlyBase=False))


LOG_MANTISSAS = ((1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 5, 6, 8), (1, 2, 3, 5), (1, 2, 5), (1, 3), (1,))
"""A log axis's labelled values, m x 10^k, fewer as it spans more: an axis of under a decade (a step
time of 50 to 100 ms) gets 50, 60, 70, 80, 90, 100 rather than its two ends alone."""
MAX_LOG_TICKS = 8
MIN_LOG_GAP = 1 / 12  # of the axis's span in decades: neighbouring labels no closer (they would touch)
LOG_MARGIN = 0.02  # of its span in decades: a log axis runs on this far past its end labels


def labelled_log_axis(axis, low: float, high: float, label=lambda v: f"{v:g}") -> tuple[float, float]:
    """Label a log axis (ax.xaxis or ax.yaxis) showing data from `low` to `high` at round values
    (the densest of LOG_MANTISSAS x 10^k that keeps to MAX_LOG_TICKS labels at least MIN_LOG_GAP
    of the span apart) from the last one at or below `low` to the first at or above `high`, the
    axis ending just past them: its top (and bottom) is labelled at any range. (matplotlib's own
    labels stop at the last decade once an axis spans more than one, so a step time of 22 s topped
    an axis whose highest label was 10; and 1, 2, 3, 5 alone left an axis of 50 to 100 ms two
    labels.) Returns the end labels' values."""
    for mantissas in LOG_MANTISSAS:
        values = [m * 10.0 ** k for k in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 2)
                  for m in mantissas]
        start = max(v for v in values if v <= low * (1 + 1e-9))
        end = min(v for v in values if v >= high * (1 - 1e-9))
        if start == end:  # one value, itself round: a label either side of it
            start, end = max(v for v in values if v < start), min(v for v in values if v > end)
        ticks = [v for v in values if start <= v <= end]
        gaps = np.diff(np.log10(ticks)) / math.log10(end / start)
        if len(ticks) <= MAX_LOG_TICKS and gaps.min() >= MIN_LOG_GAP:
            break
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: label(v)))
    axis.set_minor_formatter(NullFormatter())
    margin = (end / start) ** LOG_MARGIN
    getattr(axis.axes, f"set_{axis.axis_name}lim")(start / margin, end * margin)
    return start, end


LINEAR_TICKS = 6  # about this many round labels on a linear axis (labelled_linear_axis)
LINEAR_BINS = (LINEAR_TICKS, LINEAR_TICKS - 1, LINEAR_TICKS + 1, LINEAR_TICKS - 2, LINEAR_TICKS + 2, 3)
"""The label counts labelled_linear_axis tries, nearest LINEAR_TICKS first, for one that labels the end."""
ROUND_STEPS = [1, 2, 2.5, 5, 10]
"""A linear axis's label spacings, x 10^k (MaxNLocator's steps): 15 (its default's 1.5) read oddly."""


def labelled_linear_axis(axis, high: float, integer: bool = True) -> list[float]:
    """Label a linear axis (ax.xaxis or ax.yaxis) from 0 to `high` at evenly spaced round values
    (1, 2, 2.5 or 5 x 10^k apart: ROUND_STEPS) and the axis ends at `high`, the data's end (the last
    step of a run). The spacing is the one nearest LINEAR_TICKS labels that puts a label on `high`
    itself (80 steps: 0, 20, ... 80), so the end is read off the axis; where none does (79), the
    round labels alone, evenly spaced: appending the end gave `0 15 30 45 60 80`, a jump of 20
    after steps of 15. The linear counterpart of labelled_log_axis. Returns the ticks."""
    def ticks_of(bins: int) -> list[float]:
        locator = MaxNLocator(bins, integer=integer, steps=ROUND_STEPS)
        return [float(t) for t in locator.tick_values(0, high) if 0 <= t <= high]

    tries = [ticks_of(bins) for bins in LINEAR_BINS]
    ticks = next((t for t in tries if len(t) > 2 and t[-1] == high), tries[0]) or [0.0, float(high)]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    getattr(axis.axes, f"set_{axis.axis_name}lim")(0, high)
    return ticks


def bytes_tick(n: float) -> str:
    """A tick of an axis of bytes: "20 MB", "1 GB" (a place on the scale, not a measured figure:
    no trailing zeros, where a table's figure reads "20.0 MB")."""
    return bytes_text(n, zeros=False)


class _BytesLogFormatter(LogFormatterSciNotation):
    """The ticks a log axis labels by default, in bytes ("20 MB", "1 GB")."""

    def __call__(self, x, pos=None):
        return bytes_tick(x) if super().__call__(x, pos) else ""


def bytes_log(axis) -> None:
    """Label a log axis of bytes in decimal units, minor ticks too where the axis spans little."""
    axis.set_major_formatter(_BytesLogFormatter())
    axis.set_minor_formatter(_BytesLogFormatter(labelOnlyBase=False))


def time_unit(max_seconds: float) -> tuple[float, str]:
    """(divisor, unit) so a time axis reaching max_seconds reads in us, ms, s, min or h."""
    if max_seconds < 1e-3:
        return 1e-6, "us"
    if max_seconds < 1.0:
        return 1e-3, "ms"
    if max_seconds < 300.0:
        return 1.0, "s"
    if max_seconds < 3 * 3600.0:
        return 60.0, "min"
    return 3600.0, "h"


BYTES_FORMATTER = FuncFormatter(lambda v, _pos: bytes_tick(v) if v > 0 else "0")

SIZE_TICKS = 8
"""Most labelled ticks on a binary size axis (1 KiB to 1 GiB is 21 powers of two: every fifth
labelled, none overlapping)."""


def size_axis(ax: Axes, sizes) -> str:
    """A log x axis of message sizes in the unit system of the table that lists them
    (numbers.binary_sizes): binary sizes (--sizes 1KiB:1GiB) ticked at powers of two and
    labelled "1 KiB", "1 MiB"; decimal ones at powers of ten, "1 kB", "1 MB". The axis label it
    returns names the unit."""
    ax.set_xscale("log")
    if not binary_sizes(sizes):
        ax.xaxis.set_major_formatter(BYTES_FORMATTER)
        return "message size (bytes, log scale; 1 kB = 1e3 B)"
    low, high = (int(math.floor(math.log2(min(sizes)))), int(math.ceil(math.log2(max(sizes)))))
    # every 1, 2, 5 or 10th power, on multiples of it: 1 KiB, 32 KiB, 1 MiB, ... 1 GiB both ends
    every = next((k for k in (1, 2, 5) if (high - low) // k + 1 <= SIZE_TICKS), 10)
    ax.xaxis.set_major_locator(FixedLocator([2.0**e for e in range(low, high + 1) if e % every == 0]))
    ax.xaxis.set_minor_locator(FixedLocator([2.0**e for e in range(low, high + 1)]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: binary_bytes_text(v) if v >= 2**10 else bytes_tick(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    return "message size (bytes, log scale; 1 KiB = 1024 B)"


def context(frame, extra: str = "") -> str:
    """'workload · N workers · network' (lists values where a frame mixes them)."""

    def values(col: str) -> str:
        if col not in frame.columns:
            return "?"
        return ", ".join((workload_text if col == "workload" else str)(v) for v in dict.fromkeys(frame[col]))

    text = f"{values('workload')} · {values('workers')} workers · {values('network')}"
    return f"{text} · {extra}" if extra else text


def figure(title: str, subtitle: str = "", nrows: int = 1, ncols: int = 1, size: tuple | None = None,
           **subplot_kw) -> tuple[Figure, list[Axes]]:
    """A constrained-layout Figure with a title (and a second, smaller context line) and its axes, flat."""
    fig = Figure(figsize=size or FIGSIZE, dpi=DPI, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw).ravel().tolist()
    fig.suptitle(fit_title(f"{title}\n{subtitle}" if subtitle else title, fig.get_figwidth()), fontsize=11)
    for ax in axes:
        ax.grid(True, which="major", alpha=0.3, linewidth=0.6)
        ax.set_axisbelow(True)
    return fig, axes


LEGEND_FONT = 9  # points
LEGEND_ENTRY = 0.21  # inches a one-line legend entry takes at LEGEND_FONT (text and spacing)
LEGEND_LINE = 0.15  # inches each further line of an entry adds
LEGEND_PAD = 0.25  # inches around the entries
TITLE_LINE = 0.22  # inches a line of the figure's title takes, its padding aside
AXIS_BAND = 0.8  # inches under the axes for tick labels and the axis label
MAX_HEIGHT = 14.0  # inches: past this a legend goes to more columns rather than a taller figure
CHAR_WIDTH = 0.075  # inches a legend character takes at LEGEND_FONT (DejaVu Sans, mean)


def legend_height(labels: list[str], title: str | None = None, ncol: int = 1) -> float:
    """Inches a legend of `labels` (some of several lines) in `ncol` columns takes at LEGEND_FONT."""
    entries = [1 + str(label).count("\n") for label in labels] + ([1] if title else [])
    per_column = math.ceil(len(entries) / ncol)
    tallest = max((sum(entries[i:i + per_column]) for i in range(0, len(entries), per_column)), default=0)
    rows = min(per_column, len(entries))
    return LEGEND_PAD + rows * LEGEND_ENTRY + (tallest - rows) * LEGEND_LINE


def _rows(fig: Figure) -> int:
    """Rows of panels in `fig`'s grid."""
    return max((ax.get_subplotspec().get_gridspec().nrows for ax in fig.axes if ax.get_subplotspec() is not None),
               default=1)


def _room_for_legend(fig: Figure, labels: list[str], title: str | None) -> int:
    """Grow `fig`'s height so a legend of `labels` fits: beside one row of axes, within that row's
    height (constrained layout collapses axes a taller legend would overhang); centred beside
    several rows, clear of the title above it. Past MAX_HEIGHT, more columns instead, the figure
    widened by a column each. Returns the columns."""
    title_lines = fig._suptitle.get_text().count("\n") + 1 if fig._suptitle is not None else 0
    title_band = title_lines * TITLE_LINE + 0.3
    bands = title_band + AXIS_BAND if _rows(fig) == 1 else 2 * title_band
    ncol = 1
    while bands + legend_height(labels, title, ncol) > MAX_HEIGHT and ncol < len(labels):
        ncol += 1
    need = bands + legend_height(labels, title, ncol)
    if need > fig.get_figheight():
        fig.set_figheight(min(need, max(MAX_HEIGHT, fig.get_figheight())))
    if ncol > 1:
        widest = max(len(line) for label in labels for line in str(label).split("\n"))
        fig.set_figwidth(fig.get_figwidth() + (ncol - 1) * (widest * CHAR_WIDTH + 0.6))
    return ncol


class Words(Line2D):
    """A legend entry that is words alone: nothing is drawn where its handle goes (a glyph there
    promises a mark in the axes: a crossover said in the legend because its span is the whole panel
    is drawn nowhere), its text in `color` (legend_outside colours it)."""

    def __init__(self, label: str, color) -> None:
        super().__init__([], [], linestyle="none", marker="none", color=color, label=label)


def legend_outside(target, handles: list | None = None, title: str | None = None, labels: list | None = None,
                   **extra) -> None:
    """Legend right of the axes (or, for a figure of one row of panels, of its right-most panel;
    of several rows, right of the figure), so it never covers data, top-aligned under the title.
    A long legend grows the figure's height, so every entry shows and the axes keep their size
    (with more columns past MAX_HEIGHT)."""
    fig = target if isinstance(target, Figure) else target.figure
    if handles is None:
        handles, found = target.get_legend_handles_labels()
        labels = found if labels is None else labels
    if labels is None:
        labels = [h.get_label() for h in handles]
    ncol = _room_for_legend(fig, labels, title)
    kwargs = {"handles": handles, "labels": labels, "fontsize": LEGEND_FONT, "frameon": False, "title": title,
              "ncols": ncol, **extra}
    if isinstance(target, Figure):
        grid = [ax for ax in target.axes if ax.get_subplotspec() is not None]
        if grid and _rows(target) == 1:
            target = max(grid, key=lambda ax: ax.get_subplotspec().colspan.stop)  # one row: its last panel
        else:  # centred beside several rows: the figure is tall enough that it stays under the title
            _colour_words(target.legend(loc="outside right center", **kwargs), handles)
            return
    _colour_words(target.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), **kwargs), handles)


def _colour_words(legend, handles: list) -> None:
    """Each Words entry's text in its colour (the entry has no glyph to carry it)."""
    for handle, text in zip(handles, legend.get_texts()):
        if isinstance(handle, Words):
            text.set_color(handle.get_color())


LEGEND_COLUMN_GAP = 0.7  # inches a legend column takes beyond its text: the handle and the gap


def legend_below(fig: Figure, handles: list) -> int:
    """Legend under the figure's axes, across its whole width, in as many columns as the widest
    entry allows; the figure grows by the legend's height, so the axes keep theirs. For figures of
    panels stacked in a column: a legend right of one panel took a column of the figure's width
    beside every panel, and a long one squeezed both (the panels' labels then ran off the figure).
    Returns the columns."""
    labels = [h.get_label() for h in handles]
    widest = max((len(line) for label in labels for line in str(label).split("\n")), default=1)
    ncol = max(1, min(len(labels), int((fig.get_figwidth() - 0.4) // (widest * CHAR_WIDTH + LEGEND_COLUMN_GAP))))
    fig.set_figheight(fig.get_figheight() + legend_height(labels, None, ncol))
    fig.legend(handles=handles, labels=labels, loc="outside lower center", ncols=ncol, fontsize=LEGEND_FONT,
               frameon=False)
    return ncol


def fold_label(text: str, chars: int) -> str:
    """An axis label folded onto lines of at most `chars` characters (where a word allows): at
    spaces but not inside brackets ("(log scale)" stays whole), and inside a run name before its
    '@' (streaming-diloco / @hier:fp8-e5m2-allreduce), so a y label along a short panel stays
    within the panel's height rather than running off the figure."""
    words = [part for word in re.findall(r"\([^)]*\)|\S+", text) for part in _at_split(word, chars)]
    lines: list[str] = []
    for word, glued in words:
        if lines and len(lines[-1]) + (0 if glued else 1) + len(word) <= chars:
            lines[-1] += word if glued else " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _at_split(word: str, chars: int) -> list[tuple[str, bool]]:
    """(piece, glued to the previous piece) for `word`: itself, or split before its '@' when too long."""
    if len(word) <= chars or "@" not in word[1:]:
        return [(word, False)]
    head, tail = word.split("@", 1)
    return [(head, False), ("@" + tail, True)]


def save(fig: Figure, path: Path) -> list[Path]:
    """Write `fig` as path.png and path.svg (same stem), each atomically; return both paths.
    The SVG is byte-stable for the same figure: no date, ids hashed from a fixed salt."""
    path = Path(path)
    written = []
    with matplotlib.rc_context({"svg.hashsalt": "lionsim"}):
        for fmt in FORMATS:
            meta = {"Date": None} if fmt == "svg" else {}
            written.append(write_atomic(path.with_suffix(f".{fmt}"),
                                        lambda f, fmt=fmt, meta=meta: fig.savefig(f, format=fmt, metadata=meta),
                                        binary=True))
            # The first save laid the figure out; the others reuse it (the layout is the slow part).
            fig.set_layout_engine("none")
    return written
