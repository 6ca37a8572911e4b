"""The caption's line where an image model took the default one image a worker
(lionsim.estimate.sample_note), checked on estimates run as a user runs them."""

from __future__ import annotations

import pytest

from lionsim.estimate import EstimateConfig
from lionsim.estimate.captioned import estimate

LINE = "1 image a worker, lionsim's default of one sample"


def _notes(**given) -> list[str]:
    frame = estimate(EstimateConfig(workers=4, network="10gbe", strategies=["sgdm", "powersgd"], **given))
    return frame.attrs.get("caption_notes", [])


@pytest.mark.parametrize("model, unit", [("resnet18", "images a worker"), ("vit-s", "tokens a worker: 197 an image")])
def test_an_image_model_at_its_default_sample_says_so_and_how_to_set_it(model, unit):
    line = next(n for n in _notes(model=model) if n.startswith(LINE))
    assert f"--tokens-per-worker N ({unit})" in line and "Goyal et al. 2017" in line


def test_no_line_where_the_batch_is_given_or_a_sample_is_a_sequence():
    assert not any(n.startswith(LINE) for n in _notes(model="resnet18", tokens_per_worker=32))
    assert not any(n.startswith(LINE) for n in _notes(model="gpt2-124m"))


def test_the_line_is_true_more_images_lower_the_compressed_run_s_speedup():
    def speedup(**given) -> float:
        frame = estimate(EstimateConfig(model="resnet50", workers=16, network="10gbe", device="a100",
                                        strategies=["sgdm", "powersgd"], **given))
        return float(frame["speedup"].iloc[1])

    assert speedup() > speedup(tokens_per_worker=32) > 1  # (resnet18 on an H100 is launch-bound either way)


def test_a_model_of_your_own_is_priced_at_its_examples_batch_and_said_only_at_one_sample(tmp_path):
    """--model FILE.py:FUNC counts samples of its example input's first dimension: 4 sequences are
    not "1 image"; an example of one sample is "1 sample" (lionsim cannot tell an image there)."""
    for batch in (4, 1):
        (tmp_path / f"m{batch}.py").write_text(
            "import torch\n"
            "def build():\n"
            "    model = torch.nn.Sequential(torch.nn.Embedding(100, 16), torch.nn.Linear(16, 100))\n"
            f"    return model, torch.zeros({batch}, 8, dtype=torch.long)\n")
        frame = estimate(EstimateConfig(model=f"{tmp_path / f'm{batch}.py'}:build", workers=4, network="10gbe",
                                        strategies=["sgdm"]))
        notes = frame.attrs.get("caption_notes", [])
        assert int(frame["samples_per_worker"].iloc[0]) == batch
        assert not any("image a worker" in n for n in notes), notes
        assert any(n.startswith("1 sample a worker") for n in notes) == (batch == 1), notes
