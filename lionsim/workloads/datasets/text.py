"""Character-level text: read a local UTF-8 file, map characters to token ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from lionsim.errors import LionsimError


@dataclass(frozen=True, slots=True)
class CharText:
    """A text as token ids over its own sorted character vocabulary."""

    tokens: Tensor
    """int64 (len(text),) token ids."""
    vocab: tuple[str, ...]
    """Character of each token id, in code point order."""


def read_text(path: Path) -> str:
    """The contents of a UTF-8 text file; LionsimError if missing, unreadable, not UTF-8 or binary."""
    path = Path(path)
    if not path.is_file():
        raise LionsimError(f"text file not found: {path}" if not path.exists() else f"not a regular file: {path}")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise LionsimError(f"cannot read text file {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LionsimError(f"{path} is not UTF-8 text (invalid byte at offset {e.start})") from None
    if "\x00" in text:
        raise LionsimError(f"{path} looks binary (it contains NUL characters); gpt needs a UTF-8 text file")
    return text


def encode_chars(text: str) -> CharText:
    """Token ids of `text` over the sorted set of its characters."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)  # one code point per character
    vocab, ids = np.unique(codes, return_inverse=True)
    return CharText(tokens=torch.from_numpy(ids.astype(np.int64)), vocab=tuple(chr(c) for c in vocab))
