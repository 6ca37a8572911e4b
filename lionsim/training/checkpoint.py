"""A run's state at a step boundary, so `lionsim bench --resume` continues it exactly.

When a run stops between steps (lionsim.training.stop), each process keeps, for the run
under way:

    model     the replica's state_dict after the last finished step (parameters and buffers)
    strategy  every attribute of the strategy object, pickled whole: per-worker momentum, error
              memories, step counters, random generators (its communicator is left out: a
              resumed run gets its own)
    rng       torch's global random state at the start of the next step (CUDA's too on a GPU)
    record    the run's step records so far (measured seconds, collectives, evaluations), so the
              resumed run books its medians over all of its steps, as an uninterrupted one does
    compute   the bench's compute figure, booked on every step of every run (measuring it again
              would book a different figure on the runs after the resume)

Batches are a function of (seed, worker, step) and everything else is restored, so a resumed
run's losses, evaluations, bytes and modelled times equal an uninterrupted run's (tested);
measured times are new measurements. The file is a torch pickle that lionsim wrote into the
run's own --out (`.resume/rank<R>.pt`); it is loaded only from there.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.errors import LionsimError

RESUME_DIR = ".resume"
"""Where a run directory keeps its checkpoints (hidden: not a result)."""
FORMAT = 1


def checkpoint_path(directory: Path, rank: int) -> Path:
    return Path(directory) / RESUME_DIR / f"rank{rank}.pt"


@dataclass(slots=True)
class RunCheckpoint:
    """One process's state of one run after its step `step` (0: before the first)."""

    label: str
    """The run (strategy@transport)."""
    step: int
    model: dict[str, torch.Tensor]
    strategy: dict[str, Any]
    rng: torch.Tensor
    record: Any
    """The run's lionsim.training.loop.RunRecord (not imported: the loop imports this module)."""
    cuda_rng: torch.Tensor | None = None
    compute: Any = None
    """The bench's lionsim.training.compute_figure.ComputeFigure, set before saving."""
    key: dict = field(default_factory=dict)
    """What it must match to be used: the configuration digest, rank, ranks (set by the caller)."""

    @classmethod
    def take(cls, label: str, step: int, model: nn.Module, strategy: object, rng: torch.Tensor,
             record, cuda_rng: torch.Tensor | None = None) -> RunCheckpoint:
        """A copy of the state now (the caller passes the RNG state it saved at the step's start)."""
        state = {k: v for k, v in vars(strategy).items() if not isinstance(v, (SimComm, ProcessGroupComm, nn.Module))}
        buffer = io.BytesIO()  # a deep copy that later steps cannot touch, and proof that it pickles
        torch.save(state, buffer)
        buffer.seek(0)
        model_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        return cls(label=label, step=step, model=model_state, strategy=torch.load(buffer, weights_only=False),
                   rng=rng, record=record, cuda_rng=cuda_rng)

    def restore(self, strategy: object, record) -> None:
        """Put the strategy's attributes and the record's steps back (the model is loaded by the
        run loop, the RNG state set by `restore_rng` at the first resumed step)."""
        for name, value in self.strategy.items():
            setattr(strategy, name, value)
        record.steps = list(self.record.steps)
        record.restored = len(record.steps)  # measured on another process's clock: the trace leaves them out
        record.kernels = self.record.kernels

    def restore_rng(self, device: torch.device) -> None:
        torch.set_rng_state(self.rng)
        if self.cuda_rng is not None and device.type == "cuda":
            torch.cuda.set_rng_state(self.cuda_rng, device)


def save_checkpoint(directory: Path, rank: int, checkpoint: RunCheckpoint) -> Path:
    """Write DIR/.resume/rank<R>.pt atomically (DIR is a staging directory)."""
    from lionsim.reports.files import write_atomic

    path = checkpoint_path(directory, rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, lambda f: torch.save({"format": FORMAT, "checkpoint": checkpoint}, f), binary=True)


def load_checkpoint(directory: Path, rank: int) -> RunCheckpoint | None:
    """This process's checkpoint in a run directory, None if it has none; a damaged file is one line."""
    path = checkpoint_path(directory, rank)
    if not path.is_file():
        return None
    try:
        data = torch.load(path, weights_only=False, map_location="cpu")
    except Exception as e:  # noqa: BLE001 (unpickling raises anything: one line, never a traceback)
        raise LionsimError(f"cannot read the resume state {path}: {' '.join(str(e).split())[:200]}; "
                           "pass --overwrite to start the run again") from None
    if not (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("checkpoint"), RunCheckpoint)):
        raise LionsimError(f"{path} is not a resume state this lionsim wrote; pass --overwrite to start again")
    return data["checkpoint"]
