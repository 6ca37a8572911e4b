"""The committed baseline file, read strictly and written atomically (calibrate.py builds it).

`reports/baselines/regress.json` (or `--baseline-dir DIR`/regress.json):

    {"format": "lionsim-regress-baseline/2", "suite_version": 2,
     "tolerance": {"rule": "...", "k": 3.0, "float_rule": "...", "float_k": 5.0},
     "versions": {"lionsim": ..., "torch": ..., "python": ...},
     "fingerprint": {"torch": ..., "python": ..., "cpu": ..., "cpu_capability": ..., "machine": ...},
                                                                   # optional (fingerprint.py)
     "cases": {"mlp-n4-iid": {
         "setting": {"workload": "mlp", "workers": 4, ...},     # compared with the suite's case
         "seeds": [0, 1, 2, 3, 4],                                 # the spread's seeds
         "untrained_eval_loss": 2.31,
         "noise_draws": 4,                                         # float-noise reruns (noise.py)
         "runs": {"dlion-mavo@int8-allreduce": {
             "lr": 0.01, "weight_decay": 1.0, "betas": [0.9, 0.99],
             "metrics": {"final_loss": {"value": 0.79, "sd": 0.04, "tol": 0.12,
                                        "noise_rms": 1e-4, "noise_tol": 1e-3}, ...}}}}}}

Floats are written with repr, so they read back bit for bit. Format 1 (no noise_*, no betas)
still reads: its checks run in strict or spread mode, never float.
"""

from __future__ import annotations

import json
import math
import platform
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import lionsim
from lionsim.errors import LionsimError
from lionsim.regress.tolerance import FLOAT_K, FLOAT_RULE, K, RULE

FORMAT = "lionsim-regress-baseline/2"
FORMATS = ("lionsim-regress-baseline/1", FORMAT)
"""Formats read (1: without float tolerances)."""
BASELINE_FILE = "regress.json"


@dataclass(frozen=True, slots=True)
class MetricBaseline:
    value: float
    sd: float
    """Seed-to-seed sample standard deviation measured at --update."""
    tol: float
    """Spread-mode tolerance."""
    noise_rms: float | None = None
    """Root-mean-square change under float noise at the fixed seed (None: not measured)."""
    noise_tol: float | None = None
    """Float-mode tolerance (None: not measured)."""


@dataclass(slots=True)
class RunBaseline:
    lr: float
    weight_decay: float
    metrics: dict[str, MetricBaseline]
    betas: tuple[float, float] | None = None
    """None in a format-1 file."""


@dataclass(slots=True)
class CaseBaseline:
    setting: dict[str, Any]
    seeds: list[int]
    """The seeds the spread was measured on (the first is the checked one)."""
    untrained_eval_loss: float
    runs: dict[str, RunBaseline]
    noise_draws: int = 0
    """Float-noise reruns measured (0: none, a format-1 file)."""

    @property
    def has_float(self) -> bool:
        return self.noise_draws > 0


@dataclass(slots=True)
class Baseline:
    suite_version: int
    tolerance: dict[str, Any]
    versions: dict[str, str]
    cases: dict[str, CaseBaseline] = field(default_factory=dict)
    fingerprint: dict[str, str] | None = None
    """The platform every case was recorded on (fingerprint.py); None: unknown (no strict mode)."""


def baseline_path(directory: Path) -> Path:
    return Path(directory) / BASELINE_FILE


def project_root() -> Path | None:
    """The source checkout lionsim runs from (the directory holding pyproject.toml beside the
    package: a clone, or an editable install), or None for an installed wheel."""
    root = Path(lionsim.__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "reports").is_dir() else None


def default_baseline_dir() -> Path:
    """Where `lionsim regress` looks without --baseline-dir: the checkout's committed
    reports/baselines, wherever the command runs from; an installed wheel (no checkout) uses
    reports/baselines under the current directory."""
    root = project_root()
    return (root if root is not None else Path(".")) / "reports" / "baselines"


def update_command(baseline_dir: Path | None = None, cases: Sequence[str] = ()) -> str:
    """The `lionsim regress --update` that acts on what a check read: the same baselines (their
    --baseline-dir, unless they are the default's: left out, --update would rewrite the
    checkout's committed ones) and `cases` (none: every case). The one place advice builds it."""
    words = ["lionsim", "regress", "--update", *(w for c in cases for w in ("--case", c))]
    if baseline_dir is not None and Path(baseline_dir).resolve() != default_baseline_dir().resolve():
        words += ["--baseline-dir", str(baseline_dir)]
    return shlex.join(words)


def current_versions() -> dict[str, str]:
    import torch  # here alone: `lionsim regress` finds and reads the baseline before torch loads

    return {"lionsim": lionsim.__version__, "torch": torch.__version__, "python": platform.python_version()}


# ---- reading ----------------------------------------------------------------------------


class _Malformed(Exception):
    """Internal: where in the file and what is wrong (turned into one LionsimError line)."""


def _field(obj: Any, key: str, kind: type, where: str) -> Any:
    """obj[key], checked to be a `kind` (float: any JSON number, returned as a finite float)."""
    if not isinstance(obj, dict):
        raise _Malformed(f"{where} is not an object")
    if key not in obj:
        raise _Malformed(f"{where} has no {key!r}")
    value = obj[key]
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _Malformed(f"{where}.{key} is {value!r}, not a number")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise _Malformed(f"{where}.{key} is {type(value).__name__}, expected {kind.__name__}")
    return value


def _optional(obj: dict, key: str, kind: type, where: str) -> Any:
    return _field(obj, key, kind, where) if key in obj else None


def _metric(obj: Any, where: str) -> MetricBaseline:
    m = MetricBaseline(_field(obj, "value", float, where), _field(obj, "sd", float, where),
                       _field(obj, "tol", float, where), _optional(obj, "noise_rms", float, where),
                       _optional(obj, "noise_tol", float, where))
    for name in ("tol", "noise_tol"):
        if (getattr(m, name) or 0.0) < 0:
            raise _Malformed(f"{where}.{name} is {getattr(m, name)!r}, expected a number >= 0")
    return m


def _run(obj: Any, where: str) -> RunBaseline:
    metrics = _field(obj, "metrics", dict, where)
    betas = _optional(obj, "betas", list, where)
    if betas is not None and not (len(betas) == 2 and all(isinstance(b, (int, float)) for b in betas)):
        raise _Malformed(f"{where}.betas is {betas!r}, expected two numbers")
    return RunBaseline(lr=_field(obj, "lr", float, where), weight_decay=_field(obj, "weight_decay", float, where),
                       metrics={name: _metric(m, f"{where}.metrics.{name}") for name, m in metrics.items()},
                       betas=None if betas is None else (float(betas[0]), float(betas[1])))


def _case(obj: Any, where: str) -> CaseBaseline:
    runs = _field(obj, "runs", dict, where)
    seeds = _field(obj, "seeds", list, where)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise _Malformed(f"{where}.seeds is {seeds!r}, expected a list of integer seeds")
    return CaseBaseline(setting=_field(obj, "setting", dict, where), seeds=seeds,
                        untrained_eval_loss=_field(obj, "untrained_eval_loss", float, where),
                        runs={label: _run(r, f"{where}.runs.{label}") for label, r in runs.items()},
                        noise_draws=_optional(obj, "noise_draws", int, where) or 0)


def parse_baseline(data: Any) -> Baseline:
    if _field(data, "format", str, "file") not in FORMATS:
        raise _Malformed(f"format is {data['format']!r}, expected one of {', '.join(FORMATS)}")
    cases = _field(data, "cases", dict, "file")
    fp = data.get("fingerprint")
    if fp is not None and not (isinstance(fp, dict) and all(isinstance(v, str) for v in fp.values())):
        raise _Malformed(f"fingerprint is {fp!r}, expected an object of strings")
    return Baseline(suite_version=_field(data, "suite_version", int, "file"),
                    tolerance=_field(data, "tolerance", dict, "file"),
                    versions=_field(data, "versions", dict, "file"),
                    cases={name: _case(c, f"cases.{name}") for name, c in cases.items()},
                    fingerprint=fp)


def load_baseline(directory: Path) -> Baseline:
    """Read DIR/regress.json; a missing or malformed file is a LionsimError (one line)."""
    path = baseline_path(directory)
    if not path.is_file():
        raise LionsimError(f"baseline file {path} not found; point at it with --baseline-dir DIR or create it with "
                           f"`{update_command(directory)}`"
                           + ("" if Path(directory).is_dir() else f" (directory {directory} does not exist)"))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return parse_baseline(data)
    except OSError as e:
        raise LionsimError(f"cannot read baseline {path}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LionsimError(f"malformed baseline {path}: not JSON ({' '.join(str(e).split())})") from None
    except _Malformed as e:
        raise LionsimError(f"malformed baseline {path}: {e}; regenerate it with `{update_command(directory)}`") from None


# ---- writing ----------------------------------------------------------------------------


def to_json(baseline: Baseline) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "suite_version": baseline.suite_version,
        "tolerance": baseline.tolerance,
        "versions": baseline.versions,
        **({"fingerprint": baseline.fingerprint} if baseline.fingerprint else {}),
        "cases": {
            name: {
                "setting": case.setting,
                "seeds": case.seeds,
                "untrained_eval_loss": case.untrained_eval_loss,
                **({"noise_draws": case.noise_draws} if case.noise_draws else {}),
                "runs": {
                    label: {"lr": run.lr, "weight_decay": run.weight_decay,
                            **({"betas": list(run.betas)} if run.betas is not None else {}),
                            "metrics": {m: _metric_json(b) for m, b in run.metrics.items()}}
                    for label, run in case.runs.items()
                },
            }
            for name, case in baseline.cases.items()
        },
    }


def _metric_json(b: MetricBaseline) -> dict[str, float]:
    out = {"value": b.value, "sd": b.sd, "tol": b.tol}
    if b.noise_tol is not None:
        out.update(noise_rms=b.noise_rms, noise_tol=b.noise_tol)
    return out


def save_baseline(directory: Path, baseline: Baseline) -> Path:
    """Write DIR/regress.json atomically (DIR is created)."""
    from lionsim.reports.files import write_atomic  # pandas: not for a check's first read

    path = baseline_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_json(baseline), indent=1, allow_nan=False) + "\n"
    return write_atomic(path, lambda f: f.write(text))


def tolerance_info() -> dict[str, Any]:
    return {"rule": RULE, "k": K, "float_rule": FLOAT_RULE, "float_k": FLOAT_K}
