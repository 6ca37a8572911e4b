"""The methods of 2025 in the docs: the defaults table (docs/methods-2025-defaults.md) is complete and
generated from the code, and the pages say which of their authors' choices lionsim follows."""

from pathlib import Path

import pytest

from lionsim.docgen.blocks import page_blocks
from lionsim.docgen.methods import DEFAULTS, defaults_table, lionsim_value
from lionsim.strategies import STRATEGIES
from lionsim.strategies.core.form import option_specs

DOCS = Path(__file__).resolve().parents[2] / "docs"
METHODS = ("muon", "dion", "muloco", "sparseloco", "streaming-diloco")


def test_the_defaults_table_is_on_its_page_as_the_code_renders_it():
    page = (DOCS / "methods-2025-defaults.md").read_text(encoding="utf-8")
    assert page_blocks(page)["methods-2025-defaults"] == defaults_table()
    for name in ("methods-2025-a.md", "methods-2025-b.md", "index.md"):
        assert "(methods-2025-defaults.md)" in (DOCS / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("name", METHODS)
def test_every_option_of_each_method_has_a_row_with_its_authors_value_and_source(name):
    cls = STRATEGIES.get(name)
    rows = {d.key: d for d in DEFAULTS if d.strategy == name}
    assert {s.field for s in option_specs(name, cls.Options)} <= set(rows)
    if name != "streaming-diloco":  # its inner AdamW is diloco's (lionsim.strategies.local_steps)
        assert {"weight_decay", "betas"} <= set(rows)
    for d in rows.values():
        assert d.authors and d.source and d.why
        label, ours = lionsim_value(d)
        if d.why == "the same":  # then the authors' value is lionsim's default
            theirs = d.authors.split(" (")[0].lower()
            assert theirs in (ours.split(" (")[0].lower(), ours.lower()), (name, d.key, ours, d.authors)


def test_the_pages_say_which_of_the_authors_choices_lionsim_follows():
    a = " ".join((DOCS / "methods-2025-a.md").read_text(encoding="utf-8").split())
    b = " ".join((DOCS / "methods-2025-b.md").read_text(encoding="utf-8").split())
    assert "dion_simple.py" in a and "wide matrix" in a and "transposed" in a
    assert "batch of" in a and "3 dimensions" in a  # muon on a 3-dim tensor
    assert "(c A) A" in a and "c (A A)" in a  # the Newton-Schulz orders
    assert "biases included" in a
    assert "caches chunk sizes by dimension length" in b and "stated intent" in b
    assert "<!-- generated: streaming-padding" in b
