"""One rule counts a noun (lionsim.numbers.plural): singular where the count reads "1", the noun
and an s (or its own plural) otherwise, a count already written (grouped, "8/16", "8-16") as
written. Where a message wrote a plural whatever its count it read "1 failing checks", "1 cells",
"on 1 workers": those go through the rule now."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("n,noun,many,text", [
    (1, "step", None, "1 step"), (0, "step", None, "0 steps"), (2, "step", None, "2 steps"),
    (np.int64(1), "worker", None, "1 worker"), ("1", "worker", None, "1 worker"),
    ("8/16", "worker", None, "8/16 workers"), ("8-16", "worker", None, "8-16 workers"),
    ("1,024", "node", None, "1,024 nodes"), (1, "pass", "passes", "1 pass"), (5, "pass", "passes", "5 passes"),
    (1, "failing check", None, "1 failing check"), (11, "failing check", None, "11 failing checks"),
])
def test_a_count_and_its_noun(n, noun, many, text):
    from lionsim.numbers import plural

    assert plural(n, noun, many) == text


def test_one_failing_check_in_one_run_reads_singular():
    from lionsim.cli.regress_view import failure_lines
    from lionsim.regress.rows import REGRESSED, Row

    rows = [Row("c1", "b@y", "final_loss", REGRESSED, 1.0, 1.5, 0.1, note="worse")]
    lines = failure_lines(rows, "1 check", "loose", 3.0)
    assert lines[0].startswith("FAIL: 1 of 1 check failed")
    assert lines[1] == "  c1: 1 failing check in 1 run; worst:"
