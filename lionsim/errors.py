"""The one exception type that means "the user gave bad input".

The CLI turns a LionsimError into a single line on stderr and exit code 2; anything else
is a bug and keeps its traceback.
"""


class LionsimError(ValueError):
    """Bad usage or bad input: the message names the bad value and what is accepted."""


def a_type(value: object) -> str:
    """`value`'s type with its article, for a message: "an int", "a str", "a Module", "None" (not
    "a int", "a NoneType")."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


JSON_TYPES = ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"), (dict, "object"),
              (type(None), "null"))
"""A parsed JSON value's type in JSON's words (bool before int: True is an int in Python)."""


def json_type(value: object) -> str:
    """What a parsed JSON value is, in JSON's words: "a JSON array", "a JSON null" (not "a JSON list")."""
    return next((f"a JSON {noun}" for kind, noun in JSON_TYPES if isinstance(value, kind)), a_type(value))
