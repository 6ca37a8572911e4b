"""The Workload base class and registry: model + data + loss, shards and per-worker batches."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, ClassVar, Iterator, Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lionsim.errors import LionsimError
from lionsim.registry import Registry
from lionsim.workloads.datasets.refusal import bad_data
from lionsim.workloads.config import WorkloadConfig, generated_eval_count
from lionsim.workloads.sampler import ShardSampler

WORKLOADS: Registry[type["Workload"]] = Registry("workload")

EVAL_CHUNK = 256
"""Held-out samples per forward pass in `evaluate` (bounds memory, not results)."""


def eval_chunks(n: int) -> Iterator[Tensor]:
    """Indices 0..n-1 in runs of EVAL_CHUNK, made one run at a time (an index tensor of a whole
    100M-sample eval set would be 800 MB)."""
    for start in range(0, n, EVAL_CHUNK):
        yield torch.arange(start, min(n, start + EVAL_CHUNK))


def register(name: str) -> Callable[[type["Workload"]], type["Workload"]]:
    """Class decorator: set `cls.name` and add the class to WORKLOADS."""

    def add(cls: type[Workload]) -> type[Workload]:
        cls.name = name
        WORKLOADS.add(name, cls)
        return cls

    return add


def generated_train_size(cfg: WorkloadConfig, base: int, per_sample: int = 1) -> int:
    """`cfg.train_size` if given, else `base` grown so that an iid shard holds at least 8 batches
    (of `per_sample` units each: 1 for a sample, the context length for characters)."""
    if cfg.train_size is not None:
        return cfg.train_size
    return max(base, 8 * cfg.workers * cfg.batch_size * per_sample)


class Source(Protocol):
    """Samples by index: `take(idx)` -> (inputs, targets) for a 1-D int64 index tensor."""

    def __len__(self) -> int: ...

    def take(self, idx: Tensor) -> tuple[Tensor, Tensor]: ...


class Workload(ABC):
    """Model, per-worker training shards and held-out data of one workload.

    Subclasses build the pieces in `__init__` and hand them to `_setup`; everything that
    reads them (batches, loss, evaluate) lives here, so every workload behaves the same.
    """

    name: ClassVar[str]
    task: ClassVar[str]
    """"classification" or "language-model"."""
    summary: ClassVar[str]
    """One line for `lionsim workloads`, available without building the workload."""
    gradients: ClassVar[str] = "loop"
    """How the simulator computes per-worker gradients: "loop" or "vmap" (torch.func),
    whichever `python -m lionsim.perf gradients` measured faster for this workload (vmap only
    from lionsim.simulator.VMAP_MIN_WORKERS workers in a process up)."""

    cfg: WorkloadConfig
    model: nn.Module
    train: Source
    heldout: Source
    shards: list[Tensor]
    """Per worker, the indices into `train` it samples from."""

    metric_name: str = "accuracy"
    """What `evaluate` reports as eval_acc: tables, plots and summaries name it so."""
    higher_is_better: bool = True
    """The metric's direction: best_eval_acc is its largest value if True, else its smallest."""

    base_train: ClassVar[int] = 8192
    """Generated training set's smallest size, in `unit`s (lionsim.workloads.base.generated_train_size)."""

    @classmethod
    def generated_units(cls, cfg: WorkloadConfig) -> int:
        """Samples (or characters) of the generated training set `cfg` gives, without building it."""
        return generated_train_size(cfg, cls.base_train)

    @classmethod
    def heldout_limit(cls, cfg: WorkloadConfig) -> int | None:
        """Held-out samples generated data holds (as many as the generated training set), known
        before anything is built; None: a real data set's, known once it is read."""
        return cls.generated_units(cfg) if cfg.data is None else None

    @classmethod
    def heldout_words(cls, cfg: WorkloadConfig) -> tuple[str, str]:
        """(the held-out set heldout_limit counts, its unit), as a refusal of --eval-samples names them."""
        return f"{cls.name}'s generated data", "samples, as many as it generates to train on"

    @classmethod
    def generated_eval_size(cls, cfg: WorkloadConfig) -> int:
        """Held-out samples each evaluation scores from generated data (LionsimError past heldout_limit)."""
        return generated_eval_count(cfg.eval_samples, cls.heldout_limit(cfg), *cls.heldout_words(cfg))

    @classmethod
    def check_data(cls, cfg: WorkloadConfig) -> None:
        """What can be told of `cfg.data` without reading it (it exists, a file or a directory as
        this workload reads), refused as bad --data before anything is written; a workload that
        generates its data refuses any path (lionsim.workloads.base.check_no_data)."""
        check_no_data(cfg)

    @classmethod
    @abstractmethod
    def probe(cls, cfg: WorkloadConfig) -> tuple[nn.Module, Tensor, Tensor, int]:
        """Without any data: (the model `cfg` builds, inputs and targets of one sample as a batch
        would hold them, bytes one unit of the training set occupies): the memory guard's figures."""

    @classmethod
    def param_shapes(cls, cfg: WorkloadConfig) -> list[tuple[str, tuple[int, ...]]]:
        """(name, shape) of each trainable tensor of the model `cfg` builds, in the order training
        flattens them (lionsim.strategies.core.layout.flatten_parameters), without its data: what a
        bench asks each run's strategy what it sends for before training (lionsim.config.sends).
        A built-in's is its probe's model, but gpt's, whose probe stands 128 in for the vocabulary:
        its own reads the text's (GPTWorkload.vocab_size)."""
        return trainable_shapes(cls.probe(cfg)[0])

    @classmethod
    def meta_params(cls, cfg: WorkloadConfig) -> int | None:
        """Trainable parameters of the model `cfg` builds, counted without allocating them (on the
        meta device), for the memory guard to check before anything is built; None: not counted
        that way (a built-in's probe builds its model, small by construction)."""
        return None

    def _setup(self, cfg: WorkloadConfig, model: nn.Module, train: Source, shards: list[Tensor], heldout: Source) -> None:
        self.cfg = cfg
        self.model = model
        self.train = train
        self.shards = shards
        self.heldout = heldout
        self._samplers = [ShardSampler(shard, cfg.batch_size, cfg.seed, i) for i, shard in enumerate(shards)]

    @property
    def workers(self) -> int:
        return len(self.shards)

    @property
    def eval_size(self) -> int:
        """Held-out samples (gpt: context windows) each evaluation scores."""
        return len(self.heldout)

    @property
    def params(self) -> int:
        """Trainable parameters of the model."""
        return sum(p.numel() for p in self.model.parameters() if p.requires_grad)

    def batch_indices(self, step: int, workers: range | None = None) -> list[Tensor]:
        """Per worker (all, or the given ones), the indices into `train` of its batch at `step`."""
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        chosen = range(len(self._samplers)) if workers is None else workers
        return [self._samplers[i].indices(step) for i in chosen]

    def batches(self, step: int, workers: range | None = None,
                device: torch.device | None = None) -> list[tuple[Tensor, Tensor]]:
        """One (inputs, targets) batch per worker (all, or the given ones) for `step`, each from
        that worker's shard; a worker's batch depends only on (seed, worker, step), so a real
        rank holding workers 4..7 draws exactly what the simulator gives those rows."""
        out = [self.train.take(idx) for idx in self.batch_indices(step, workers)]
        if device is not None and device.type != "cpu":
            out = [(x.to(device, non_blocking=True), y.to(device, non_blocking=True)) for x, y in out]
        return out

    def loss(self, model: nn.Module, inputs: Tensor, targets: Tensor) -> Tensor:
        """Mean cross-entropy of the model's logits (over samples, and tokens for a language model)."""
        logits = model(inputs)
        return F.cross_entropy(logits.flatten(0, -2), targets.flatten())

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        """Mean cross-entropy and accuracy (next-token accuracy for a language model) on the held-out set.

        Runs in eval mode under no_grad, then puts the model back in the mode it was in.
        """
        was_training = model.training
        device = next(model.parameters()).device
        loss_sum, correct, count = 0.0, 0, 0
        model.eval()
        try:
            with torch.no_grad():
                for idx in eval_chunks(len(self.heldout)):
                    inputs, targets = self.heldout.take(idx)
                    logits = model(inputs.to(device)).flatten(0, -2)
                    targets = targets.to(device).flatten()
                    loss_sum += F.cross_entropy(logits, targets, reduction="sum").item()
                    correct += int((logits.argmax(dim=-1) == targets).sum())
                    count += targets.numel()
        finally:
            model.train(was_training)
        return {"eval_loss": loss_sum / count, "eval_acc": correct / count}

    def shard_labels(self, i: int) -> Tensor:
        """Labels of worker i's training shard (classification workloads)."""
        labels = getattr(self.train, "labels", None)
        if self.task != "classification" or labels is None:
            raise LionsimError(f"shard labels need a classification workload; {self.name} is a {self.task}")
        return labels[self.shards[i]]

    @abstractmethod
    def describe(self) -> str:
        """One line: what this built workload trains on."""


def trainable_shapes(model: nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of each trainable parameter of `model`, in named_parameters' order."""
    return [(n, tuple(p.shape)) for n, p in model.named_parameters() if p.requires_grad]


def check_no_data(cfg: WorkloadConfig) -> None:
    """Workloads that only generate data reject --data instead of ignoring it."""
    if cfg.data is not None:
        raise bad_data(cfg.data, f"workload {cfg.name!r} generates its data and reads no path",
                       f"no --data for {cfg.name} (--data is for vit, a CIFAR-10 directory, or gpt, a text file)")
