"""A sparse plug-in must say how many pairs it sends at the size it is priced at: estimate prices a
model it never built (--params, --model) through spec_scaled, and the base class's (k = 0) priced a
top-k plug-in that left it out at 0 bytes, its "speedup" the fastest step, with no word. Such a spec
is refused as the file loads, in one line naming spec_scaled (as a votes spec without its rule is);
the example that declares it loads and is priced at its k."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from lionsim.strategies import STRATEGIES
from tests.helpers.cli import one_line_exit_2, run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py"


def _without_spec_scaled(tmp_path: Path) -> Path:
    text = EXAMPLE.read_text()
    start = text.index("    def spec_scaled(")
    end = text.index("    def encode(")
    path = tmp_path / "randomk_noscale.py"
    path.write_text(text[:start] + text[end:])
    return path


@pytest.mark.parametrize("command", [["estimate", "-s", "randomk-ef", "--params", "1e8", "--tokens-per-worker", "1024"],
                                     ["bench", "-s", "randomk-ef", "-w", "mlp", "--steps", "1"],
                                     ["strategies"]])
def test_a_sparse_spec_without_its_k_at_scale_is_refused_as_it_loads(tmp_path, capsys, command, forget_plugins):
    path = _without_spec_scaled(tmp_path)
    before = STRATEGIES.names()
    out = ["--out", str(tmp_path / "out")] if command[0] == "bench" else []
    err = one_line_exit_2([command[0], "--plugin", str(path), *command[1:], *out], capsys,
                          f"plugin {path}: strategy 'randomk-ef': its spec_scaled(160, 2) returns a sparse spec with "
                          "k=0 of numel=160; accepted: PayloadSpec(kind='sparse', numel=N, k=K), 1 <= K <= N")
    assert "spec_scaled says its K there" in err
    assert STRATEGIES.names() == before and not (tmp_path / "out").exists()


def test_the_example_that_says_its_k_is_priced_at_it(capsys, forget_plugins):
    """At 10^8 parameters and ratio 0.05, k = 5e6 pairs of 12 bytes (int64 index, float32 value): the
    bytes sent a worker on sparse-allgather are at least its own pairs."""
    code, out, err = run_cli(["estimate", "--plugin", str(EXAMPLE), "-s", "randomk-ef", "--params", "1e8", "--tokens-per-worker", "1024",
                              "-n", "4", "--format", "csv"], capsys)
    assert code == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row["wire_bytes"] >= 5_000_000 * 12
