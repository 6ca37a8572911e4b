"""Data pieces of the workloads: splits, batch sampling, generators and local file loaders."""

from __future__ import annotations

import pickle
import string

import numpy as np
import pytest
import torch

from lionsim.errors import LionsimError
from lionsim.workloads import parse_split, split_indices
from lionsim.workloads.datasets import cifar, clusters, shapes
from lionsim.workloads.datasets.corpus import generate_corpus
from lionsim.workloads.datasets.text import encode_chars, read_text
from lionsim.workloads.sampler import ShardSampler
from lionsim.workloads.sources import standardize_stats


def balanced(n_per_class: int = 200, classes: int = 10) -> torch.Tensor:
    return torch.arange(n_per_class * classes) % classes


def max_class_fraction(labels: torch.Tensor, shards: list[torch.Tensor]) -> float:
    """Mean over workers of the share of the worker's most common class."""
    fracs = [labels[s].bincount(minlength=10).max().item() / len(s) for s in shards]
    return sum(fracs) / len(fracs)


def assert_partition(shards: list[torch.Tensor], n: int) -> None:
    everything = torch.cat(shards)
    assert len(everything) == n
    assert torch.equal(everything.sort().values, torch.arange(n))  # disjoint and covering


# --- splits -------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_iid_split_partitions_into_near_equal_shards(workers):
    labels = balanced(101)  # 1010 samples: not divisible by 3 or 8
    shards = split_indices(labels, workers, "iid", seed=0)
    assert len(shards) == workers
    assert_partition(shards, len(labels))
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    assert all(s.dtype == torch.int64 for s in shards)


def test_iid_split_is_seeded():
    labels = balanced()
    a, b = split_indices(labels, 4, "iid", seed=1), split_indices(labels, 4, "iid", seed=1)
    c = split_indices(labels, 4, "iid", seed=2)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, y) for x, y in zip(a, c))


def test_iid_split_is_near_uniform_in_labels():
    labels = balanced(400)
    shards = split_indices(labels, 8, "iid", seed=0)
    assert max_class_fraction(labels, shards) < 0.15  # uniform would be 0.10


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0])
def test_dirichlet_split_partitions_and_respects_min_size(alpha):
    labels = balanced(400)
    shards = split_indices(labels, 8, f"dirichlet:{alpha}", seed=0, min_size=32)
    assert_partition(shards, len(labels))
    assert min(len(s) for s in shards) >= 32


def test_dirichlet_small_alpha_skews_labels_and_large_alpha_does_not():
    labels = balanced(400)
    skewed = max_class_fraction(labels, split_indices(labels, 8, "dirichlet:0.1", seed=0, min_size=32))
    mild = max_class_fraction(labels, split_indices(labels, 8, "dirichlet:100", seed=0, min_size=32))
    iid = max_class_fraction(labels, split_indices(labels, 8, "iid", seed=0))
    assert skewed > 0.5
    assert skewed > 3 * iid
    assert mild < 0.2


def test_dirichlet_split_is_seeded():
    labels = balanced()
    a = split_indices(labels, 4, "dirichlet:0.5", seed=3)
    b = split_indices(labels, 4, "dirichlet:0.5", seed=3)
    assert all(torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("split", ["iid", "dirichlet:0.5"])
def test_too_many_workers_for_the_data_is_a_lionsim_error_with_the_numbers(split):
    with pytest.raises(LionsimError, match=r"100 training samples.*8 workers.*16"):
        split_indices(balanced(10), 8, split, seed=0, min_size=16)


def test_dirichlet_that_cannot_fill_every_worker_fails_clearly():
    labels = balanced(100, classes=3)  # alpha -> 0 gives each class to one worker: 7 of 10 get nothing
    with pytest.raises(LionsimError, match=r"dirichlet:0\.001.*fewer than 10 of 300"):
        split_indices(labels, 10, "dirichlet:0.001", seed=0, min_size=10)


@pytest.mark.parametrize("bad", ["foo", "dirichlet", "dirichlet:", "dirichlet:x", "dirichlet:-1", "dirichlet:0", "dirichlet:nan", "dirichlet:inf", "IID"])
def test_bad_split_strings_name_the_value_and_the_accepted_forms(bad):
    with pytest.raises(LionsimError) as err:
        parse_split(bad)
    message = str(err.value)
    assert message.startswith(f"bad --data-split {bad}")  and "iid" in message and "dirichlet:ALPHA" in message
    assert "\n" not in message


def test_parse_split_accepts_the_documented_forms():
    assert parse_split("iid").kind == "iid"
    parsed = parse_split("dirichlet:0.25")
    assert (parsed.kind, parsed.alpha) == ("dirichlet", 0.25)


# --- batch sampling -----------------------------------------------------------------------------


def test_sampler_walks_each_epoch_through_the_shard_without_repeats():
    shard = torch.arange(100, 164)  # 64 samples, 4 batches of 16 per epoch
    sampler = ShardSampler(shard, 16, seed=0, worker=0)
    for epoch in range(3):
        seen = torch.cat([sampler.indices(epoch * 4 + i) for i in range(4)])
        assert torch.equal(seen.sort().values, shard)
    first, second = torch.cat([sampler.indices(i) for i in range(4)]), torch.cat([sampler.indices(i) for i in range(4, 8)])
    assert not torch.equal(first, second)  # a fresh order each epoch


def test_sampler_drops_the_remainder_within_an_epoch():
    sampler = ShardSampler(torch.arange(50), 16, seed=0, worker=0)  # 3 batches per epoch, 2 left over
    epoch = torch.cat([sampler.indices(i) for i in range(3)])
    assert len(epoch.unique()) == 48


def test_sampler_is_random_access_and_seeded_per_worker():
    shard = torch.arange(1000)
    a = ShardSampler(shard, 32, seed=5, worker=0)
    forward = [a.indices(s) for s in range(70)]
    b = ShardSampler(shard, 32, seed=5, worker=0)
    backward = [b.indices(s) for s in reversed(range(70))][::-1]
    assert all(torch.equal(x, y) for x, y in zip(forward, backward))
    other = ShardSampler(shard, 32, seed=5, worker=1)
    assert not torch.equal(other.indices(0), a.indices(0))


# --- generated data -----------------------------------------------------------------------------


def test_shapes_are_uint8_images_with_balanced_labels_and_a_superset_property():
    x, y = shapes.make_shapes(1500, seed=0, stream="train")
    assert x.shape == (1500, 3, 32, 32) and x.dtype == torch.uint8
    counts = y.bincount(minlength=10)
    assert counts.min() >= 140 and counts.max() <= 160
    x2, y2 = shapes.make_shapes(700, seed=0, stream="train")
    assert torch.equal(x2, x[:700]) and torch.equal(y2, y[:700])
    ex, _ = shapes.make_shapes(700, seed=0, stream="eval")
    other, _ = shapes.make_shapes(700, seed=1, stream="train")
    assert not torch.equal(ex, x2) and not torch.equal(other, x2)
    assert x.float().std() > 20  # not blank


def test_shape_classes_differ_beyond_their_mean_colour():
    # the mean image of every class is close to the grand mean: the class lives in the pattern
    x, y = shapes.make_shapes(4000, seed=0, stream="train")
    xf = x.float()
    grand = xf.mean(dim=(0, 2, 3))
    for c in range(10):
        assert (xf[y == c].mean(dim=(0, 2, 3)) - grand).abs().max() < 25


def test_clusters_are_seeded_and_share_centres_between_train_and_eval():
    x, y = clusters.make_clusters(2000, seed=0, stream="train")
    ex, ey = clusters.make_clusters(2000, seed=0, stream="eval")
    assert x.shape == (2000, clusters.DIM) and x.dtype == torch.float32
    assert not torch.equal(x, ex)
    # class means estimated from the two streams agree (same centres), and differ between classes
    mx = torch.stack([x[y == c].mean(0) for c in range(10)])
    me = torch.stack([ex[ey == c].mean(0) for c in range(10)])
    assert (mx - me).norm(dim=1).max() < 1.5
    assert torch.cdist(mx, mx).add(torch.eye(10) * 100).min() > 1.0
    x2, _ = clusters.make_clusters(2000, seed=0, stream="train")
    assert torch.equal(x, x2)


def test_standardize_stats_matches_direct_computation():
    x = torch.randint(0, 256, (300, 3, 4, 4), dtype=torch.uint8)
    mean, std = standardize_stats(x, dims=(0, 2, 3), chunk=64)
    xf = x.double()
    assert mean.shape == (3, 1, 1)
    torch.testing.assert_close(mean.double(), xf.mean(dim=(0, 2, 3)).view(3, 1, 1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(std.double(), xf.std(dim=(0, 2, 3), unbiased=False).view(3, 1, 1), rtol=1e-5, atol=1e-5)


def test_corpus_is_seeded_printable_text_of_the_requested_length():
    a, b, c = generate_corpus(5000, 0), generate_corpus(5000, 0), generate_corpus(5000, 1)
    assert a == b and a != c
    assert len(a) == 5000
    assert set(a) <= set(string.ascii_letters + " ,.?\n")
    assert "Does " in generate_corpus(50_000, 0)  # questions use the bare verb form


# --- text files ---------------------------------------------------------------------------------


def test_read_text_and_encode_chars_round_trip(tmp_path):
    text = "héllo wörld\nnaïve 🎉 text\n"
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    assert read_text(path) == text
    chars = encode_chars(text)
    assert list(chars.vocab) == sorted(set(text))
    assert "".join(chars.vocab[i] for i in chars.tokens.tolist()) == text


def test_read_text_rejects_missing_directories_binary_and_non_utf8(tmp_path):
    with pytest.raises(LionsimError, match="no such file"):
        read_text(tmp_path / "nope.txt")
    with pytest.raises(LionsimError, match="it is a directory, not a file"):
        read_text(tmp_path)
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(LionsimError, match="the file is empty"):
        read_text(tmp_path / "empty.txt")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(LionsimError, match="not UTF-8"):
        read_text(bad)
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"abc\x00\x01def")
    with pytest.raises(LionsimError, match="binary"):
        read_text(binary)


# --- CIFAR-10 -----------------------------------------------------------------------------------


def fake_batch(n: int, offset: int) -> tuple[np.ndarray, list[int]]:
    """n images whose pixel (c, h, w) is (offset + i + 3c + 5h + 7w) % 256 in the CIFAR row layout."""
    c, h, w = np.meshgrid(np.arange(3), np.arange(32), np.arange(32), indexing="ij")
    data = np.stack([(offset + i + 3 * c + 5 * h + 7 * w) % 256 for i in range(n)]).reshape(n, 3072).astype(np.uint8)
    return data, [(offset + i) % 10 for i in range(n)]


def write_cifar(root, n=4, protocol=2, str_keys=False, skip=()):
    root.mkdir(parents=True, exist_ok=True)
    for k, name in enumerate([*cifar.TRAIN_FILES, cifar.TEST_FILE]):
        if name in skip:
            continue
        data, labels = fake_batch(n, offset=10 * k)
        keys = ("data", "labels") if str_keys else (b"data", b"labels")
        with open(root / name, "wb") as f:
            pickle.dump({keys[0]: data, keys[1]: labels, b"batch_label": b"fake"}, f, protocol=protocol)
    return root


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_cifar_loader_reads_the_pickle_layout(tmp_path, protocol):
    root = write_cifar(tmp_path / "cifar", protocol=protocol)
    x, y, tx, ty = cifar.load_cifar10(root)
    assert x.shape == (20, 3, 32, 32) and x.dtype == torch.uint8 and tx.shape == (4, 3, 32, 32)
    assert y.tolist() == [(10 * k + i) % 10 for k in range(5) for i in range(4)]
    assert ty.tolist() == [(50 + i) % 10 for i in range(4)]
    # image 1 of batch 2 (offset 10): pixel (c=2, h=3, w=4)
    assert x[4 + 1, 2, 3, 4].item() == (10 + 1 + 6 + 15 + 28) % 256


def test_cifar_loader_accepts_the_parent_dir_and_str_keys(tmp_path):
    write_cifar(tmp_path / cifar.SUBDIR, str_keys=True)
    x, *_ = cifar.load_cifar10(tmp_path)
    assert len(x) == 20


def test_cifar_loader_rejects_missing_paths_and_files(tmp_path):
    with pytest.raises(LionsimError, match="no such directory"):
        cifar.load_cifar10(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    with pytest.raises(LionsimError, match="it is a file, not a directory"):
        cifar.load_cifar10(tmp_path / "file")
    root = write_cifar(tmp_path / "partial", skip=("data_batch_3", "test_batch"))
    with pytest.raises(LionsimError, match="lacks data_batch_3, test_batch"):
        cifar.load_cifar10(root)


def _overwrite(root, obj=None, raw: bytes | None = None):
    with open(root / "data_batch_2", "wb") as f:
        f.write(raw if raw is not None else pickle.dumps(obj, protocol=2))


good_data, good_labels = fake_batch(4, 0)


@pytest.mark.parametrize(
    "obj, raw, match",
    [
        (None, b"this is not a pickle", "not a CIFAR-10 python-pickle batch"),
        (None, b"", "not a CIFAR-10 python-pickle batch"),
        ([1, 2, 3], None, "holds a list"),
        ({b"pixels": good_data, b"labels": good_labels}, None, "no b'data' key"),
        ({b"data": good_data, b"targets": good_labels}, None, "no b'labels' key"),
        ({b"data": good_data.reshape(4, 3, 32, 32), b"labels": good_labels}, None, "shape \\(N, 3072\\)"),
        ({b"data": good_data.astype(np.float32), b"labels": good_labels}, None, "float32"),
        ({b"data": good_data[:, :100], b"labels": good_labels}, None, "shape \\(N, 3072\\)"),
        ({b"data": good_data.tolist(), b"labels": good_labels}, None, "b'data' a list"),
        ({b"data": good_data, b"labels": good_labels[:3]}, None, "4 integers"),
        ({b"data": good_data, b"labels": [0.5, 1, 2, 3]}, None, "4 integers"),
        ({b"data": good_data, b"labels": [0, 1, 2, 10]}, None, "0..10, outside 0..9"),
        ({b"data": good_data[:0], b"labels": []}, None, "no images"),
    ],
)
def test_cifar_loader_rejects_bad_batches_with_one_line(tmp_path, obj, raw, match):
    root = write_cifar(tmp_path / "cifar")
    _overwrite(root, obj, raw)
    with pytest.raises(LionsimError, match=match) as err:
        cifar.load_cifar10(root)
    assert str(err.value).startswith(f"bad --data {root}: data_batch_2 ") and "\n" not in str(err.value)
    assert str(err.value).endswith(f"; accepted: {cifar.ACCEPTED}")


class _Exploit:
    def __reduce__(self):
        return (print, ("pwned",))


def test_cifar_loader_refuses_to_run_code_from_a_pickle(tmp_path, capsys):
    root = write_cifar(tmp_path / "cifar")
    _overwrite(root, {b"data": _Exploit(), b"labels": []})
    with pytest.raises(LionsimError, match="print is not allowed"):
        cifar.load_cifar10(root)
    assert "pwned" not in capsys.readouterr().out
