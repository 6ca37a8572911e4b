"""`gpt`: a character-level causal transformer on a text file (`data=FILE`) or a generated corpus.

The last tenth of the text is held out. Worker i trains on the i-th of W equal contiguous
slices of the rest (windows never cross a slice boundary), as if each worker held its own
documents. `dirichlet` label skew has no meaning for text and is rejected.
"""

from __future__ import annotations

import torch

from lionsim.errors import LionsimError
from lionsim.workloads.base import Workload, generated_train_size, register, trainable_shapes
from lionsim.workloads.config import WorkloadConfig, generated_eval_count
from lionsim.workloads.datasets import corpus, text as text_file
from lionsim.workloads.datasets.corpus import generate_corpus
from lionsim.workloads.datasets.refusal import bad_data
from lionsim.workloads.datasets.text import check_text_path, encode_chars, read_text
from lionsim.workloads.models.gpt import GPT, GPTConfig
from lionsim.workloads.seeding import seeded_torch
from lionsim.workloads.sources import Subset, WindowSource
from lionsim.workloads.splits import parse_split

# GPTConfig fields per size preset (the vocabulary comes from the text); "paper" is nanoGPT's
# shakespeare-char shape, the papers' language models being far beyond a simulator's reach.
SIZES = {
    "tiny": dict(context=32, dim=32, depth=1, heads=2),
    "small": dict(context=64, dim=64, depth=2, heads=4),
    "paper": dict(context=256, dim=384, depth=6, heads=6),
}
HELDOUT_FRACTION = 10
"""One character in HELDOUT_FRACTION is held out (the end of the text)."""
BASE_CHARS = 2**18


@register("gpt")
class GPTWorkload(Workload):
    task = "language-model"
    summary = "char-level causal transformer on a UTF-8 text file (--data FILE) or a generated corpus; contiguous shards"

    def __init__(self, cfg: WorkloadConfig) -> None:
        if parse_split(cfg.data_split).kind != "iid":
            raise LionsimError(
                f"data split {cfg.data_split!r} needs a classification workload (mlp, vit); "
                "gpt gives each worker a contiguous slice of the text: use iid"
            )
        context = SIZES[cfg.size]["context"]
        if cfg.data is None:
            text = generate_corpus(self.generated_units(cfg), cfg.seed)
            self.source = "generated corpus"
        else:
            text = read_text(cfg.data)
            self.source = str(cfg.data)
        needed = chars_needed(cfg.workers, cfg.batch_size, context)
        if len(text) < needed:
            said = (f"text {self.source} has {len(text)} characters; gpt size {cfg.size!r} (context {context}) "
                    f"with {cfg.workers} workers of batch {cfg.batch_size} needs at least {needed}")
            if cfg.data is None:
                raise LionsimError(said)
            raise bad_data(cfg.data, f"it holds {len(text)} characters, fewer than gpt size {cfg.size!r} (context "
                           f"{context}) with {cfg.workers} workers of batch {cfg.batch_size} needs",
                           f"a UTF-8 text file of at least {needed} characters for gpt")
        chars = encode_chars(text)
        self.vocab = chars.vocab
        n_train = len(text) - len(text) // HELDOUT_FRACTION
        train = WindowSource(chars.tokens[:n_train], context)
        heldout_tokens = chars.tokens[n_train:]
        # evaluation windows evenly spaced over the held-out text (they overlap if it is short)
        # ("all": every non-overlapping window of the held-out text)
        count = (max(1, (len(heldout_tokens) - 1) // context) if cfg.eval_samples == "all"
                 else generated_eval_count(cfg.eval_samples, heldout_windows(len(heldout_tokens), context),
                                           f"gpt's text {self.source}", f"distinct {context}-character windows"))
        starts = torch.linspace(0, len(heldout_tokens) - context - 1, count).round().long()
        heldout = Subset(WindowSource(heldout_tokens, context), starts)
        self.model_cfg = GPTConfig(vocab=len(self.vocab), **SIZES[cfg.size])
        with seeded_torch(cfg.seed, "model", "gpt"):
            model = GPT(self.model_cfg)
        self._setup(cfg, model, train, contiguous_shards(n_train, cfg.workers, context), heldout)

    @classmethod
    def check_data(cls, cfg: WorkloadConfig) -> None:
        if cfg.data is not None:
            check_text_path(cfg.data)

    @classmethod
    def probe(cls, cfg: WorkloadConfig):
        # the vocabulary comes from the text: 128 (ASCII) stands in; a character is an int64 token
        # and, while it is read, up to 4 bytes of text
        model = GPT(GPTConfig(vocab=128, **SIZES[cfg.size]))
        window = torch.zeros(1, SIZES[cfg.size]["context"], dtype=torch.long)
        return model, window, window, 8 + 4

    @classmethod
    def param_shapes(cls, cfg: WorkloadConfig) -> list[tuple[str, tuple[int, ...]]]:
        """The trained model's shapes: its vocabulary the text's own (vocab_size), not the probe's 128,
        so what a run sends is asked at the size it sends (lionsim.config.sends); built on meta."""
        with torch.device("meta"):
            return trainable_shapes(GPT(GPTConfig(vocab=cls.vocab_size(cfg), **SIZES[cfg.size])))

    @classmethod
    def vocab_size(cls, cfg: WorkloadConfig) -> int:
        """Distinct characters of the text `cfg` trains on, its file's or its generated corpus's,
        without building the workload: the model's vocabulary."""
        if cfg.data is not None:
            return text_file.vocab_size(cfg.data)
        return corpus.vocab_size(cls.generated_units(cfg), cfg.seed)

    @classmethod
    def generated_units(cls, cfg: WorkloadConfig) -> int:
        """Characters of the generated corpus (held-out tenth included)."""
        return generated_train_size(cfg, BASE_CHARS, per_sample=SIZES[cfg.size]["context"])

    @classmethod
    def heldout_limit(cls, cfg: WorkloadConfig) -> int | None:
        """Distinct windows of the generated corpus's held-out text (a text file's: once it is read)."""
        if cfg.data is not None:
            return None
        return heldout_windows(cls.generated_units(cfg) // HELDOUT_FRACTION, SIZES[cfg.size]["context"])

    @classmethod
    def heldout_words(cls, cfg: WorkloadConfig) -> tuple[str, str]:
        return "gpt's generated corpus", f"distinct {SIZES[cfg.size]['context']}-character windows in its held-out tenth"

    def describe(self) -> str:
        m = self.model_cfg
        return (
            f"gpt: context {m.context}, dim {m.dim}, {m.depth} layers, {m.heads} heads ({self.params:,} params), "
            f"vocab {m.vocab}, {len(self.train.tokens):,} training chars of {self.source}"
        )


def heldout_windows(tokens: int, context: int) -> int:
    """Distinct evaluation windows (context inputs and the next token) in `tokens` held-out tokens."""
    return max(1, tokens - context)


def contiguous_shards(n_tokens: int, workers: int, context: int) -> list[torch.Tensor]:
    """Window start offsets of each worker's contiguous slice of the first n_tokens tokens."""
    length = n_tokens // workers
    return [torch.arange(i * length, (i + 1) * length - context) for i in range(workers)]


def chars_needed(workers: int, batch_size: int, context: int) -> int:
    """The shortest text whose held-out tenth holds a window and whose slices hold a batch of windows each."""
    n = max(HELDOUT_FRACTION * (context + 1), workers * (context + batch_size))
    while n // HELDOUT_FRACTION < context + 1 or (n - n // HELDOUT_FRACTION) // workers < context + batch_size:
        n += 1
    return n

