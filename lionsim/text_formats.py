"""The TOML and JSON files lionsim reads for its options (--config, --network profiles) parsed from
their bytes, and a file that does not parse refused with its reason in plain words: where the text
breaks, or that the file is not text at all (a binary file), never the codec's own message
("'utf-8' codec can't decode byte 0x89 in position 0"). The callers put the reason in their
option's one line: `bad --network FILE: REASON; accepted: ...`."""

from __future__ import annotations

import json
from typing import Any


class Unparsed(ValueError):
    """Why a file's bytes are not the format it is read as (the message: the reason, in words)."""


def parse(raw: bytes, fmt: str) -> Any:
    """`raw` read as "toml" or "json"; Unparsed with the reason where it is not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unparsed(f"not text: byte 0x{raw[e.start]:02x} at offset {e.start:,} is not UTF-8 "
                       "(a binary file?)") from None
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise Unparsed(f"not valid JSON: {e.msg} (at line {e.lineno}, column {e.colno})") from None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:  # its message says what broke and where: "... (at line 2, column 7)"
        raise Unparsed(f"not valid TOML: {e}") from None


def read_parsed(path, fmt: str, what: str, accepted: str) -> Any:
    """The file `path` read and parsed as `fmt`; where it cannot be, one LionsimError line naming it
    (`what`: "network profile", "device file") and what is `accepted`: not found, not readable, not
    the format (parse's reason), or an int past Python's digit limit for text (4,300: no decode
    error, a bare ValueError)."""
    import sys

    from lionsim.errors import LionsimError

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LionsimError(f"{what} not found: {path}; accepted: {accepted}") from None
    except OSError as e:
        raise LionsimError(f"cannot read {what} {path}: {e.strerror}") from None
    try:
        return parse(raw, fmt)
    except Unparsed as e:
        raise LionsimError(f"{path}: {e}; accepted: {accepted}") from None
    except ValueError:
        raise LionsimError(f"{path}: a number of more than {sys.get_int_max_str_digits():,} digits is out of range; "
                           f"accepted: {accepted}") from None

