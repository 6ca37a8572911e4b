"""A user's own workload: `--workload FILE.py:FUNC`, `package.module:FUNC`, or an installed entry
point of the group `lionsim.workloads`.

The contract is PyTorch's usual triple. `FUNC()` (given `seed=` if it takes it; torch's RNG is
seeded from --seed around the call either way, so the initial weights are the same for every
strategy, rank and replay) returns

    (model, dataset, loss_fn)    an nn.Module; a Dataset of (input, target) pairs;
                                 loss_fn(output, target) -> a scalar tensor

or the richer `WorkloadParts` (or a dict of its field names) that may add an eval set, a metric,
a collate function and class labels. lionsim then does the rest: the dataset is read once into
tensors (batches are rows of them), split into per-worker shards (iid; dirichlet where targets
are class labels), and trained under every strategy, transport and backend like a built-in.

Before anything trains, one forward and loss on two samples checks the pieces; every way a plugin
can be wrong is one LionsimError line naming the spec and what was expected.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
from dataclasses import dataclass, fields
from typing import Any, Callable

import torch
from torch import Tensor, nn

from lionsim.errors import LionsimError, a_type
from lionsim.forms import WORKLOAD_ENTRY_GROUP
from lionsim.plugin_load import entry_points, exit_hint, is_spec, load_function, one_line, parse_spec, summary_of
from lionsim.workloads.base import Workload, eval_chunks, trainable_shapes
from lionsim.workloads.datasets.refusal import bad_data
from lionsim.workloads.config import WorkloadConfig, eval_count
from lionsim.workloads.seeding import numpy_generator, seeded_torch
from lionsim.workloads.splits import parse_split, split_indices

ENTRY_GROUP = WORKLOAD_ENTRY_GROUP
"""Installed packages announce workloads here: `name = "package.module:FUNC"`."""
MAX_SAMPLES = 1_000_000
"""Samples a plugin's dataset may hold: it is read into memory whole, item by item."""
HELD_OUT_FRACTION = 10
"""Without an eval set, one sample in this many (seeded) is held out of training for evaluation."""
CHECK_SAMPLES = 2
"""Samples of the forward + loss check (two, so a BatchNorm in training mode can run)."""
RETURN_FORMS = "(model, dataset, loss_fn), a dict of WorkloadParts' fields, or lionsim.workloads.WorkloadParts"


@dataclass(kw_only=True)
class WorkloadParts:
    """The richer form of a plugin's return value (a dict with these keys works the same)."""

    model: nn.Module
    """The network; its initial weights are those FUNC builds (under the seeded RNG)."""
    train: Any
    """Training Dataset (len and [i]) of (input, target) pairs."""
    loss: Callable[[Tensor, Tensor], Tensor]
    """loss(output, target) -> scalar tensor, the mean over the batch."""
    eval: Any = None
    """Held-out Dataset of (input, target) pairs; None: a seeded tenth of `train` is held out."""
    metric: Callable[[Tensor, Tensor], Any] | None = None
    """metric(output, target) -> a number, the batch mean (reported as eval_acc); None: accuracy
    where targets are class labels and outputs are (batch, classes) logits, else no metric."""
    metric_name: str | None = None
    """What tables, plots and summaries call `metric` (e.g. "error rate"); None: the function's
    name (`error_rate`), "metric" for a lambda. Needs `metric`."""
    higher_is_better: bool = True
    """The metric's direction (an error rate: False): best_eval_acc is then its smallest value.
    Needs `metric`."""
    collate: Callable[[list], tuple[Tensor, Tensor]] | None = None
    """collate(items) -> (inputs, targets), applied once to every item of a set (each batch is then
    rows of them); None: torch.stack of the inputs and of the targets."""
    labels: Any = None
    """Class label per training sample (1-D integers), for --data-split dirichlet:ALPHA; None:
    the targets, when they are 1-D integers."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A plugin's pieces, checked and read into tensors (one per (name, seed) and process)."""

    model: nn.Module
    inputs: Tensor
    targets: Tensor
    labels: Tensor | None
    """Class label per sample of inputs (None: targets are not class labels)."""
    train: Tensor
    """Indices of the samples trained on (all but the held-out ones when no eval set is given)."""
    eval_inputs: Tensor
    eval_targets: Tensor
    eval_source: str
    """Where the held-out samples come from, for messages and run.json."""
    loss: Callable
    metric: Callable | None
    metric_name: str
    """What eval_acc holds, by name ("accuracy" for the built-in one)."""
    higher_is_better: bool


def plugin_names() -> dict[str, str]:
    """Installed plugin workloads (entry points of ENTRY_GROUP) -> their one-line summary."""
    out = {}
    for name, ep in entry_points(ENTRY_GROUP).items():
        try:
            out[name] = summary_of(ep.load()) or f"plugin {ep.value}"
        except Exception as e:  # a broken package still lists, saying why
            out[name] = f"plugin {ep.value} (does not load: {one_line(e)})"
    return out


def resolve_function(name: str) -> tuple[str, Callable]:
    """(canonical name, FUNC) of a spec or an installed entry point name."""
    if is_spec(name):
        spec = parse_spec(name, "--workload")
        return spec.text, load_function(spec, "--workload")
    eps = entry_points(ENTRY_GROUP)
    found = next((n for n in eps if n.lower() == name.strip().lower()), None)
    if found is None:
        raise KeyError(name)
    try:
        function = eps[found].load()
    except Exception as e:
        raise LionsimError(f"bad --workload {found}: its entry point {eps[found].value} does not load: {one_line(e)}") from None
    return found, function


@functools.lru_cache(maxsize=8)
def load(name: str, seed: int) -> Loaded:
    """Call the plugin `name` (canonical) with `seed`, check its pieces and read its sets (once per
    process: a sweep's cells and the memory guard share them; each Workload copies the model)."""
    where = f"--workload {name}"
    _, function = resolve_function(name)
    parts = _call(function, seed, where)
    model, loss, metric = parts.model, parts.loss, parts.metric
    if not isinstance(model, nn.Module):
        raise LionsimError(f"bad {where}: the model is {a_type(model)}, not a torch.nn.Module")
    if not any(p.requires_grad for p in model.parameters()):
        raise LionsimError(f"bad {where}: the model has no trainable parameters; nothing to train or send")
    for what, fn, needed in (("loss_fn", loss, True), ("metric", metric, False), ("collate", parts.collate, False)):
        if (fn is not None or needed) and not callable(fn):
            raise LionsimError(f"bad {where}: {what} is {a_type(fn)}, not a function")
    inputs, targets = _read(parts.train, parts.collate, where, "dataset")
    labels = _labels(parts.labels, targets, where)
    n = len(inputs)
    if parts.eval is not None:
        eval_inputs, eval_targets = _read(parts.eval, parts.collate, where, "eval set")
        train, source = torch.arange(n), f"the eval set of {name}"
    else:
        held = n // HELD_OUT_FRACTION
        if held == 0:
            raise LionsimError(f"bad {where}: its dataset holds {n} samples; without an eval set lionsim holds out "
                               f"one in {HELD_OUT_FRACTION} for evaluation, so it needs at least {HELD_OUT_FRACTION} "
                               "(or return an eval set: WorkloadParts(eval=...))")
        perm = torch.from_numpy(numpy_generator(seed, "plugin", "held-out").permutation(n))
        train, out = perm[held:].sort().values, perm[:held].sort().values
        eval_inputs, eval_targets = inputs[out], targets[out]
        source = f"the held-out tenth of {name}'s dataset"
    out_dims = _check_forward(model, loss, metric, inputs[:CHECK_SAMPLES], targets[:CHECK_SAMPLES], where)
    name, higher = _metric_naming(parts, where)
    if metric is None and _class_labels(targets) is not None and out_dims == 2:
        metric = accuracy  # targets are class labels, outputs (batch, classes) logits
    return Loaded(model=model, inputs=inputs, targets=targets, labels=labels, train=train,
                  eval_inputs=eval_inputs, eval_targets=eval_targets, eval_source=source, loss=loss, metric=metric,
                  metric_name=name, higher_is_better=higher)


MAX_METRIC_NAME = 40
"""Characters a metric's name may have (it heads a table column and labels a plot axis)."""


def _metric_naming(parts: WorkloadParts, where: str) -> tuple[str, bool]:
    """(name, higher_is_better) of the metric parts give, checked: the built-in accuracy's
    ("accuracy", True) without a metric of their own."""
    named = parts.metric_name is not None or parts.higher_is_better is not True
    if parts.metric is None:
        if named:
            raise LionsimError(f"bad {where}: metric_name and higher_is_better describe a metric of your own, and "
                               "none is given; add metric=... (without one, eval_acc is accuracy, higher is better)")
        return "accuracy", True
    if not isinstance(parts.higher_is_better, bool):
        raise LionsimError(f"bad {where}: higher_is_better is {parts.higher_is_better!r}; accepted: True or False")
    name = parts.metric_name
    if name is None:
        own = getattr(parts.metric, "__name__", "")
        name = own if own.isidentifier() else "metric"
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_METRIC_NAME or not name.isprintable():
        raise LionsimError(f"bad {where}: metric_name {name!r}; accepted: a line of 1 to {MAX_METRIC_NAME} "
                           "printable characters, e.g. \"error rate\"")
    return name.strip(), parts.higher_is_better


@functools.lru_cache(maxsize=8)
def meta_params(name: str, seed: int) -> int | None:
    """Trainable parameters of the model that plugin `name`'s function builds, with the function
    run on the meta device (as `estimate --model` counts modules: lionsim.compute.counted), where
    tensors have shapes but no storage: a 7B module costs nothing, so the memory guard can refuse
    it before the function runs for real. None where the function cannot run there (it loads
    weights into the model, reads a tensor's values, ...): the guard then counts the model once
    built. Its data set, made on meta too, is not read."""
    _, function = resolve_function(name)
    try:
        with torch.device("meta"):
            model = _call(function, seed, f"--workload {name}").model
    except Exception:  # whatever fails on meta fails (or not) for real next, with its own message
        return None
    if not isinstance(model, nn.Module):
        return None
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def accuracy(output: Tensor, target: Tensor) -> float:
    """Share of samples whose largest logit is their label."""
    return (output.argmax(dim=-1) == target).float().mean().item()


def _call(function: Callable, seed: int, where: str) -> WorkloadParts:
    """FUNC(seed=seed) if it takes a seed, else FUNC(), under the seeded RNG; its return as parts."""
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        params = {}
    takes_seed = "seed" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    try:
        with seeded_torch(seed, "plugin", "build"):
            result = function(seed=seed) if takes_seed else function()
    except LionsimError:
        raise
    except (Exception, SystemExit) as e:  # the user's function failed: its own message, one line
        raise LionsimError(f"bad {where}: calling it raised {one_line(e)}{exit_hint(e)}") from None
    if isinstance(result, WorkloadParts):
        return result
    if isinstance(result, dict):
        known = {f.name for f in fields(WorkloadParts)}
        unknown = sorted(set(result) - known)
        missing = sorted({"model", "train", "loss"} - set(result))
        if unknown or missing:
            problem = f"unknown keys {', '.join(unknown)}" if unknown else f"missing keys {', '.join(missing)}"
            raise LionsimError(f"bad {where}: it returned a dict with {problem}; accepted keys: {', '.join(sorted(known))}")
        return WorkloadParts(**result)
    if isinstance(result, (tuple, list)) and len(result) == 3:
        return WorkloadParts(model=result[0], train=result[1], loss=result[2])
    shown = f"{a_type(result)} of {len(result)}" if isinstance(result, (tuple, list)) else a_type(result)
    raise LionsimError(f"bad {where}: it returned {shown}; accepted: {RETURN_FORMS}")


def _read(dataset: Any, collate: Callable | None, where: str, what: str) -> tuple[Tensor, Tensor]:
    """Every (input, target) of `dataset` as two tensors with one row per sample."""
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise LionsimError(f"bad {where}: its {what} is {a_type(dataset)}, not a Dataset "
                           "(an object with __len__ and __getitem__, e.g. torch.utils.data.TensorDataset)")
    n = len(dataset)
    if not 1 <= n <= MAX_SAMPLES:
        raise LionsimError(f"bad {where}: its {what} holds {n} samples; accepted: 1 to {MAX_SAMPLES:,} "
                           "(it is read into memory whole)")
    items = []
    for i in range(n):
        try:
            items.append(dataset[i])
        except Exception as e:
            raise LionsimError(f"bad {where}: reading item {i} of its {what} raised {one_line(e)}") from None
    if collate is not None:
        try:
            pair = collate(items)
        except Exception as e:
            raise LionsimError(f"bad {where}: its collate function raised {one_line(e)}") from None
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, Tensor) for t in pair)
                and len(pair[0]) == n and len(pair[1]) == n):
            raise LionsimError(f"bad {where}: collate must return (inputs, targets), two tensors of {n} rows each")
        return pair[0], pair[1]
    for i, item in enumerate(items):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            shown = f"{a_type(item)}" + (f" of {len(item)}" if isinstance(item, (tuple, list)) else "")
            raise LionsimError(f"bad {where}: item {i} of its {what} is {shown}, not an (input, target) pair")
    return _stack([x for x, _ in items], where, what, "input"), _stack([y for _, y in items], where, what, "target")


def _stack(values: list, where: str, what: str, part: str) -> Tensor:
    try:
        rows = [torch.as_tensor(v) for v in values]
    except Exception:
        bad = next(v for v in values if not _tensorable(v))
        raise LionsimError(f"bad {where}: an {part} of its {what} is {a_type(bad)}; accepted: a tensor, "
                           "a number or a numpy array (or give a collate function)") from None
    shapes = {tuple(r.shape) for r in rows}
    if len(shapes) > 1:
        first = tuple(rows[0].shape)
        i, other = next((i, tuple(r.shape)) for i, r in enumerate(rows) if tuple(r.shape) != first)
        raise LionsimError(f"bad {where}: the {part}s of its {what} differ in shape: item 0 {first}, item {i} "
                           f"{other}; accepted: one shape (or give a collate function that pads them)")
    return torch.stack(rows)


def _tensorable(value: Any) -> bool:
    try:
        torch.as_tensor(value)
        return True
    except Exception:
        return False


def _labels(given: Any, targets: Tensor, where: str) -> Tensor | None:
    """Class labels: the given ones (checked), else the targets when they are 1-D integers."""
    if given is None:
        return _class_labels(targets)
    labels = torch.as_tensor(given)
    if labels.dim() != 1 or labels.dtype.is_floating_point or len(labels) != len(targets):
        raise LionsimError(f"bad {where}: labels must be one integer per training sample ({len(targets)}), "
                           f"got {labels.dtype} of shape {tuple(labels.shape)}")
    return labels.long()


def _class_labels(targets: Tensor) -> Tensor | None:
    """The targets themselves when they are class labels (1-D integers), else None."""
    integer = not targets.dtype.is_floating_point and not targets.dtype.is_complex and targets.dtype != torch.bool
    return targets if integer and targets.dim() == 1 else None


def _check_forward(model: nn.Module, loss: Callable, metric: Callable | None, x: Tensor, y: Tensor, where: str) -> int:
    """One forward + loss (+ metric) on a copy of the model (a BatchNorm's statistics stay as built);
    returns the output's number of dimensions."""
    probe = copy.deepcopy(model)
    try:
        out = probe(x)
    except Exception as e:
        raise LionsimError(f"bad {where}: the model's forward on {len(x)} dataset inputs of shape "
                           f"{tuple(x.shape[1:])} raised {one_line(e)}") from None
    try:
        value = loss(out, y)
    except Exception as e:
        raise LionsimError(f"bad {where}: loss_fn(output, target) raised {one_line(e)}") from None
    if not isinstance(value, Tensor):
        raise LionsimError(f"bad {where}: loss_fn returned {a_type(value)}; accepted: a scalar tensor")
    if value.numel() != 1:
        raise LionsimError(f"bad {where}: loss_fn returned a tensor of shape {tuple(value.shape)}, not a scalar; "
                           "reduce it over the batch (e.g. .mean())")
    if not value.dtype.is_floating_point or not math.isfinite(value.item()):
        raise LionsimError(f"bad {where}: loss_fn returned {value.item()} ({value.dtype}); accepted: a finite float")
    if not value.requires_grad:
        raise LionsimError(f"bad {where}: loss_fn's value does not depend on the model's parameters (no gradient)")
    if metric is not None:
        try:
            float(metric(out.detach(), y))
        except Exception as e:
            raise LionsimError(f"bad {where}: metric(output, target) must give a number; it raised {one_line(e)}") from None
    return out.dim()


class TensorSource:
    """Rows of an inputs tensor and a targets tensor, by index."""

    def __init__(self, inputs: Tensor, targets: Tensor, labels: Tensor | None = None) -> None:
        self.inputs = inputs
        self.targets = targets
        self.labels = labels
        """Class labels per row (Workload.shard_labels), None where targets are not class labels."""

    def __len__(self) -> int:
        return len(self.targets)

    def take(self, idx: Tensor) -> tuple[Tensor, Tensor]:
        return self.inputs[idx], self.targets[idx]


class PluginWorkload(Workload):
    """A Workload built from a plugin's pieces; `plugin_class` makes one subclass per plugin name
    (with its `name`, `summary` and `loss`: the user's loss_fn on the model's output)."""

    task = "classification"
    gradients = "loop"  # a user's model may hold what torch.func cannot vmap (BatchNorm, in-place ops)
    summary = "a user's workload"

    def __init__(self, cfg: WorkloadConfig) -> None:
        check_plugin_config(cfg)
        data = self.loaded(cfg)
        labels = None if data.labels is None else data.labels[data.train]
        if parse_split(cfg.data_split).kind != "iid" and labels is None:
            raise LionsimError(f"data split {cfg.data_split!r} needs class labels, and the targets of {cfg.name} are "
                               f"{data.targets.dtype} of shape {tuple(data.targets.shape[1:]) or 'scalar'} per sample; "
                               "accepted: iid, or return labels (WorkloadParts(labels=...))")
        self.task = "classification" if labels is not None else "regression"  # any targets but class labels
        split_on = labels if labels is not None else torch.zeros(len(data.train), dtype=torch.long)
        shards = split_indices(split_on, cfg.workers, cfg.data_split, cfg.seed, min_size=cfg.batch_size)
        train = TensorSource(data.inputs[data.train], data.targets[data.train], labels)
        self.metric = data.metric
        self.metric_name, self.higher_is_better = data.metric_name, data.higher_is_better
        self.eval_source = data.eval_source
        count = eval_count(cfg.eval_samples, len(data.eval_targets), data.eval_source)
        self._setup(cfg, copy.deepcopy(data.model), train, shards,
                    TensorSource(data.eval_inputs[:count], data.eval_targets[:count]))

    @classmethod
    def loaded(cls, cfg: WorkloadConfig) -> Loaded:
        return load(cls.name, cfg.seed)

    @classmethod
    def generated_units(cls, cfg: WorkloadConfig) -> int:
        """Training samples (the memory guard's data size; a plugin's data is its own, not generated)."""
        return len(cls.loaded(cfg).train)

    @classmethod
    def heldout_limit(cls, cfg: WorkloadConfig) -> int | None:
        """None: a plugin's held-out set is its own (eval_count checks it where it is built)."""
        return None

    @classmethod
    def meta_params(cls, cfg: WorkloadConfig) -> int | None:
        return meta_params(cls.name, cfg.seed)

    @classmethod
    def param_shapes(cls, cfg: WorkloadConfig) -> list[tuple[str, tuple[int, ...]]]:
        """The loaded model's own shapes (probe would copy the model to read them)."""
        return trainable_shapes(cls.loaded(cfg).model)

    @classmethod
    def probe(cls, cfg: WorkloadConfig) -> tuple[nn.Module, Tensor, Tensor, int]:
        data = cls.loaded(cfg)
        x, y = data.inputs[:1], data.targets[:1]
        per_unit = x.element_size() * x[0].numel() + y.element_size() * y[0].numel()
        return copy.deepcopy(data.model), x, y, per_unit

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        """Sample-weighted means of loss_fn and the metric over the held-out set, in chunks of
        EVAL_CHUNK (eval_acc is NaN without a metric); eval mode, no_grad, the mode restored after."""
        was_training = model.training
        device = next(model.parameters()).device
        loss_fn = self.loaded(self.cfg).loss
        loss_sum, metric_sum, count = 0.0, 0.0, 0
        model.eval()
        try:
            with torch.no_grad():
                for idx in eval_chunks(len(self.heldout)):
                    inputs, targets = self.heldout.take(idx)
                    out, targets = model(inputs.to(device)), targets.to(device)
                    loss_sum += float(loss_fn(out, targets)) * len(idx)
                    metric_sum += float(self.metric(out, targets)) * len(idx) if self.metric is not None else math.nan
                    count += len(idx)
        finally:
            model.train(was_training)
        return {"eval_loss": loss_sum / count, "eval_acc": metric_sum / count}

    def describe(self) -> str:
        return (f"{self.name}: {self.params:,} params, {len(self.train)} training samples, "
                f"{self.eval_size} held-out from {self.eval_source}, split {self.cfg.data_split}")


def check_plugin_config(cfg: WorkloadConfig) -> None:
    """Options that a plugin's own data makes meaningless are refused, not ignored."""
    if cfg.data is not None:
        raise bad_data(cfg.data, f"the workload {cfg.name} loads its own data",
                       "no --data for it (--data is for the built-in vit and gpt; a workload file reads its "
                       "path from an environment variable or a file beside it)")
    if cfg.train_size is not None:
        raise LionsimError(f"train_size {cfg.train_size} applies to generated data; {cfg.name} brings its own")


@functools.lru_cache(maxsize=None)
def plugin_class(name: str) -> type[PluginWorkload]:
    """The Workload class of plugin `name` (canonical: an absolute FILE.py:FUNC, module:FUNC or an
    entry point name); imports it (a missing file or function fails here) but calls nothing."""
    canonical, function = resolve_function(name)

    def loss(self, model: nn.Module, inputs: Tensor, targets: Tensor) -> Tensor:
        # lionsim.training.memory prices activations with cls.loss(None, ...) before any instance
        # exists: the seed-0 loss_fn then (a loss function does not depend on the seed)
        return (load(canonical, 0) if self is None else self.loaded(self.cfg)).loss(model(inputs), targets)

    return type(f"Plugin[{canonical}]", (PluginWorkload,), {
        "name": canonical, "summary": summary_of(function) or f"plugin {canonical}", "loss": loss,
        "__module__": __name__})


def is_plugin(cls: type[Workload]) -> bool:
    return issubclass(cls, PluginWorkload)

