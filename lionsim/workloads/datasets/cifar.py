"""CIFAR-10 in its standard python-pickle layout, read from a local directory.

The directory holds data_batch_1..5 and test_batch (or is the parent of
`cifar-10-batches-py/`). Each file is a pickled dict with b"data" (uint8, N x 3072: the
red, green and blue 32x32 planes, row-major) and b"labels" (N ints in 0..9). Unpickling
runs through an allow-list of numpy globals, so a hostile file cannot run code, and every
way a file can be wrong becomes one LionsimError line.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import Tensor

from lionsim.errors import LionsimError, a_type
from lionsim.workloads.datasets.refusal import bad_data

TRAIN_FILES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_FILE = "test_batch"
SUBDIR = "cifar-10-batches-py"
CLASSES = 10
ACCEPTED = ("a CIFAR-10 python directory (data_batch_1..5 and test_batch, or the folder holding "
            f"{SUBDIR}/) for vit")
"""What vit's --data reads, as its refusals say it."""

# What numpy needs to rebuild an ndarray from a pickle (numpy 1.x and 2.x module names).
_ALLOWED_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("_codecs", "encode"),  # how protocol-2 pickles written by Python 3 store bytes ...
    ("__builtin__", "bytes"),  # ... and empty bytes
    ("builtins", "bytes"),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a CIFAR-10 batch")
        return super().find_class(module, name)


def load_cifar10(path: Path) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(train_x, train_y, test_x, test_y): images uint8 (N, 3, 32, 32), labels int64 (N,)."""
    given = Path(path)
    root = check_cifar_path(given)
    train = [_read_batch(given, root / name) for name in TRAIN_FILES]
    test_x, test_y = _read_batch(given, root / TEST_FILE)
    return torch.cat([x for x, _ in train]), torch.cat([y for _, y in train]), test_x, test_y


def check_cifar_path(path: Path) -> Path:
    """The directory holding the batch files of --data `path` (it, or its cifar-10-batches-py/),
    checked without reading them: every one is there (else bad --data)."""
    given = path = Path(path)
    if not path.exists():
        raise bad_data(given, "no such directory", ACCEPTED)
    if not path.is_dir():
        raise bad_data(given, "it is a file, not a directory", ACCEPTED)
    if not (path / TRAIN_FILES[0]).exists() and (path / SUBDIR).is_dir():
        path = path / SUBDIR
    missing = [_shown(given, path / name) for name in (*TRAIN_FILES, TEST_FILE) if not (path / name).is_file()]
    if missing:
        raise bad_data(given, f"it lacks {', '.join(missing)}", ACCEPTED)
    return path


def _read_batch(given: Path, file: Path) -> tuple[Tensor, Tensor]:
    """One batch file of the directory --data `given` names; every flaw refused as bad --data."""
    name = _shown(given, file)

    def bad(why: str) -> LionsimError:
        return bad_data(given, f"{name} {why}", ACCEPTED)

    try:
        with open(file, "rb") as f:
            batch = _SafeUnpickler(f, encoding="bytes").load()
    except OSError as e:
        raise bad(f"cannot be read ({e.strerror})") from None
    except Exception as e:  # unpickling garbage raises almost any exception type
        raise bad(f"is not a CIFAR-10 python-pickle batch ({type(e).__name__}: {e})") from None
    if not isinstance(batch, dict):
        raise bad(f"holds {a_type(batch)}, not a dict with b'data' and b'labels'")
    data, labels = _field(batch, b"data", bad), _field(batch, b"labels", bad)
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise bad(f"has b'data' {_describe(data)}, not a uint8 array of shape (N, 3072)")
    if data.shape[0] == 0:
        raise bad("holds no images")
    y = _as_array(labels)
    if y is None or y.dtype.kind not in "iu" or y.shape != (data.shape[0],):
        raise bad(f"has b'labels' {_describe(labels)}, not {data.shape[0]} integers 0..9 (one per image)")
    if y.min() < 0 or y.max() >= CLASSES:
        raise bad(f"has labels {y.min()}..{y.max()}, outside 0..9")
    images = torch.from_numpy(np.ascontiguousarray(data).reshape(-1, 3, 32, 32).copy())
    return images, torch.from_numpy(y.astype(np.int64))


def _shown(given: Path, file: Path) -> str:
    """A batch file named from the --data directory (cifar-10-batches-py/data_batch_1 under its parent)."""
    return str(file.relative_to(given))


def _field(batch: dict, key: bytes, bad: Callable[[str], LionsimError]) -> Any:
    """batch[key]; files re-pickled by Python 3 may use str keys, which we accept too."""
    for k in (key, key.decode()):
        if k in batch:
            return batch[k]
    found = ", ".join(repr(k) for k in list(batch)[:8])
    raise bad(f"has no {key!r} key (found {found or 'no keys'}), not b'data' and b'labels'")


def _as_array(value: Any) -> np.ndarray | None:
    """`value` as a numpy array if it is a list, tuple or array of a regular shape, else None."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return None
    try:
        return np.asarray(value)
    except ValueError:  # ragged nesting
        return None


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        return f"{a_type(value)} of {len(value)}"
    return type(value).__name__
