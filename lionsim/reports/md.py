"""Markdown pieces the reports share (run and sweep reports, estimate sweep reports)."""

from __future__ import annotations


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table; cells are text already formatted."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)
