"""--eval-samples: a small CIFAR-10 test set used whole by default, all or a count, the generated
sets' default, and the bad values named."""

from __future__ import annotations

import json

import pytest

from lionsim.errors import LionsimError
from tests.helpers.cli import run_cli
from tests.workloads.test_data import write_cifar


def cifar_bench(tmp_path, capsys, *extra):
    root = write_cifar(tmp_path / "cifar", n=8)  # 40 training, 8 test images
    out = tmp_path / "out"
    code, stdout, err = run_cli(["bench", "-w", "vit", "--model-size", "tiny", "--data", str(root), "-n", "2",
                            "-b", "4", "--steps", "1", "-s", "adamw", "--out", str(out), *extra], capsys)
    return code, stdout, err, out


@pytest.mark.slow
def test_a_small_cifar_test_set_is_used_whole_by_default_and_run_json_says_so(tmp_path, capsys):
    code, stdout, err, out = cifar_bench(tmp_path, capsys)
    assert code == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["evaluation"]["samples"] == 8 and record["config"]["eval_samples"] is None
    assert "evaluated on 8 held-out samples" in stdout


@pytest.mark.slow
@pytest.mark.parametrize("given, used", [("all", 8), ("5", 5)])
def test_eval_samples_all_or_a_count(tmp_path, capsys, given, used):
    code, _, err, out = cifar_bench(tmp_path, capsys, "--eval-samples", given)
    assert code == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["evaluation"]["samples"] == used
    assert record["config"]["eval_samples"] == ("all" if given == "all" else used)


@pytest.mark.parametrize("given, message", [("9", "--eval-samples 9: the CIFAR-10 test set in .* holds 8"),
                                            ("0", "bad --eval-samples 0"), ("some", "bad --eval-samples 'some'")])
def test_bad_eval_samples_name_the_option(tmp_path, capsys, given, message):
    import re

    code, _, err, out = cifar_bench(tmp_path, capsys, "--eval-samples", given)
    assert code == 2 and re.search(message, err) and err.count("\n") == 1 and not out.exists()


def test_generated_data_scores_the_default_or_the_count():
    from lionsim.workloads import WorkloadConfig, build_workload

    kw = dict(name="mlp", workers=2, batch_size=8, size="tiny", train_size=256)
    assert build_workload(WorkloadConfig(**kw)).eval_size == 1024
    assert build_workload(WorkloadConfig(**kw, eval_samples=100)).eval_size == 100


def test_generated_data_refuses_more_than_it_holds_out_before_anything_is_made(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_cli(["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "--steps", "1", "-s", "adamw",
                            "--eval-samples", "8193", "--out", str(out)], capsys)
    # mlp generates 8192 training samples for 2 workers of batch 32 (max(8192, 8 * 2 * 32))
    assert code == 2 and err.count("\n") == 1 and not out.exists()
    assert "bad --eval-samples 8193: mlp's generated data holds out 8192 samples" in err and "accepted: a whole number from 1 to 8,192, or all" in err


@pytest.mark.parametrize("name, train_size", [("mlp", 3000), ("vit", 1500), ("gpt", 20_000)])
def test_the_held_out_limit_is_what_the_built_workload_holds(name, train_size):
    from lionsim.errors import LionsimError
    from lionsim.workloads import WorkloadConfig, build_workload, workload_class

    kw = dict(name=name, workers=2, batch_size=8, size="tiny", train_size=train_size)
    limit = workload_class(name).heldout_limit(WorkloadConfig(**kw))
    # mlp, vit: as many as the training set; gpt: the held-out tenth's distinct windows (brute force)
    built = build_workload(WorkloadConfig(**kw, eval_samples=limit))
    if name == "gpt":
        assert len(set(built.heldout.idx.tolist())) == limit
    else:
        assert limit == train_size == len(built.train) == built.eval_size
    with pytest.raises(LionsimError, match=f"bad --eval-samples {limit + 1}: .* holds out {limit} "):
        build_workload(WorkloadConfig(**kw, eval_samples=limit + 1))


def test_past_the_floor_the_refusal_names_the_default_not_a_set_of_that_size():
    """A set that holds out fewer than the default is scored with repeats up to the default: the
    refusal said it "holds out 1024" where it held out 300."""
    from lionsim.workloads.config import EVAL_DEFAULT, generated_eval_count

    assert generated_eval_count(EVAL_DEFAULT, 300, "mlp's generated data", "samples") == EVAL_DEFAULT
    with pytest.raises(LionsimError) as refused:
        generated_eval_count(EVAL_DEFAULT + 1, 300, "mlp's generated data", "samples")
    assert str(refused.value) == (f"bad --eval-samples {EVAL_DEFAULT + 1}: mlp's generated data holds out 300 samples; "
                                  f"accepted: a whole number from 1 to {EVAL_DEFAULT:,} (the default; a set this short is "
                                  "scored with repeats), or all")
