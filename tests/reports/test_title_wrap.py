"""A plot title's long line wraps into balanced lines: as few as greedy wrapping takes, the longest
as short as that count allows (against a brute force over every split), and no word alone on a
last line, in every title a small sim bench and a small gloo bench draw."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pandas as pd
import pytest

from lionsim.reports.plots import breakdown, run as run_plots, steptimes
from lionsim.reports.plots.style import balanced_wrap
from lionsim.reports.summary import SummaryRule, summarize
from tests.helpers.timing import run_record

BENCH = Path(__file__).resolve().parents[2] / "reports" / "readme" / "default-bench"  # a 100-step default bench


def brute_force_longest(words: list[str], lines: int) -> int:
    """The least longest line of any split of `words` into `lines` lines, by trying every split."""
    best = None
    for cuts in itertools.combinations(range(1, len(words)), lines - 1):
        bounds = (0, *cuts, len(words))
        longest = max(len(" ".join(words[a:b])) for a, b in zip(bounds, bounds[1:]))
        best = longest if best is None else min(best, longest)
    return best


def test_balanced_wrap_takes_greedys_line_count_at_the_least_longest_line():
    rng = random.Random(3)
    for _ in range(300):
        words = ["x" * rng.randint(1, 12) for _ in range(rng.randint(2, 12))]
        width = rng.randint(max(map(len, words)), 45)
        line = " ".join(words)
        greedy = len(__import__("textwrap").wrap(line, width))
        got = balanced_wrap(line, width).split("\n")
        assert len(got) == greedy and all(len(part) <= width for part in got)
        assert " ".join(got) == line
        if greedy > 1:
            assert max(map(len, got)) == brute_force_longest(words, greedy)


def _titles(monkeypatch, steps: pd.DataFrame, meta: dict) -> list[str]:
    """Every suptitle plot_run draws for this run (nothing written)."""
    drawn = []
    for module in (run_plots, steptimes, breakdown):
        monkeypatch.setattr(module, "save", lambda fig, path: drawn.append(fig._suptitle.get_text()) or [])
    run_plots.plot_run(Path("unused"), steps, summarize(steps, SummaryRule.of_run(meta)), meta)
    return drawn


@pytest.mark.parametrize("backend", ["sim", "gloo"])
def test_no_title_leaves_a_word_alone_on_a_line(monkeypatch, backend):
    """The gloo breakdown title's second line wrapped greedily left "dropped)" alone on a line."""
    steps = pd.read_csv(BENCH / "steps.csv")
    steps = steps[steps["strategy"].isin(["adamw", "dlion-mavo"]) & (steps["step"] <= 8)]
    if backend == "gloo":
        steps = steps.assign(backend="gloo", workers=2, comm_measured_s=steps["comm_s"], barrier_wait_s=0.0)
    meta = run_record(compute="measured" if backend == "gloo" else "h100", backend=backend, steps=8)
    titles = _titles(monkeypatch, steps, meta)
    assert len(titles) >= 5
    for title in titles:
        assert all(len(line.split()) > 1 for line in title.split("\n")), f"a word alone: {title!r}"
    wrapped = [title for title in titles if title.count("\n") > 2]
    assert backend == "sim" or wrapped  # the gloo breakdown's caption line does wrap


def test_a_title_breaks_between_its_items_not_inside_parentheses():
    """estimate --sweep's sweep.png read "mycluster inter link (8 / GPUs a node, library: nccl over
    sockets)": the balanced wrap broke inside the parenthesis. The reference: each line's own
    parentheses close on it, and at the figure's width (and a narrower one, where the parenthesis
    alone is near the width) the lines are the title's items (split at ", " outside parentheses)."""
    from lionsim.reports.plots.estimate import FIGSIZE
    from lionsim.reports.plots.style import fit_title

    line = ("gpt2-1.3b (1,315,723,264 params), 64 workers, mycluster inter link (8 GPUs a node, library: nccl "
            "over sockets), a100-80gb, overlap per run")
    items = ["gpt2-1.3b (1,315,723,264 params),", "64 workers,",
             "mycluster inter link (8 GPUs a node, library: nccl over sockets),", "a100-80gb,", "overlap per run"]
    for inches in (FIGSIZE[0], 8.0, 6.0):
        got = fit_title(line, inches).split("\n")
        assert " ".join(got) == line and len(got) > 1
        assert all(part.count("(") == part.count(")") for part in got), got
        if inches != 8.0:  # there the plain balanced wrap breaks before "(8": outside it, kept
            assert all(part.startswith(tuple(items)) and part.endswith(tuple(items)) for part in got), got


def test_a_wrap_kept_off_parentheses_takes_at_most_one_line_more_and_keeps_every_word():
    rng = random.Random(5)
    for _ in range(300):
        words = ["x" * rng.randint(1, 9) for _ in range(rng.randint(3, 16))]
        a = rng.randrange(len(words) - 1)
        b = rng.randrange(a + 1, len(words))
        words[a], words[b] = "(" + words[a], words[b] + "),"
        line = " ".join(words)
        width = rng.randint(max(map(len, words)), 50)
        greedy = len(__import__("textwrap").wrap(line, width))
        got = balanced_wrap(line, width).split("\n")
        assert " ".join(got) == line and all(len(part) <= width for part in got)
        assert len(got) <= greedy + 1
