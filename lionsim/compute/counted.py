"""Model shapes read off an nn.Module built on the meta device: `estimate --model FILE.py:FUNC`
and the CNN presets (resnet18, resnet50).

    build    FUNC() runs under `with torch.device("meta")`: every tensor it makes has a shape
             and a dtype but no storage, so a 7B-parameter module costs no more memory than a
             small one (tests/estimate/test_model_files.py prints the peak RSS)
    shapes   the trainable parameters' shapes (PowerSGD's matrices, DeMo's chunks, per-tensor
             scales), in module order
    FLOPs    torch.utils.flop_counter.FlopCounterMode over a forward of the example input, and
             over a backward of the sum of its outputs (weight and input gradients as autograd
             computes them: the first layer has no input gradient). It counts matrix
             multiplications and convolutions, 2 FLOPs per multiply-add; elementwise ops,
             norms and pooling are left out (a few percent of a CNN's or transformer's total)

A preset may lay its weights out as TensorFlow stores them (`layout="tensorflow"`: the
`resnet50-tf` preset): the same module, FLOPs and parameter count, each weight's shape as TF
holds it (tensorflow_layout), which decides how PowerSGD views a tensor as a matrix.

FUNC returns a module, or (module, example_input) with example_input a tensor or a tuple of
positional tensors whose leading dimension is the samples of one worker's step. A module
alone has shapes but no FLOP count: it is priced by 6 P per token (lionsim.compute.flops).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from lionsim.errors import LionsimError, a_type
from lionsim.plugin_load import exit_hint, one_line

if TYPE_CHECKING:
    from torch import Tensor, nn


@dataclass(frozen=True, slots=True)
class Count:
    """What pricing needs of a module: its parameters and one step's FLOPs."""

    tensor_shapes: list[tuple[int, ...]]
    """Trainable parameter shapes, in module order."""
    forward_flops: float | None
    """FLOPs of one forward of the example input (None: no example input given)."""
    backward_flops: float | None
    """FLOPs of the matching backward (None: no example input given)."""
    samples: int | None
    """The example input's leading dimension: samples the FLOPs are for."""
    tensor_names: tuple[str, ...] = ()
    """The trainable parameters' names, in the order of tensor_shapes (Muon's rule of which are hidden
    matrices reads them)."""

    @property
    def params(self) -> int:
        return sum(_numel(s) for s in self.tensor_shapes)

    @property
    def training_flops_per_sample(self) -> float | None:
        """Forward + backward FLOPs of one sample."""
        if self.forward_flops is None:
            return None
        return (self.forward_flops + self.backward_flops) / self.samples


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def count_on_meta(build: Callable[[], Any], where: str) -> Count:
    """Call `build()` on the meta device and count what it returns (see the module docstring);
    `where` names it in the one-line errors."""
    import torch  # here, not at import: the presets' names (estimate --help) need no torch
    from torch import Tensor, nn
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with torch.device("meta"):
            result = build()
    except LionsimError:
        raise
    except SystemExit as e:  # the user's builder parsed lionsim's command line, or exited
        raise LionsimError(f"bad {where}: building it raised {one_line(e)}{exit_hint(e)}") from None
    except Exception as e:  # the user's builder failed (e.g. it loads weights from a file): one line
        raise LionsimError(f"bad {where}: building it on the meta device raised {one_line(e)}; build the module "
                           "from its shapes only (no weights loaded, no .to(device))") from None
    module, example = (result if isinstance(result, tuple) and len(result) == 2 else (result, None))
    if not isinstance(module, nn.Module):
        raise LionsimError(f"bad {where}: it returned {a_type(module)}; accepted: an nn.Module or "
                           "(module, example_input)")
    named = [(name, tuple(p.shape)) for name, p in module.named_parameters() if p.requires_grad]
    shapes, names = [shape for _, shape in named], tuple(name for name, _ in named)
    if not shapes:
        raise LionsimError(f"bad {where}: the module has no trainable parameters")
    if example is None:
        return Count(shapes, None, None, None, names)
    inputs = example if isinstance(example, (tuple, list)) else (example,)
    if not inputs or not all(isinstance(t, Tensor) and t.dim() >= 1 for t in inputs):
        raise LionsimError(f"bad {where}: the example input must be a tensor (or a tuple of tensors) whose first "
                           "dimension is the samples of one worker's step")
    inputs = tuple(t.to("meta") for t in inputs)
    try:
        with FlopCounterMode(display=False) as forward:
            output = module(*inputs)
        scalar = sum(t.float().sum() for t in _tensors(output) if t.requires_grad)
        if not isinstance(scalar, Tensor):
            raise LionsimError(f"bad {where}: the module's output does not depend on its parameters")
        with FlopCounterMode(display=False) as backward:
            scalar.backward()
    except LionsimError:
        raise
    except Exception as e:
        raise LionsimError(f"bad {where}: forward and backward of the example input {tuple(inputs[0].shape)} on "
                           f"the meta device raised {one_line(e)}") from None
    return Count(shapes, float(forward.get_total_flops()), float(backward.get_total_flops()), int(inputs[0].shape[0]),
                 names)


def _tensors(output: Any) -> list[Tensor]:
    """The floating tensors of a module's output (a tensor, or tuples, lists and dicts of them)."""
    from torch import Tensor

    if isinstance(output, Tensor):
        return [output] if output.is_floating_point() else []
    if isinstance(output, dict):
        output = list(output.values())
    if isinstance(output, (tuple, list)):
        return [t for item in output for t in _tensors(item)]
    return []


LAYOUTS = ("torch", "tensorflow")
"""How a preset's weights are laid out: as torch holds them, or as TensorFlow does (tensorflow_layout)."""


def tensorflow_layout(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A torch weight's shape as TensorFlow stores the same weight: a convolution's kernel
    [out, in, kh, kw] as [kh, kw, in, out] (tf.nn.conv2d's filter layout; tf_cnn_benchmarks'
    convnet_builder.py builds weights_shape = [kernel_size[0], kernel_size[1], num_channels_in,
    filters]), a dense kernel [out, in] as [in, out] (its affine: [num_channels_in,
    num_out_channels]); vectors as they are."""
    if len(shape) == 4:
        out, inp, kh, kw = shape
        return (kh, kw, inp, out)
    if len(shape) == 2:
        return (shape[1], shape[0])
    return shape


@dataclass(frozen=True, kw_only=True, slots=True)
class CountedShape:
    """A model preset whose shapes and FLOPs are counted from its nn.Module on the meta device
    (a ModelShape, as lionsim.compute.models' analytic ones)."""

    name: str
    """Preset name."""
    build: Callable[[], nn.Module]
    """Makes the module (on whatever device is current: lionsim calls it under meta)."""
    input_shape: tuple[int, ...]
    """One sample's input, e.g. (3, 224, 224)."""
    description: str = ""
    """Where the architecture comes from."""
    layout: str = "torch"
    """LAYOUTS: "tensorflow" gives every weight's shape as TensorFlow stores it (tensorflow_layout)."""

    @property
    def count(self) -> Count:
        return _count_preset(self)

    @property
    def params(self) -> int:
        return self.count.params

    @property
    def tokens_per_sample(self) -> int:
        """One unit is one sample (an image): the FLOPs are counted per sample."""
        return 1

    @property
    def tensors(self) -> int:
        return len(self.count.tensor_shapes)

    @property
    def tensor_shapes(self) -> list[tuple[int, ...]]:
        shapes = self.count.tensor_shapes
        return [tensorflow_layout(s) for s in shapes] if self.layout == "tensorflow" else shapes

    @property
    def tensor_names(self) -> list[str]:
        return list(self.count.tensor_names)

    @property
    def training_flops_per_unit(self) -> float:
        """Counted forward + backward FLOPs of one sample (not 6 P: a CNN reuses each weight at
        every position of its feature map)."""
        return self.count.training_flops_per_sample


def _count_preset(shape: CountedShape) -> Count:
    return _count_module(shape.build, shape.input_shape)


@functools.lru_cache(maxsize=None)
def _count_module(build: Callable[[], nn.Module], input_shape: tuple[int, ...]) -> Count:
    """One count per module and input, whichever presets share them (resnet50 and resnet50-tf)."""
    import torch

    return count_on_meta(lambda: (build(), torch.zeros(1, *input_shape)), f"model preset {build.__name__}")
