"""The tables `lionsim comm` prints: modelled rows, measured rows beside the model, a fit."""

from __future__ import annotations

import math

from rich import box
from rich.table import Table

from lionsim.cli.app import console
from lionsim.numbers import binary_bytes_text, binary_sizes, bytes_text, plural, ratio_text, set_in_binary

TYPE_SHORT = {"float": "f32", "float32": "f32", "bfloat16": "bf16", "half": "f16", "float16": "f16", "int8": "i8",
              "uint8": "u8", "int32": "i32"}
"""nccl-tests' and torch's dtype names, short (the tables fit 80 columns)."""


def human_bytes(n: float) -> str:
    """A size as it was most likely given: binary units for a whole number of KiB (1 KiB to
    1 GiB, --sizes 1K:1G), decimal ones otherwise (1 kB = 1e3 B)."""
    if set_in_binary(n):
        return binary_bytes_text(n)
    return bytes_text(n)


def size_column(sizes) -> list[str]:
    """A table's sizes in one unit system (numbers.binary_sizes: the comm plots' size axis takes
    the same): binary where every size was set in binary units (--sizes 1K:1G), else decimal for
    all (--sizes 1K:1M:x1.5 read "1 KiB" above "1.54 kB")."""
    if binary_sizes(sizes):
        return [binary_bytes_text(n) if n >= 2**10 else bytes_text(n) for n in sizes]
    # sizes the user set read as set ("1 kB", "1 MB") where all are whole in their units; a
    # column with any fraction ("1.54 kB") keeps every figure's three digits ("1.00 kB")
    whole = [bytes_text(n, zeros=False) for n in sizes]
    return whole if not any("." in text for text in whole) else [bytes_text(n) for n in sizes]


def rate(GBps: float) -> str:
    """A bandwidth in GB/s: three decimals, or three significant digits below 0.01 (a 1 KiB call's
    0.000392 read "0.000"): numbers.ratio_text, the speedups' rule."""
    return ratio_text(GBps, 3)


def us(seconds: float) -> str:
    """Microseconds: one decimal below 1,000, whole and grouped above (never cut short)."""
    value = seconds * 1e6
    return f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def phase_lines(algorithm: str) -> str:
    """A hierarchical algorithm's name ("hier:ring+recursive_doubling+bruck", one per phase) with a
    line break after each "+": where the table would not fit, it wraps at a phase, not mid-name."""
    return algorithm.replace("+", "+\n")


def slow_words(traits, sizes) -> str:
    """What the model's mean holds beyond the fast path where the library's slow mode hits any of
    `sizes`: ", including gloo's slow calls up to 256 KiB: 23% of them, +3.2 ms", read from
    `traits`; "" where it hits none. Its mean is what makes a small call dearer than a larger one
    past max_bytes (gloo's 32 KiB all-reduce above its 1 MiB one on 10gbe)."""
    slow = traits.slow
    if not any(slow.applies(size) for size in sizes):
        return ""
    return (f", including {traits.name}'s slow calls up to {human_bytes(slow.max_bytes)}"
            f": {slow.probability:.0%} of them, +{slow.extra_s * 1e3:.3g} ms")


def model_table(rows: list[dict], name: str, library: str = "", width: int | None = None, slow: str = "") -> Table:
    """The modelled rows, titled with the network and the `library` that priced them ("nccl over
    sockets", "ideal"); `slow` (slow_words) says what the mean holds of the library's slow mode. It
    fits `width` columns (the console's; 80 in a pipe or a CI log): short headers, units in the
    caption, and a long hierarchical algorithm name on a line per phase where the table would be
    wider on one line, so that no number is ever cut."""
    def build(algorithm) -> Table:
        table = Table(title=f"modelled collectives on {name}" + (f" ({library})" if library else ""),
                      box=box.SIMPLE_HEAD, pad_edge=False, caption=f"N: workers; time: us (the mean{slow}); algbw, "
                      "busbw: GB/s (GB = 1e9 bytes, nccl-tests factors)", caption_justify="left")
        for column in ("collective", "algorithm", "N", "size", "time", "algbw", "busbw"):
            # fold rather than "…": on a terminal narrower still, a number goes on two lines, whole
            table.add_column(column, justify="left" if column in ("collective", "algorithm") else "right",
                             overflow="fold")
        for row, size in zip(rows, size_column([row["bytes"] for row in rows])):
            table.add_row(row["collective"], algorithm(row["algorithm"]), str(row["workers"]),
                          size, us(row["time_s"]), rate(row["algbw_GBps"]), rate(row["busbw_GBps"]))
        return table

    from lionsim.cli.output import natural_width

    table = build(str)
    return table if natural_width(table) <= (console.width if width is None else width) else build(phase_lines)


def print_measured(rows, backend: str, ranks: int, name: str, to=console, slow: str = "",
                   left_out: str | None = None, link: str | None = None) -> None:
    """Measured rows (compared: with model_time_s and error) and the median / worst |error| per
    collective, on the console `to` (stderr where stdout carries CSV or JSON); `slow` (slow_words)
    says what the model's mean holds of the library's slow mode. `left_out`: why the model of `name`
    describes no link measured (lionsim.reports.titles.unchecked_model): the measured columns
    alone, then that line. `link`: where the ranks measured (titles.measured_on, as bench's caption
    says it: "loopback", "between hosts")."""
    modelled = left_out is None
    table = Table(title=f"measured on {plural(ranks, backend + ' rank')}" + (f" ({link})" if link else "")
                  + (f" vs the model on {name}" if modelled else ""),
                  box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False,
                  caption="time: the slowest rank's, over iterations: median, mean, p10-p90, us; busbw: GB/s "
                          "(1e9 B/s, nccl-tests factors) from the mean"
                          + (f"; model: the network model's mean, us{slow}; err: model / mean - 1" if modelled else ""),
                  caption_justify="left")
    columns = ("collective", "type", "size", "median", "mean", "p10-p90", "busbw", *(("model", "err") if modelled else ()))
    for column in columns:
        table.add_column(column, justify="left" if column == "collective" else "right", no_wrap=True)
    for r, size in zip(rows.itertuples(index=False), size_column(list(rows.bytes))):
        table.add_row(r.collective, TYPE_SHORT.get(r.type, r.type), size, f"{r.time_s * 1e6:.0f}",
                      f"{r.time_mean_s * 1e6:.0f}", f"{r.time_p10_s * 1e6:.0f}-{r.time_p90_s * 1e6:.0f}",
                      rate(r.busbw_GBps), *((f"{r.model_time_s * 1e6:.0f}", f"{r.error:+.0%}") if modelled else ()))
    to.print(table)
    if not modelled:
        to.print(left_out, markup=False, highlight=False)
        return
    errors = rows.error.abs().groupby(rows.collective + " " + rows.type.map(lambda t: TYPE_SHORT.get(t, t)),
                                      sort=False)
    to.print(f"model {name} vs measured means, median / worst |error|: " + "; ".join(
        f"{op} {e.median():.1%} / {e.max():.1%}" for op, e in errors), markup=False, highlight=False)


def print_fit(net, summary, path, to=console) -> None:
    """The fitted link and traits, a row per op and size regime, with the fit's error on the sweep,
    on the console `to`."""
    traits = net.traits
    table = Table(title=f"fitted profile {path}: link {net.inter.bandwidth_Bps / 1e9:.4g} GB/s, alpha "
                        f"{net.inter.alpha_s * 1e6:.3g} us, host cap {traits.host_GBps:.3g} GB/s",
                  box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
                  caption="a row per size regime: floor, us per call beyond alpha; share: of the link each "
                          "direction gets; |err|: the profile's mean vs the measured mean over the sweep's sizes",
                  caption_justify="left")
    for column in ("collective", "type", "up to", "floor", "share", "sizes", "med|err|", "max|err|"):
        table.add_column(column, justify="left" if column == "collective" else "right", no_wrap=True)
    for r in summary.itertuples(index=False):
        op = traits.op(r.collective)
        for i, regime in enumerate(op.duplex):
            first = i == 0
            table.add_row(r.collective if first else "", TYPE_SHORT.get(r.dtype, r.dtype) if first else "",
                          "rest" if math.isinf(regime.max_bytes) else human_bytes(regime.max_bytes),
                          f"{op.floor(regime.max_bytes) * 1e6:.0f}", f"{regime.share:.3g}",
                          str(int(r.points)) if first else "", f"{r.median_abs_error:.1%}" if first else "",
                          f"{r.worst_abs_error:.1%}" if first else "")
    to.print(table)
    slow = traits.slow
    line = (f"slow mode: {slow.probability:.0%} of calls up to {human_bytes(slow.max_bytes)} take "
            f"{slow.extra_s * 1e3:.2f} ms more" if slow.applies(0) else "slow mode: none seen")
    rates = ", ".join(f"{d} {r:.3g} GB/s" for d, r in traits.reduce_GBps)
    to.print(line + (f"; reductions beyond float32's: {rates}" if rates else ""), markup=False, highlight=False)
    from lionsim.network.fit import link_source

    to.print(f"link: {link_source(net)}", markup=False, highlight=False)
