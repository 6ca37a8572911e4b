"""The caption's activations line (lionsim.estimate.activation_note): `--tokens-per-worker 10000000`
on gpt2-345m was priced with no word that its activations alone are terabytes. The reference is
Korthikanti et al. 2022's 34 bytes a token per layer and unit of width, written out here."""

from __future__ import annotations

import math

import pytest

from lionsim.estimate import EstimateConfig, estimate

GIB = 2**30
H100_BYTES = 80 * GIB
GPT2_345M = (24, 1024)  # layers, d_model: GPT-2 medium


def _activation_notes(**kw) -> list[str]:
    cfg = EstimateConfig(workers=8, network="10gbe", device="h100", strategies=["adamw"], **kw)
    return [n for n in estimate(cfg).attrs.get("caption_notes", []) if n.startswith("activations")]


def test_a_batch_whose_activations_outgrow_the_gpu_is_said_with_the_lower_bound():
    layers, width = GPT2_345M
    need = 34 * 10**7 * width * layers  # 8.36e12 B
    (note,) = _activation_notes(model="gpt2-345m", tokens_per_worker=10**7)
    assert f"10,000,000 tokens a worker need at least {need / 2**40:.4g} TiB a GPU" in note  # 7.6 TiB
    assert "Korthikanti et al. 2022" in note and "above the h100's 80 GiB;" in note


def test_the_note_starts_where_the_bound_beside_the_state_passes_the_device_memory():
    """The last batch that fits by the bound, beside AdamW's weights, gradients and two moments
    (16 bytes a parameter, float32), has no note, the next one has: (80 GiB - 16 x 354,823,168 B) /
    (34 x 1024 x 24) is 96,007 tokens (102,801 with no state: a new user's 1.3B AdamW on a 24 GiB
    card was given no note where the two together are 32 GiB)."""
    layers, width = GPT2_345M
    state = 16 * 354_823_168
    edge = math.floor((H100_BYTES - state) / (34 * width * layers))
    assert edge == 96_007
    assert _activation_notes(model="gpt2-345m", tokens_per_worker=edge) == []
    (note,) = _activation_notes(model="gpt2-345m", tokens_per_worker=edge + 1)
    assert "beside the 5.287 GiB a GPU of weights, gradients and optimizer state of the leanest run " \
           "(adamw@fp32-allreduce) is above the h100's 80 GiB" in note
    # a worker of 2 devices splits both: (2 x 80 GiB - state) / bound tokens before the note
    edge2 = math.floor((2 * H100_BYTES - state) / (34 * width * layers))
    assert _activation_notes(model="gpt2-345m", tokens_per_worker=edge2, replica_gpus=2) == []
    assert len(_activation_notes(model="gpt2-345m", tokens_per_worker=edge2 + 1, replica_gpus=2)) == 1


def test_the_leanest_run_that_fits_sets_the_state():
    """Lion's state (one moment: 12 bytes a parameter) is below AdamW's, so Lion names it; a run whose
    state alone does not fit (llama-7b's AdamW: 108 GB) is left to the memory note."""
    layers, width = GPT2_345M
    lion = 12 * 354_823_168
    edge = math.floor((H100_BYTES - lion) / (34 * width * layers))
    cfg = dict(workers=8, network="10gbe", device="h100", model="gpt2-345m")
    notes = estimate(EstimateConfig(strategies=["adamw", "lion"], tokens_per_worker=edge + 1, **cfg)).attrs.get("caption_notes", [])
    assert any("of the leanest run (lion@" in n for n in notes)
    assert not [n for n in estimate(EstimateConfig(strategies=["adamw", "lion"], tokens_per_worker=edge,
                                                   **cfg)).attrs.get("caption_notes", []) if n.startswith("activations")]


@pytest.mark.parametrize("kw", [{"model": "gpt2-345m"}, {"model": "llama-7b"}, {"params": 3.5e8, "tokens_per_worker": 10**7},
                                {"model": "resnet50", "tokens_per_worker": 10**6}])
def test_no_note_for_a_preset_sample_or_a_model_without_a_shape(kw):
    """A preset's own sample fits by far (llama-7b: 34 x 2048 x 4096 x 32 = 9.1 GB); --params and a
    ResNet have no transformer shape to bound."""
    assert _activation_notes(**kw) == []
