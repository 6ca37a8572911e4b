"""A message naming a value's type says it with its article ("an int", "a str") or in JSON's words
for parsed JSON ("a JSON array"): `a {type(x).__name__}` printed "it returned a int" and "holds a
JSON list". lionsim.errors.a_type and json_type say it, and no module writes the article again."""

from __future__ import annotations

import re

import pytest

from lionsim.errors import a_type, json_type
from tests.helpers import REPO


@pytest.mark.parametrize("value, words", [(3, "an int"), ("x", "a str"), (object(), "an object"), (None, "None"),
                                          ([1], "a list"), (1.5, "a float"), (Ellipsis, "an ellipsis")])
def test_a_type_takes_the_article_its_name_is_said_with(value, words):
    assert a_type(value) == words


@pytest.mark.parametrize("value, words", [([1], "a JSON array"), ("x", "a JSON string"), (3, "a JSON number"),
                                          (2.5, "a JSON number"), (True, "a JSON boolean"), (None, "a JSON null"),
                                          ({}, "a JSON object")])
def test_json_type_names_a_parsed_value_in_jsons_words(value, words):
    assert json_type(value) == words


def test_no_module_writes_an_article_before_a_type_name_again():
    written = re.compile(r"\ban? (JSON )?\{type\(")
    found = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "lionsim").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if written.search(line)]
    assert not found, found
