"""Footer lines that differ only in the transport they name are printed once, naming each:
hier-1bit's and hier-exact's collapse notes on a flat network were two identical paragraphs."""

from __future__ import annotations

from lionsim.estimate.table import merged_notes
from tests.helpers.cli import run_cli


def test_same_text_under_two_names_is_one_line_naming_both():
    notes = ["a: x y.", "b: x y.", "a: x y.", "c: other.", "no name here: z.", "no name here: z."]
    assert merged_notes(notes) == ["a, b: x y.", "c: other.", "no name here: z."]


def test_estimate_prints_the_collapse_note_once_for_hier_1bit_and_hier_exact(capsys):
    code, out, _ = run_cli(["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "10gbe",
                            "-s", "dlion-mavo@hier-1bit", "-s", "dlion-mavo@hier-exact"], capsys)
    text = " ".join(out.split())
    body = "each node's vote is its one worker's"
    assert code == 0 and text.count(body) == 1
    assert "hier-1bit, hier-exact: one worker per node on this network" in text
