"""Strategy options as given to a command, read against the registry: the flags every
registered strategy's Options make (plug-ins included), the check that each given option is
valid and read by some run, and the flat form run.json and sweep.json record them in."""

from __future__ import annotations

from typing import Mapping

from lionsim.errors import LionsimError
from lionsim.registry import did_you_mean
from lionsim.strategies.core.base import STRATEGIES
from lionsim.strategies.core.form import OptionSpec, option_specs, parse_opt


def registered_specs() -> list[OptionSpec]:
    """Every option of every registered strategy (plug-ins included), in listing order."""
    return [spec for name, cls in STRATEGIES.items() for spec in option_specs(name, cls.Options)]


def flags() -> dict[str, list[OptionSpec]]:
    """Config key (`demo_topk`) -> the options that flag sets (one flag may serve several
    strategies: `--local-steps` sets localsgd's and every diloco's)."""
    out: dict[str, list[OptionSpec]] = {}
    for spec in registered_specs():
        out.setdefault(spec.key, []).append(spec)
    return out


def check_flags(specs: list[OptionSpec]) -> None:
    """Strategies sharing a flag must agree on its type (one CLI option serves them all)."""
    seen: dict[str, OptionSpec] = {}
    for spec in specs:
        first = seen.setdefault(spec.key, spec)
        if first.type is not spec.type:
            raise LionsimError(f"strategy {spec.strategy!r}: {spec.flag} is {spec.type.__name__} but "
                               f"{first.strategy!r} declares it {first.type.__name__}; choose another flag")


def named_specs(key: str) -> tuple[str, str, dict[str, OptionSpec]]:
    """`--opt NAME.FIELD`'s key as (the strategy's registered name, FIELD, its options by field); an
    unknown strategy is the registry's one line."""
    name, _, field = key.rpartition(".")
    cls = STRATEGIES.get(name)
    name = STRATEGIES.canonical(name)
    return name, field, {s.field: s for s in option_specs(name, cls.Options)}


def canonical_opts(given: Mapping[str, object]) -> dict[str, object]:
    """`given` with each `NAME.FIELD` key's strategy in its registered spelling (`DiLoCo.local_steps`
    -> `diloco.local_steps`): the registry takes a name in any case, and a run reads its options by
    that key (resolve_options), so another spelling was accepted and then did nothing. An unknown
    name is kept as given, for check_given's one line."""
    out: dict[str, object] = {}
    for key, value in given.items():
        name, dot, field = key.rpartition(".")
        out[f"{STRATEGIES.canonical(name)}.{field}" if dot and name in STRATEGIES else key] = value
    return out


def check_given(given: Mapping[str, object], run_strategies: list[str]) -> None:
    """Every option given (by flag key or `NAME.FIELD`) names an option of a registered strategy,
    is valid, and is read by at least one of the runs (`run_strategies`, registered names)."""
    by_key = flags()
    for key, value in given.items():
        if value is None:
            continue
        if "." in key:
            strategy = key.rpartition(".")[0]
            if strategy not in STRATEGIES:  # the option as typed, as its other refusals name it
                names = STRATEGIES.names()
                raise LionsimError(f"bad --opt {key}={value}: unknown strategy {strategy!r}; accepted: "
                                   f"{', '.join(names)}{did_you_mean(strategy, names)}")
            name, field, specs = named_specs(key)
            if field not in specs:
                raise LionsimError(f"bad --opt {key}={value}: {name} has no option {field!r}; accepted: "
                                   f"{', '.join(specs) or 'none (it takes no options)'}{did_you_mean(field, specs)}")
            spec = specs[field]
            value_opt = spec.value(value, opt=True)
            flag_value = given.get(spec.key)
            # the strategy's own flag beside it: --opt would win silently. A flag several strategies share
            # (--local-steps) is no conflict: --opt then sets one of them and the flag the others.
            if flag_value is not None and len(by_key[spec.key]) == 1 and spec.value(flag_value) != value_opt:
                raise LionsimError(f"bad --opt {key}={value}: {spec.flag} {flag_value} sets the same option; "
                                   f"accepted: one of the two, or both with one value")
            if name not in run_strategies:
                raise LionsimError(f"--opt {key}={value} applies to {name} and no run is one")
            continue
        if key not in by_key:
            raise LionsimError(f"unknown strategy option {key!r}; accepted: {', '.join(sorted(by_key))}")
        specs = by_key[key]
        specs[0].value(value)
        if not any(s.strategy in run_strategies for s in specs):
            raise LionsimError(f"{specs[0].flag} {value} applies to {', '.join(s.strategy for s in specs)} "
                               "and no run is one of them")


def unread_options(record: Mapping[str, object], runs: list[str]) -> list[str]:
    """The strategy option keys of a flat record (a run.json's config) that none of `runs`
    (NAME or NAME@TRANSPORT) reads: a replay leaves them out (older lionsim recorded the
    defaults of options like freeze_steps whatever the runs)."""
    names = [STRATEGIES.canonical(str(r).split("@")[0]) for r in runs if str(r).split("@")[0] in STRATEGIES]
    return [key for key, specs in flags().items() if key in record and not any(s.strategy in names for s in specs)]


def options_for(given: Mapping[str, object], strategy: str) -> dict[str, object]:
    """The options in `given` that strategy `strategy` reads (a sweep cell, a run's config)."""
    specs = option_specs(strategy, STRATEGIES.get(strategy).Options)
    keys = {s.key for s in specs} | {s.qualified for s in specs}
    return {k: v for k, v in given.items() if k in keys}


def flat_options(given: Mapping[str, object], foreign: frozenset[str] = frozenset()) -> dict[str, object]:
    """Options as run.json and sweep.json record them: every flag key (None: not given) but those
    only `foreign` strategies read (a plug-in another command loaded earlier in this process, which
    a replay in a fresh process would not know: lionsim.plugins.foreign_strategies), then `opt`,
    the `NAME.FIELD=VALUE` ones."""
    flat: dict[str, object] = {key: given.get(key) for key, specs in flags().items()
                               if key in given or any(s.strategy not in foreign for s in specs)}
    flat["opt"] = [f"{k}={v}" for k, v in given.items() if "." in k]
    return flat


def split_options(d: Mapping[str, object]) -> tuple[dict, dict]:
    """A flat record (flat_options's form beside other options) -> (the other options, the options)."""
    keys = flags()
    plain = {k: v for k, v in d.items() if k not in keys and k != "opt"}
    options = {k: v for k, v in d.items() if k in keys and v is not None}
    options.update(parse_opt(d.get("opt") or []))
    return plain, canonical_opts(options)
