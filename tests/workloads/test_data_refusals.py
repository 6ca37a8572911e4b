"""A --data path a workload cannot read is refused in one form, by every workload:
"bad --data PATH: WHY; accepted: WHAT THIS WORKLOAD READS", exit 2, nothing written."""

from __future__ import annotations

import re

import pytest

from lionsim.errors import LionsimError
from lionsim.workloads import WORKLOADS, WorkloadConfig, build_workload
from lionsim.workloads.datasets import cifar
from lionsim.workloads.lookup import check_workload
from tests.helpers.cli import one_line_exit_2
from tests.workloads.test_data import write_cifar


def _missing(tmp_path):
    return tmp_path / "absent"


def _directory(tmp_path):
    (tmp_path / "dir").mkdir()
    return tmp_path / "dir"


def _empty_file(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    return tmp_path / "empty"


def _binary_file(tmp_path):
    (tmp_path / "blob").write_bytes(b"\x00\x01\xff" * 1000)
    return tmp_path / "blob"


def _text_file(tmp_path):
    (tmp_path / "t.txt").write_text("hello world\n" * 500, encoding="utf-8")
    return tmp_path / "t.txt"


def _corrupt_cifar(tmp_path):
    root = write_cifar(tmp_path / "cifar")
    (root / "data_batch_3").write_bytes(b"this is not a pickle")
    return root


def _empty_cifar_batch(tmp_path):
    root = write_cifar(tmp_path / "cifar")
    (root / "test_batch").write_bytes(b"")
    return root


# (workload, what the path is, how to make it, what the refusal says why)
CASES = [
    ("vit", "missing", _missing, "no such directory"),
    ("vit", "a file", _text_file, "it is a file, not a directory"),
    ("vit", "an empty directory", _directory, "it lacks data_batch_1"),
    ("vit", "a corrupt batch", _corrupt_cifar, "data_batch_3 is not a CIFAR-10 python-pickle batch"),
    ("vit", "an empty batch", _empty_cifar_batch, "test_batch is not a CIFAR-10 python-pickle batch"),
    ("gpt", "missing", _missing, "no such file"),
    ("gpt", "a directory", _directory, "it is a directory, not a file"),
    ("gpt", "an empty file", _empty_file, "the file is empty"),
    ("gpt", "a binary file", _binary_file, "it is not UTF-8 text"),
    ("gpt", "a short file", lambda p: (p / "s.txt").write_text("abc") and p / "s.txt", "it holds 3 characters"),
    ("mlp", "missing", _missing, "generates its data"),
    ("mlp", "a file", _text_file, "generates its data"),
]
ACCEPTED = {"vit": cifar.ACCEPTED, "gpt": "UTF-8 text file", "mlp": "no --data for mlp"}


def test_every_workload_is_covered():
    assert {w for w, *_ in CASES} == set(WORKLOADS.names()) == set(ACCEPTED)


@pytest.mark.parametrize("workload, what, make, why", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_bad_data_path_is_refused_in_one_form(workload, what, make, why, tmp_path):
    path = make(tmp_path)
    cfg = WorkloadConfig(name=workload, data=path, workers=2, batch_size=8, size="tiny", eval_samples=4)
    with pytest.raises(LionsimError) as err:
        check_workload(cfg)  # what can be told unread, before anything is written ...
        build_workload(cfg)  # ... and what only reading tells
    message = str(err.value)
    assert re.fullmatch(rf"bad --data {re.escape(str(path))}: [^\n]+; accepted: [^\n]+", message), message
    assert why in message.split("; accepted: ")[0], message
    assert ACCEPTED[workload] in message.split("; accepted: ", 1)[1], message


def test_the_default_workload_refuses_a_missing_path_naming_the_option(tmp_path, capsys):
    out = tmp_path / "out"
    err = one_line_exit_2(["bench", "--data", "/nonexistent", "--steps", "2", "--out", out], capsys)
    assert err.strip() == f"error: bad --data /nonexistent: no such directory; accepted: {cifar.ACCEPTED}"
    assert not out.exists()


def test_a_sweep_refuses_a_file_for_vit_before_writing(tmp_path, capsys):
    out = tmp_path / "sweep"
    one_line_exit_2(["sweep", "-w", "vit", "--data", _text_file(tmp_path), "-n", "2", "--steps", "2",
                     "--out", out], capsys, "it is a file, not a directory; accepted: a CIFAR-10 python directory")
    assert not out.exists()
