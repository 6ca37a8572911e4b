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


def test_the_note_starts_where_the_bound_passes_the_device_memory():
    """The last batch that fits by the bound has no note, the next one has: 80 GiB / (34 x 1024 x 24)
    is 102,801.6 tokens."""
    layers, width = GPT2_345M
    edge = math.floor(H100_BYTES / (34 * width * layers))
    assert edge == 102_801
    assert _activation_notes(model="gpt2-345m", tokens_per_worker=edge) == []
    assert len(_activation_notes(model="gpt2-345m", tokens_per_worker=edge + 1)) == 1
    # a worker of 2 devices splits them: twice the batch before the note
    assert _activation_notes(model="gpt2-345m", tokens_per_worker=2 * edge, replica_gpus=2) == []
    assert len(_activation_notes(model="gpt2-345m", tokens_per_worker=2 * edge + 2, replica_gpus=2)) == 1


@pytest.mark.parametrize("kw", [{"model": "gpt2-345m"}, {"model": "llama-7b"}, {"params": 3.5e8, "tokens_per_worker": 10**7},
                                {"model": "resnet50", "tokens_per_worker": 10**6}])
def test_no_note_for_a_preset_sample_or_a_model_without_a_shape(kw):
    """A preset's own sample fits by far (llama-7b: 34 x 2048 x 4096 x 32 = 9.1 GB); --params and a
    ResNet have no transformer shape to bound."""
    assert _activation_notes(**kw) == []
