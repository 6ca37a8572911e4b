"""README.md and docs/*.md read as documentation of this repository: every relative link (and
its #anchor) resolves, no page points outside the repository or to a tracker's issue numbers,
prose keeps to 100 columns, and the test command and the CI tier's time agree wherever given.

The reference for anchors is GitHub's own rule for heading ids (lowercase; punctuation but `-`
and `_` dropped; spaces to `-`; a repeated heading gets `-1`, `-2`, ...), written out here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^( *)```.*?^\1```[ \t]*$", re.M | re.S)
TEST_COMMAND = 'pip install torch==2.13.0 -e ".[test]" && python -m pytest -q -n logical'
OUTSIDE = [re.compile(p, re.I) for p in (r"\bissues? #?\d+", r"(?<![\w&/`])#\d+\b", r"SPEC\.md", r"REFERENCE\.md",
                                         r"\.\./shared", r"\bseeds/")]

CITED = re.compile(r"\b[\w.-]+/[\w.-]+\s+(?:issues?|pull\s+requests?)\s+#?\d+", re.I)
"""A public repository's issue or pull request cited as a source (owner/name issue N), a generated
paragraph's line break anywhere in it."""


def prose(text: str) -> str:
    """The page without its fenced code blocks (a `#` there is a shell comment, not a link)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def anchors(text: str) -> set[str]:
    """The heading ids GitHub gives a page."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose(text).splitlines():
        match = re.match(r"#{1,6} (.*)", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    broken = [f"{m.group(0).strip()}... (a link target split across lines)"
              for m in re.finditer(r"\]\([^)\s]*\n", prose(page.read_text(encoding="utf-8")))]
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where.read_text(encoding="utf-8")):
            broken.append(f"{target} (no heading #{anchor} in {where.name})")
    return broken


def test_the_slug_rule_is_githubs():
    text = "# Real collectives: `--backend gloo|nccl`\n## Set-up: two commands\n## Set-up: two commands\n"
    assert anchors(text) == {"real-collectives---backend-gloonccl", "set-up-two-commands", "set-up-two-commands-1"}


def test_a_link_target_split_across_lines_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\nsee [the top](page.md#to-\np) here\n", encoding="utf-8")
    assert broken_links(page) == ["](page.md#to-... (a link target split across lines)"]


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# Here\n", encoding="utf-8")
    page.write_text("[ok](b.md#here) [gone](c.md) [bad](b.md#there) [web](https://x.org/y)\n"
                    "```bash\n[not a link](nowhere.md)\n```\n", encoding="utf-8")
    assert broken_links(page) == ["c.md (no such file)", "b.md#there (no heading #there in b.md)"]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_page_points_outside_the_repository(page):
    # a cited source ("NVIDIA/nccl issue 812") is another project's thread, not this one's tracker
    text = CITED.sub(lambda m: " " * len(m.group(0)), page.read_text(encoding="utf-8"))
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for p in OUTSIDE for m in p.finditer(text)]
    assert found == []


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_prose_keeps_to_100_columns(page):
    long = [f"line {i}" for i, line in enumerate(prose(page.read_text(encoding="utf-8")).splitlines(), 1)
            if len(line) > 100 and not line.startswith("|") and not line.startswith("<!--")]
    assert long == [], "wrap prose at 100 columns (tables may be longer)"


def test_the_readme_is_a_front_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_readme_and_ci_run_the_same_test_command_and_state_the_same_time():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in readme and TEST_COMMAND in ci.splitlines()
    stated = {name: re.findall(r"CI tier[^.]*?under (\d+) minutes", " ".join(text.split()))
              for name, text in (("README.md", readme), (".ci/run", ci),
                                 ("pyproject.toml", (ROOT / "pyproject.toml").read_text(encoding="utf-8")))}
    assert all(stated.values()) and len({v for found in stated.values() for v in found}) == 1, stated


def test_pointers_from_config_files_name_sections_that_exist():
    """pyproject.toml and .ci/run point readers at `(docs/PAGE.md, "Heading")`: both must exist."""
    found = []
    for name in ("pyproject.toml", ".ci/run"):
        text = " ".join((ROOT / name).read_text(encoding="utf-8").replace("#", " ").split())
        found += re.findall(r'\((docs/[\w-]+\.md), "([^"]+)"\)', text)
    assert found, "no (docs/PAGE.md, \"Heading\") pointer found"
    for page, heading in found:
        slug = next(iter(anchors(f"## {heading}\n")))
        assert (ROOT / page).is_file() and slug in anchors((ROOT / page).read_text(encoding="utf-8")), (page, heading)
