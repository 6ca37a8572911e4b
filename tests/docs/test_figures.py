"""The figures the pages quote from commands are generated blocks placed once each (lionsim.docgen.figures),
and the test counts README.md and docs/ci-guard.md give are about what pytest collects."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import lionsim.docgen.__main__  # noqa: F401  (registers every block)
from lionsim.docgen.blocks import BLOCKS, checkout, pages, where_blocks
from lionsim.docgen.figures import md, ms
from lionsim.numbers import bytes_text as size
from lionsim.numbers import run_duration


def test_every_block_has_its_markers_in_one_page():
    """Cheap (no block renders): a registered block with no markers, or markers with no block, is named."""
    found = where_blocks(pages())
    assert sorted(set(BLOCKS.names()) - set(found)) == [] and sorted(set(found) - set(BLOCKS.names())) == []


def test_the_figures_are_written_as_the_pages_write_them():
    assert [ms(s) for s in (0.0776, 0.3306, 1.5478, 403.667)] == ["77.6", "331", "1,548", "403,667"]
    assert [size(n) for n in (1.42e9, 8.33e8, 3.4e6, 512)] == ["1.42 GB", "833 MB", "3.40 MB", "512 B"]
    assert run_duration(62268.6) == "17:17:49"  # 17 h 17 min 48.6 s, rounded (the whole-run block)
    assert md(["a", "b"], [["1", "2"]]) == "| a | b |\n|---|---|\n| 1 | 2 |\n"


def _stated(text: str, tier: str) -> int:
    pattern = {"ci": r"CI tier[^.]*?about ([\d,]+) tests", "slow": r"slow tier[^.]*?about ([\d,]+) tests"}[tier]
    return int(re.search(pattern, " ".join(text.split())).group(1).replace(",", ""))


@pytest.mark.slow
def test_the_test_counts_the_docs_give_are_about_what_pytest_collects():
    """Collecting the suite takes 40 s or so: slow tier. Within 10% (the pages say "about")."""
    root = checkout()
    counts = {}
    for tier, marker in (("ci", "not slow"), ("slow", "slow")):
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "-m", marker], cwd=root, capture_output=True, text=True, timeout=600)
        counts[tier] = int(re.search(r"(\d+)(?:/\d+)? tests? collected", done.stdout).group(1))
    for page in ("README.md", "docs/ci-guard.md"):
        text = (root / page).read_text(encoding="utf-8")
        for tier, n in counts.items():
            assert abs(_stated(text, tier) - n) <= 0.1 * n, (page, tier, _stated(text, tier), n)
