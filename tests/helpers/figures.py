"""Geometry checks on a drawn matplotlib figure: the texts a reader would find cut at its edge."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text


def drawn_texts(fig: Figure) -> list[Text]:
    """Every visible, non-empty text `fig` draws: its titles and texts, and each axes' title,
    axis labels, tick labels (those of the ticks drawn, not the locator's spares past the
    view), texts and legend. Draws the figure first (as saved: its layout is kept)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    texts = [fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts]
    texts += [t for legend in fig.legends for t in (*legend.get_texts(), legend.get_title())]
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            texts.append(axis.label)
            texts += [t for tick in axis._update_ticks() for t in (tick.label1, tick.label2)]
        legend = ax.get_legend()
        if legend is not None:
            texts += [*legend.get_texts(), legend.get_title()]
    return [t for t in texts if t is not None and t.get_visible() and t.get_text().strip()]


def cut_texts(fig: Figure, tolerance: float = 0.5) -> list[str]:
    """The texts of `fig` reaching past the figure's edge (display pixels, `tolerance` aside)."""
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    cut = []
    for text in texts:
        box = text.get_window_extent(renderer)
        if box.x0 < -tolerance or box.y0 < -tolerance or box.x1 > width + tolerance or box.y1 > height + tolerance:
            cut.append(text.get_text())
    return cut


def texts_over_lines(ax) -> list[str]:
    """The texts drawn in `ax` (ax.texts) whose box a line of `ax` (a curve, an axvline) runs through."""
    fig = ax.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    crossed = []
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        for line in ax.get_lines():
            path = line.get_transform().transform_path(line.get_path())
            if len(path.vertices) > 1 and path.intersects_bbox(box, filled=False):
                crossed.append(text.get_text())
                break
    return crossed
