"""Native stderr held back while torch's C++ layer may fail.

A failed rendezvous makes c10d log pages of stack frames straight to file descriptor 2 before
Python sees the exception; lionsim answers every such failure with one line of its own. The
block's native output is held in a temporary file: replayed if the block succeeds (a warning
is never lost), dropped if it raises (the caller reports the error).
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def native_stderr_held() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        ok = False
        try:
            yield
            ok = True
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if ok:
                held.seek(0)
                text = held.read()
                if text:
                    os.write(2, text)


def library_words(error: BaseException, limit: int = 300) -> str:
    """A collective library's error as one line a user reads: whitespace folded, gloo's source paths
    ("[/__w/pytorch/.../pair.cc:537]") and its sign-off ("GLHF!", an emoji) left out, cut at `limit`."""
    import re

    text = " ".join(str(error).encode("ascii", "ignore").decode().split())
    text = re.sub(r"\[[^\]\s]*/[^\]\s]*:\d+\]\s*", "", text).replace(" GLHF!", "").removesuffix("GLHF!").strip()
    return text[:limit]
