"""Character-level text: read a local UTF-8 file, map characters to token ids."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from lionsim.workloads.datasets.refusal import bad_data

ACCEPTED = "a UTF-8 text file for gpt"
"""What gpt's --data reads, as its refusals say it."""


@dataclass(frozen=True, slots=True)
class CharText:
    """A text as token ids over its own sorted character vocabulary."""

    tokens: Tensor
    """int64 (len(text),) token ids."""
    vocab: tuple[str, ...]
    """Character of each token id, in code point order."""


def read_text(path: Path) -> str:
    """The contents of a UTF-8 text file; LionsimError (bad --data) if missing, not a file,
    unreadable, empty, not UTF-8 or binary."""
    path = Path(path)
    check_text_path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise bad_data(path, f"it cannot be read ({e.strerror})", ACCEPTED) from None
    if not raw:
        raise bad_data(path, "the file is empty", ACCEPTED)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad_data(path, f"it is not UTF-8 text (invalid byte at offset {e.start})", ACCEPTED) from None
    if "\x00" in text:
        raise bad_data(path, "it looks binary (it contains NUL characters)", ACCEPTED)
    return text


def check_text_path(path: Path) -> None:
    """What can be told without reading: `path` is an existing, non-empty regular file (else bad --data)."""
    path = Path(path)
    if not path.exists():
        raise bad_data(path, "no such file", ACCEPTED)
    if not path.is_file():
        raise bad_data(path, "it is a directory, not a file" if path.is_dir() else "it is not a regular file", ACCEPTED)
    if path.stat().st_size == 0:
        raise bad_data(path, "the file is empty", ACCEPTED)


def encode_chars(text: str) -> CharText:
    """Token ids of `text` over the sorted set of its characters."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)  # one code point per character
    vocab, ids = np.unique(codes, return_inverse=True)
    return CharText(tokens=torch.from_numpy(ids.astype(np.int64)), vocab=tuple(chr(c) for c in vocab))


def vocab_size(path: Path) -> int:
    """Distinct characters of the text file `path` (read_text's refusals where it is not one): the
    vocabulary encode_chars gives it, read once per file version in a process (a sweep plans a
    bench per cell)."""
    path = Path(path)
    check_text_path(path)
    stat = path.stat()
    return _vocab_size(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _vocab_size(path: str, size: int, mtime_ns: int) -> int:
    return len(set(read_text(Path(path))))
