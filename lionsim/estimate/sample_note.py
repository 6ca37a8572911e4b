"""The caption's line where an image model took lionsim's default of one image a worker.

Without --tokens-per-worker an estimate prices one sample a worker: a decoder's sequence, a ViT's or
a counted preset's image (a model of your own, --model FILE.py:FUNC, its example input's batch). One
image is no trainer's batch: data-parallel image training runs tens a GPU (Goyal et al. 2017,
"Accurate, Large Minibatch SGD", arXiv 1706.02677: 32 images a GPU for ResNet-50 on ImageNet;
tf_cnn_benchmarks' default for resnet50 is 64), and a step's compute grows with them while its
exchange does not, so one image overstates every compressed run's speedup. lionsim keeps the
one-sample default (the same rule for every model, and the figures it has printed) and says so where
it matters most.
"""

from __future__ import annotations

GOYAL_IMAGES = 32
"""Images a GPU in Goyal et al. 2017 (ResNet-50 on ImageNet, 8 to 256 GPUs): the example the line gives."""


def default_sample_note(tokens_given: bool, model: object, counted: bool, samples: int = 1) -> str:
    """The line where an image model (a ViT preset, or a counted model: `counted`) took the default
    of one sample a worker (`tokens_given` False); "" otherwise. A counted model's default is its
    example input's batch (`samples`): a model of your own whose example holds several is priced at
    them, and nothing is said; its samples are "samples" (lionsim cannot tell an image from a
    sequence there), a preset's (resnet*) "images"."""
    from lionsim.compute.models import MODELS, ViTShape

    preset = isinstance(model, str) and model in MODELS
    vit = preset and isinstance(MODELS.get(model), ViTShape)
    if tokens_given or not (counted or vit) or (counted and samples != 1):
        return ""
    noun = "image" if preset else "sample"
    per_image = "" if counted else f": {MODELS.get(model).tokens_per_sample} an image"
    option = f"--tokens-per-worker N ({noun + 's' if counted else 'tokens'} a worker{per_image})"
    return (f"1 {noun} a worker, lionsim's default of one sample: data-parallel trainers run tens (Goyal et al. "
            f"2017: {GOYAL_IMAGES} a GPU for ResNet-50), which lengthens compute, not the exchange, and lowers every "
            f"compressed run's speedup; {option} sets it.")


def tokens_default_line(tokens_given: bool, whole_run: bool, per_worker: int, unit: str) -> str:
    """The caption's line where a run's length (--tokens) or time to target (--from-run) rests on the
    default of one sample a worker (`tokens_given` False): --tokens' steps follow from it, and a run's
    steps to target are its batch's, which DIR's run does not set; "" otherwise."""
    if tokens_given or not whole_run:
        return ""
    return (f"{unit}/worker: {per_worker:,} (estimate's default, not the run's: --tokens-per-worker sets your "
            "batch).")
