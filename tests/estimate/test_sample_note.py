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
