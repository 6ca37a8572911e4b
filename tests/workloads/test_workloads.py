"""Workloads end to end: building, per-worker batches, loss, evaluation, learning, bad input."""

from __future__ import annotations

import math
import pickle

import pytest
import torch
import torch.nn.functional as F

from lionsim.errors import LionsimError
from lionsim.workloads import WORKLOADS, Workload, WorkloadConfig, build_workload
from lionsim.workloads.datasets.corpus import generate_corpus
from tests.workloads.test_data import write_cifar

NAMES = ["mlp", "vit", "gpt"]


def tiny(name: str, **kw) -> Workload:
    kw = {"workers": 2, "batch_size": 8, "size": "tiny", "eval_samples": 64, **kw}
    if "data" not in kw:  # small generated sets keep the tests fast
        kw.setdefault("train_size", 20_000 if name == "gpt" else 1024)
    return build_workload(WorkloadConfig(name=name, **kw))


def test_registry_lists_every_workload_with_a_summary():
    assert WORKLOADS.names() == NAMES
    for name, cls in WORKLOADS.items():
        assert cls.name == name and cls.task in ("classification", "language-model")
        assert cls.summary and "\n" not in cls.summary


@pytest.mark.parametrize("name", NAMES)
def test_batches_one_per_worker_from_its_own_shard_and_deterministic(name):
    wl = tiny(name, workers=3)
    assert len(wl.shards) == 3
    for a, b in zip(wl.shards, wl.shards[1:]):
        assert not set(a.tolist()) & set(b.tolist())  # disjoint shards
    for step in (0, 5):
        batches, indices = wl.batches(step), wl.batch_indices(step)
        assert len(batches) == 3
        for i, ((x, y), idx) in enumerate(zip(batches, indices)):
            assert len(x) == len(y) == 8
            assert set(idx.tolist()) <= set(wl.shards[i].tolist())
    again = tiny(name, workers=3)
    for (x1, y1), (x2, y2) in zip(wl.batches(7), again.batches(7)):
        assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert not torch.equal(wl.batches(0)[0][0], wl.batches(1)[0][0])


@pytest.mark.parametrize("name", NAMES)
def test_model_is_built_from_the_seed(name):
    a, b, c = tiny(name, seed=1), tiny(name, seed=1), tiny(name, seed=2)
    pa, pb, pc = (torch.cat([p.flatten() for p in w.model.parameters()]) for w in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)
    assert a.params == pa.numel()


def test_batch_shapes_and_normalisation():
    (x, y), _ = tiny("vit").batches(0)
    assert x.shape == (8, 3, 32, 32) and x.dtype == torch.float32 and y.dtype == torch.int64
    wl = tiny("vit")
    xs = torch.cat([b[0] for s in range(20) for b in wl.batches(s)])
    assert abs(xs.mean().item()) < 0.2 and 0.8 < xs.std().item() < 1.2  # standardised per channel
    (x, y), _ = tiny("gpt").batches(0)
    assert x.shape == y.shape == (8, 32)
    assert torch.equal(x[:, 1:], y[:, :-1])  # targets are the next characters


@pytest.mark.parametrize("name", NAMES)
def test_loss_is_mean_cross_entropy(name):
    wl = tiny(name)
    x, y = wl.batches(0)[0]
    logits = wl.model(x)
    expected = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    torch.testing.assert_close(wl.loss(wl.model, x, y), expected)


@pytest.mark.parametrize("name", NAMES)
def test_evaluate_matches_a_direct_computation_and_restores_the_mode(name):
    wl = tiny(name, eval_samples=300)  # more than one evaluation chunk
    x, y = wl.heldout.take(torch.arange(len(wl.heldout)))
    with torch.no_grad():
        logits = wl.model(x).reshape(-1, wl.model(x[:1]).shape[-1])
    expected_loss = F.cross_entropy(logits, y.reshape(-1)).item()
    expected_acc = (logits.argmax(-1) == y.reshape(-1)).float().mean().item()
    result = wl.evaluate(wl.model)
    assert set(result) == {"eval_loss", "eval_acc"}
    assert result["eval_loss"] == pytest.approx(expected_loss, rel=1e-5)
    assert result["eval_acc"] == pytest.approx(expected_acc, abs=1e-6)
    assert wl.model.training
    wl.model.eval()
    wl.evaluate(wl.model)
    assert not wl.model.training


@pytest.mark.parametrize("name", NAMES)
def test_untrained_model_scores_near_chance(name):
    wl = tiny(name)
    result = wl.evaluate(wl.model)
    classes = 10 if name != "gpt" else wl.model_cfg.vocab
    assert result["eval_loss"] == pytest.approx(math.log(classes), abs=0.3)
    assert 0.0 <= result["eval_acc"] <= 0.35


def train(wl: Workload, steps: int, lr: float) -> None:
    opt = torch.optim.Adam(wl.model.parameters(), lr=lr)
    for step in range(steps):
        x, y = wl.batches(step)[0]
        opt.zero_grad()
        wl.loss(wl.model, x, y).backward()
        opt.step()


@pytest.mark.parametrize("name", ["mlp", "gpt"])
def test_loss_falls_within_30_adam_steps_on_one_worker(name):
    wl = tiny(name, workers=1, batch_size=32, eval_samples=256)
    before = wl.evaluate(wl.model)["eval_loss"]
    train(wl, 30, lr=3e-3)
    after = wl.evaluate(wl.model)
    assert after["eval_loss"] < before - 0.2


@pytest.mark.slow
def test_vit_learns_the_generated_images_well_above_chance():
    # ViTs sit near chance for their first ~100 steps on these images (see datasets/shapes.py)
    wl = tiny("vit", workers=1, batch_size=32, eval_samples=256, train_size=None)
    train(wl, 200, lr=3e-3)
    assert wl.evaluate(wl.model)["eval_acc"] > 0.3


def test_dirichlet_split_skews_the_shards_labels():
    def skew(split: str) -> float:
        wl = tiny("mlp", workers=8, data_split=split)
        return sum(wl.shard_labels(i).bincount(minlength=10).max().item() / len(wl.shards[i]) for i in range(8)) / 8

    assert skew("dirichlet:0.1") > 0.5
    assert skew("iid") < 0.2


def test_training_set_grows_with_workers_and_batch_size():
    assert len(tiny("mlp", workers=2, train_size=None).train) == 8192
    assert len(tiny("mlp", workers=64, batch_size=32, train_size=None).train) == 8 * 64 * 32
    assert len(tiny("mlp", train_size=3000).train) == 3000


# --- data files ---------------------------------------------------------------------------------


def test_vit_reads_a_cifar_directory(tmp_path):
    root = write_cifar(tmp_path / "cifar", n=8)  # 40 training and 8 test images
    wl = tiny("vit", data=root, workers=2, batch_size=4, eval_samples=8)
    assert len(wl.train) == 40 and len(wl.heldout) == 8
    x, y = wl.batches(0)[1]
    assert x.shape == (4, 3, 32, 32)
    assert "CIFAR-10" in wl.describe()
    with pytest.raises(LionsimError, match="--eval-samples 9: the CIFAR-10 test set in .* holds 8"):
        tiny("vit", data=root, eval_samples=9)
    with pytest.raises(LionsimError, match="40 training samples.*8 workers"):
        tiny("vit", data=root, workers=8, batch_size=8, eval_samples=8)


def test_vit_with_a_broken_cifar_directory_is_a_lionsim_error(tmp_path):
    root = write_cifar(tmp_path / "cifar")
    (root / "test_batch").write_bytes(pickle.dumps("not a dict"))
    with pytest.raises(LionsimError, match="test_batch holds a str"):
        tiny("vit", data=root)


def test_gpt_trains_on_a_text_file_with_contiguous_shards(tmp_path):
    text = generate_corpus(20_000, seed=7)
    path = tmp_path / "book.txt"
    path.write_text(text, encoding="utf-8")
    wl = tiny("gpt", data=path, workers=4)
    assert list(wl.vocab) == sorted(set(text))
    n_train = len(text) - len(text) // 10
    assert len(wl.train.tokens) == n_train
    slice_len = n_train // 4
    for i, shard in enumerate(wl.shards):  # window starts inside worker i's slice, windows never leave it
        assert shard.min() == i * slice_len and shard.max() + 32 + 1 == (i + 1) * slice_len
        assert torch.equal(shard, torch.arange(shard.min(), shard.max() + 1))
    x, y = wl.batches(3)[2]
    decoded = "".join(wl.vocab[t] for t in x[0].tolist())
    assert decoded in text[2 * slice_len : 3 * slice_len]


@pytest.mark.parametrize("kw", [
    {},  # the generated corpus at the tests' small train_size: fewer characters than the grammar's
    {"train_size": None, "workers": 64, "batch_size": 64},  # a corpus past the head vocab_size reads first
    {"train_size": None, "seed": 3, "size": "small"},
    {"text": "To be, or not to be: that is the question. Ça va? 漢字 " * 40},  # a file, non-ASCII too
    {"text": "ab" * 400},
])
def test_gpt_param_shapes_are_the_trained_models_without_building_it(tmp_path, kw):
    """The plan asks what a run sends on param_shapes (lionsim.config.sends), which was the probe's
    model with 128 standing in for the vocabulary: every payload size asked was not the run's."""
    kw = dict(kw)
    if "text" in kw:
        path = tmp_path / "book.txt"
        path.write_text(kw.pop("text"), encoding="utf-8")
        kw["data"] = path
    built = tiny("gpt", **kw)
    cls = type(built)
    shapes = [(n, tuple(p.shape)) for n, p in built.model.named_parameters() if p.requires_grad]
    assert cls.param_shapes(built.cfg) == shapes
    assert cls.vocab_size(built.cfg) == len(built.vocab) != 128


def test_the_generated_corpus_alphabet_is_every_character_the_grammar_writes():
    """vocab_size stops at a corpus's head where it holds ALPHABET: the grammar writes nothing else."""
    from lionsim.workloads.datasets.corpus import ALPHABET, VOCAB_PREFIX, vocab_size

    seen = set().union(*(generate_corpus(VOCAB_PREFIX, seed) for seed in range(4)))
    assert seen == ALPHABET
    assert vocab_size(3 * VOCAB_PREFIX, 5) == len(set(generate_corpus(3 * VOCAB_PREFIX, 5)))  # brute force
    assert vocab_size(200, 5) == len(set(generate_corpus(200, 5))) < len(ALPHABET)


def test_gpt_rejects_short_and_non_text_files_and_dirichlet(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("hello world " * 20, encoding="utf-8")
    with pytest.raises(LionsimError, match=r"holds 240 characters.*at least \d+ characters"):
        tiny("gpt", data=short)
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 100)
    with pytest.raises(LionsimError, match="not UTF-8|binary"):
        tiny("gpt", data=binary)
    with pytest.raises(LionsimError, match="needs a classification workload"):
        tiny("gpt", data_split="dirichlet:0.5")
    with pytest.raises(LionsimError, match="classification"):
        tiny("gpt").shard_labels(0)


# --- configuration errors -----------------------------------------------------------------------


def test_unknown_workload_lists_the_choices():
    with pytest.raises(LionsimError, match="unknown workload 'resnet'; choose from: gpt, mlp, vit"):
        build_workload(WorkloadConfig(name="resnet"))


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"workers": 0}, "workers must be a positive integer, got 0"),
        ({"batch_size": -1}, "batch-size must be a positive integer"),
        ({"eval_samples": 0}, "eval-samples"),
        ({"size": "huge"}, "unknown size 'huge'; choose from: tiny, small, paper"),
        ({"data_split": "dirichlet:-1"}, "bad --data-split dirichlet:-1: ALPHA must be a number above 0"),
        ({"train_size": 0}, "train-size must be a positive integer"),
        ({"train_size": 100, "data": "x.txt"}, "generated data only"),
    ],
)
def test_bad_config_values_are_lionsim_errors(kw, match):
    with pytest.raises(LionsimError, match=match):
        WorkloadConfig(**kw)


def test_mlp_rejects_a_data_path(tmp_path):
    with pytest.raises(LionsimError, match="generates its data and reads no path"):
        tiny("mlp", data=tmp_path)


def test_config_to_dict_is_plain():
    d = WorkloadConfig(name="gpt", data="corpus.txt").to_dict()
    assert d["data"] == "corpus.txt" and d["name"] == "gpt" and d["eval_samples"] is None  # the default: 1024, or a smaller test set whole


@pytest.mark.parametrize("name", NAMES)
def test_describe_is_one_line(name):
    line = tiny(name).describe()
    assert line.startswith(f"{name}:") and "\n" not in line and "params" in line
