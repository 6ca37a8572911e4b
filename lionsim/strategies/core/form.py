"""The one-file form of a strategy: its own options as a typed dataclass, read by every way in.

A strategy module declares `Options`, a frozen kw_only dataclass whose fields are made by
`option(...)` (the default, what is accepted, the check, optionally the flag), each with a
docstring below it (the flag's help). From those fields alone:

- the CLI flags of bench, estimate and sweep are generated (`--demo-topk`: the field's `flag`,
  else `--NAME-FIELD`), and `--opt NAME.FIELD=VALUE` reaches any field of strategy NAME;
- a TOML --config and a run.json give them under the flag's name (`demo_topk = 16`);
- one check per field turns a bad value into one line, wherever it comes from:
  "bad --demo-topk 0; accepted: a whole number at least 1", in lionsim.ranges' form (`integer` and
  `between` checks are lionsim.ranges.Range, which says itself in words, so `accepted` is needed
  only beside another check).

A value is resolved per run: `NAME.FIELD` given, else the flag given, else the strategy's
`tuning` for the workload, else the field's default (resolve_options).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
import typing
from functools import cache
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from lionsim.errors import LionsimError
from lionsim.forms import PRICED, RUN, STEP, TRAINING  # re-exported (__all__): option(priced=)'s values
from lionsim.forms import beyond_float32
from lionsim.ranges import Range, is_number, refusal
from lionsim.registry import Registry, did_you_mean, match_name
from lionsim.whole import Text

__all__ = ["ACTS", "ALWAYS", "META", "PAST_WARMUP", "PRICED", "RUN", "SETS_WARMUP", "STEP", "TRAINING",
           "TRAINING_WHY", "NoOptions", "OptionRule", "OptionSpec",
           "between", "field_docs", "integer", "option", "option_spec", "option_specs", "parse_opt", "resolve_options", "tuning_for"]

META = "lionsim"
"""The key of a field's OptionRule in its dataclass metadata."""

TRAINING_WHY = "changes training, not a step's time or bytes"

ALWAYS, PAST_WARMUP, SETS_WARMUP = "always", "past warm-up", "sets warm-up"
"""When an option acts (option(acts=)): on every step; only past the strategy's warm-up, on the steps
that send what it sends at steady state (a PowerSGD rank, DiLoCo's outer step); or it sets that
warm-up (--powersgd-warmup-steps, --local-steps). A bench whose steps all fall in the warm-up notes
the given options that never acted (lionsim.strategies.core.unacted)."""
ACTS = (ALWAYS, PAST_WARMUP, SETS_WARMUP)


@dataclass(frozen=True, slots=True)
class OptionRule:
    """How one option field is checked and spelled (made by `option`)."""

    accepted: str
    """What is accepted, in words: the end of the error line ("a whole number at least 1")."""
    check: Callable[[object], bool]
    """True for a valid value (after the conversion to the field's type)."""
    flag: str | None = None
    """The CLI flag (`--demo-topk`); None: `--NAME-FIELD` of the strategy's registered name."""
    choices: tuple[str, ...] | Registry | None = None
    """A value among these, matched ignoring case and kept in their spelling; a Registry's names as
    they are when the value is checked (a plug-in may register more)."""
    priced: str = STEP
    """What estimate prices of it: STEP, RUN or TRAINING (PRICED)."""
    why: str = TRAINING_WHY
    """With TRAINING: why estimate does not read it, the middle of its refusal line."""
    acts: str = ALWAYS
    """When it acts (ACTS): on every step, only past the warm-up, or it sets the warm-up."""

    @property
    def says(self) -> str:
        """What is accepted, in words: a registry of choices lists its names as they are now."""
        return ", ".join(self.choices) if isinstance(self.choices, Registry) else self.accepted


def option(default, *, check: Callable[[object], bool], accepted: str | None = None, flag: str | None = None,
           choices: Iterable[str] | Registry | None = None, priced: str = STEP, why: str = TRAINING_WHY,
           acts: str = ALWAYS):
    """A field of a strategy's Options: its default and its rule (write its docstring below it).
    `accepted`: what is accepted, in words; by default a Range check's own (`integer`, `between`).
    `choices` a Registry: its names at check time (then `accepted` is read only where they are not).
    `priced`: what estimate prices of it (STEP, RUN or TRAINING, module constants), `why` the reason
    a TRAINING one is not read there. `acts`: when it acts (ACTS; ALWAYS unless declared)."""
    if choices is not None and not isinstance(choices, Registry):
        choices = tuple(choices)
    if priced not in PRICED:
        raise LionsimError(f"bad option(priced={priced!r}); accepted: {', '.join(PRICED)}")
    if acts not in ACTS:
        raise LionsimError(f"bad option(acts={acts!r}); accepted: {', '.join(ACTS)}")
    accepted = accepted if accepted is not None else getattr(check, "words", None)
    if accepted is None:
        raise LionsimError("option(...) needs accepted=... (what is accepted, in words) beside a check that is "
                           "not integer(...) or between(...)")
    rule = OptionRule(accepted, check, flag, choices, priced, why, acts)
    return dataclasses.field(default=default, metadata={META: rule})


def integer(low: int, high: int | None = None, *, why: str = "") -> Range:
    """Check: a whole number from `low` (to `high` where given), a lionsim.ranges.Range."""
    return Range(low, high, whole=True, why=why)


def between(low: float, high: float | None = None, *, low_open: bool = False, high_open: bool = False,
            why: str = "") -> Range:
    """Check: a finite number in the interval (open ends where asked; None or inf: no top), a
    lionsim.ranges.Range."""
    top = None if high == float("inf") else high
    return Range(low, top, above=low_open, below=high_open and top is not None, why=why)


@dataclass(frozen=True, kw_only=True)
class NoOptions:
    """A strategy without options of its own."""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option of one registered strategy, as every way in sees it."""

    strategy: str
    """The strategy's registered name."""
    field: str
    """The Options field."""
    flag: str
    """The CLI flag, `--demo-topk`."""
    type: type
    """int, float, str or bool."""
    default: object
    rule: OptionRule
    help: str
    """The field's docstring (the flag's help)."""

    @property
    def priced(self) -> str:
        """What estimate prices of it (OptionRule.priced), as the flag table's FlagSpec states it."""
        return self.rule.priced

    @property
    def key(self) -> str:
        """The flag's name in a config file, run.json and BenchConfig.options (`demo_topk`)."""
        return self.flag[2:].replace("-", "_")

    @property
    def qualified(self) -> str:
        """`NAME.FIELD`, as `--opt` takes it."""
        return f"{self.strategy}.{self.field}"

    def given_in(self, options: Mapping[str, object]) -> bool:
        """Whether `options` (StrategyConfig.options: by flag key or NAME.FIELD) gives it, not its default."""
        return self.qualified in options or options.get(self.key) is not None

    def value(self, given, opt: bool = False):
        """`given` converted to the field's type and checked; else one LionsimError line naming
        the flag (`opt`: as `--opt NAME.FIELD=VALUE` gave it)."""
        flag, shown = ("--opt", Text(f"{self.qualified}={given}")) if opt else (self.flag, given)
        value = given
        if isinstance(given, str) and self.type is not str:
            value = _parse(given, self.type)
        if self.rule.choices is not None:
            found = match_name(value, self.rule.choices)
            if found is None:
                raise LionsimError(refusal(flag, shown, f"{self.rule.says}{did_you_mean(value, self.rule.choices)}"))
            value = found
        if self.type is int and is_number(value) and float(value).is_integer():
            value = value if isinstance(value, int) else int(value)  # a Whole keeps its text for later refusals
        elif self.type is float and is_number(value):
            value = float(value)
        if value is None or not self.rule.check(value):
            raise LionsimError(refusal(flag, shown, self.rule.says))
        if beyond_float32(value):  # in a range with no top, yet more than training's float32 holds
            raise LionsimError(refusal(flag, shown, self.rule.says, beyond_float32(value)))
        return value


def _parse(text: str, kind: type):
    """A value typed as text (`--opt demo.topk=16`) as `kind`; the text itself where it is not one."""
    try:
        if kind is bool:
            return {"true": True, "false": False, "1": True, "0": False}.get(text.strip().lower(), text)
        return kind(text)
    except ValueError:
        return text


@cache  # reading a class's source is slow, and every listing of the options asks again
def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring (the string just below it), read from the class's source (once per
    class: every plan checks every strategy's options, and parsing the source is the slow part)."""
    return dict(_field_docs(cls))


@functools.cache
def _field_docs(cls: type) -> dict[str, str]:
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # built in, or no source on disk: no help text
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, after in zip(body, body[1:]):
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def option_specs(name: str, options: type) -> list[OptionSpec]:
    """The options of strategy `name` (its Options dataclass), in field order."""
    if not dataclasses.is_dataclass(options):
        raise LionsimError(f"strategy {name!r}: Options must be a dataclass (lionsim.strategies.core.form.option fields)")
    hints = typing.get_type_hints(options)
    docs = field_docs(options)
    specs = []
    for f in dataclasses.fields(options):
        rule = f.metadata.get(META)
        if rule is None:
            raise LionsimError(f"strategy {name!r}: option {f.name!r} needs option(default, accepted=..., check=...)")
        kind = hints.get(f.name)
        if kind not in (int, float, str, bool):
            raise LionsimError(f"strategy {name!r}: option {f.name!r} is typed {kind!r}; accepted: int, float, str, bool")
        flag = rule.flag or f"--{name}-{f.name}".replace("_", "-")
        specs.append(OptionSpec(name, f.name, flag, kind, f.default, rule, docs.get(f.name, rule.says)))
    return specs


def option_spec(name: str, options: type, field: str) -> OptionSpec:
    """The option `field` of strategy `name` (option_specs' entry for it)."""
    return next(s for s in option_specs(name, options) if s.field == field)


def parse_opt(items: Iterable[str]) -> dict[str, str]:
    """`--opt NAME.FIELD=VALUE` (repeatable) -> {"NAME.FIELD": "VALUE"} (checked by check_given)."""
    out = {}
    for item in items:
        key, eq, value = str(item).partition("=")
        name, dot, field = key.strip().rpartition(".")
        if not eq or not dot or not name or not field:
            raise LionsimError(f"bad --opt {item!r}; accepted: NAME.FIELD=VALUE, e.g. demo.topk=16 "
                               "(`lionsim strategies --matrix` lists each strategy's options)")
        out[f"{name}.{field}"] = value.strip()
    return out


def resolve_options(cls: type, name: str, given: Mapping[str, object], tuned: Mapping[str, object]):
    """Strategy `name`'s Options for a run: each field from `given` by `NAME.FIELD`, else by its
    flag's key, else `tuned` (its measured overrides for the workload), else its default; each checked."""
    values = {}
    for spec in option_specs(name, cls.Options):
        if spec.qualified in given:
            values[spec.field] = spec.value(given[spec.qualified], opt=True)
        elif given.get(spec.key) is not None:
            values[spec.field] = spec.value(given[spec.key])
        else:
            values[spec.field] = spec.value(tuned.get(spec.field, spec.default))
    return cls.Options(**values)


def tuning_for(cls: type, workload: str | None) -> dict:
    """The measured overrides of a strategy for `workload` (its module's `tuning`), {} if none."""
    return dict(getattr(cls, "tuning", {}).get(workload or "", {}))
