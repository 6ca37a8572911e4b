"""Plug-ins: strategies and transports defined outside lionsim, first-class once loaded.

A plug-in registers its classes exactly as the built-ins do (`@STRATEGIES.register(NAME)`,
`@TRANSPORTS.register(NAME)`), when it is imported:

- `--plugin FILE.py` (repeatable; an option only of the commands that run or list strategies and
  transports, lionsim.cli.preload.takes_plugin) imports the file as a module of its own;
- an installed package announces a module (or an object in one) under the entry point groups
  `lionsim.strategies` and `lionsim.transports`, imported the first time either registry is
  read (lionsim.entry_points, called by lionsim.registry.Registry).

Both go through the one load check (`import_checked`) before anything reads what they registered.

A bench records the files it loaded (BenchConfig.plugins, run.json), so its gloo ranks, its
sweep cells, `--resume`, `--config run.json` and `estimate --from-run` (lionsim.run_plugins) load
them again. Whatever goes wrong is one
line naming the file (or the entry point and its module): a missing file, an import that raises, a class missing what lionsim
needs, a name a built-in (or another plug-in) already has, a bad option declaration.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from typing import Callable

from lionsim import entry_points
from lionsim.errors import LionsimError, a_type

LOADED: dict[str, tuple[str, dict[str, list[str]]]] = {}
"""Resolved file path -> (the module name it was imported as, what it registered: names by registry
kind); each file is imported once."""


def _registries() -> dict:
    """Every registry a plug-in may add to, by kind: what it registers there is checked, and
    forgotten if the file fails (and by unload_plugin)."""
    from lionsim.strategies import STRATEGIES
    from lionsim.strategies.core.inner import INNER_OPTIMIZERS
    from lionsim.transports import PAYLOAD_KINDS, TRANSPORTS

    return {r.kind: r for r in (PAYLOAD_KINDS, INNER_OPTIMIZERS, TRANSPORTS, STRATEGIES)}


PLUGIN_FILES = "a Python file (FILE.py) defining strategies or transports"
"""What --plugin reads, in its refusals."""


def load_plugins(paths) -> list[str]:
    """Import every plug-in file in `paths` (once each); their resolved paths, in order."""
    return [load_plugin(p) for p in paths or []]


def load_plugin(path) -> str:
    """Import one plug-in file and check what it registered; its resolved path."""
    given = Path(path)
    if given.is_dir():
        raise LionsimError(f"bad --plugin {path}: it is a folder; accepted: {PLUGIN_FILES}")
    if not given.is_file() and (near := _near_files(given)):  # a typo, or the extension left off
        raise LionsimError(f"bad --plugin {path}: no such file; accepted: {PLUGIN_FILES}; did you mean "
                           f"{' or '.join(str(given.with_name(n)) for n in near)}?")
    if given.suffix != ".py":
        raise LionsimError(f"bad --plugin {path}; accepted: {PLUGIN_FILES}")
    if not given.is_file():
        raise LionsimError(f"bad --plugin {path}: no such file; accepted: {PLUGIN_FILES}")
    key = str(given.resolve())
    if key in LOADED:
        return key
    name = f"lionsim_plugin_{given.stem}_{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, given)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        added = import_checked(lambda: spec.loader.exec_module(module), file=True)
    except BaseException as e:  # noqa: BLE001 -- any failure of the user's file is one line
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        from lionsim.plugin_load import exit_hint

        raise LionsimError(f"plugin {path}: {why(e, given)}{exit_hint(e)}") from None
    LOADED[key] = (name, added)
    return key


def _near_files(given: Path) -> list[str]:
    """The names of the .py files beside a missing `given` nearest its name (the registries'
    rule: lionsim.registry.nearest), `mine/sign_scale.py` for `mine/sign_scal.py`; the name with
    .py added where that file is there (`mine/sign_scale`); [] where none is near, or no folder."""
    from lionsim.registry import nearest

    if given.suffix != ".py" and given.with_name(given.name + ".py").is_file():
        return [given.name + ".py"]
    try:
        files = sorted(p.name for p in given.parent.glob("*.py") if p.is_file())
    except OSError:
        return []
    stems = {Path(name).stem: name for name in files}
    return [stems[s] for s in nearest(given.stem if given.suffix == ".py" else given.name, stems)]


def import_checked(load: Callable[[], object], file: bool = False) -> dict[str, list[str]]:
    """Import a plug-in with `load` and check what it registered (the load check of `--plugin
    FILE.py` and of an installed entry point alike); what it registered, names by registry kind.
    On any failure nothing it registered stays, and the error goes on to the caller, who names
    the plug-in. A file (`file`) must register something; an entry point may name a module that
    another entry point (of the other group, say) imported already, so it need not."""
    registries = _registries()
    before = {kind: set(r.names()) for kind, r in registries.items()}
    try:
        load()
        added = {kind: [n for n in r.names() if n not in before[kind]] for kind, r in registries.items()}
        if file and not any(added.values()):
            raise LionsimError("it registers no strategy or transport (decorate a class with "
                               "@STRATEGIES.register(NAME) or @TRANSPORTS.register(NAME)), payload kind "
                               "or inner optimizer")
        for k in added["payload kind"]:
            check_kind(k, registries["payload kind"].get(k))
        for t in added["transport"]:
            check_transport(t, registries["transport"].get(t))
        for s in added["strategy"]:
            check_strategy(s, registries["strategy"].get(s))
    except BaseException:
        for kind, r in registries.items():
            r.forget(set(r.names()) - before[kind])
        raise
    return added


def load_entry_point(ep, group: str) -> None:
    """Import an installed plug-in, entry point `ep` of `group`, and check it as a file is; one
    that fails is one line naming it (its name, its module), and nothing it registered stays:
    the registry reads it again next time (lionsim.registry)."""
    from lionsim.plugin_load import exit_hint

    fresh = ep.module not in sys.modules
    try:
        import_checked(ep.load)
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- an installed plug-in that fails is one line naming it
        if fresh:  # imported again at the next read, to register (and be refused) again
            sys.modules.pop(ep.module, None)
        raise LionsimError(f"plugin {ep.value} (entry point {ep.name!r} of {group}): {why(e)}{exit_hint(e)}") from None


entry_points.LOAD[0] = load_entry_point


def unload_plugin(key: str) -> None:
    """Forget what a loaded plug-in file registered (a test's clean-up; its flags go at the next
    lionsim.cli.strategy_flags.refresh)."""
    name, added = LOADED.pop(str(Path(key).resolve()))
    for kind, r in _registries().items():
        r.forget(added.get(kind, []))
    sys.modules.pop(name, None)


def unload_since(before: set) -> list[str]:
    """Unload every plug-in file loaded since `before` (a set of LOADED's keys) and return their keys:
    a command's, as it ends, or those a failed start loaded (their flags go at the next
    lionsim.cli.strategy_flags.refresh)."""
    gone = [key for key in LOADED if key not in before]
    for key in gone:
        unload_plugin(key)
    return gone


def why(e: BaseException, path: Path | None = None) -> str:
    """One line: a LionsimError's message, else the exception (and the line of the plug-in file
    `path` that raised it)."""
    if isinstance(e, LionsimError):
        return str(e)
    if isinstance(e, KeyError) and "registered twice" in str(e):
        return f"{str(e).strip(chr(34) + chr(39))}: a built-in or another plug-in has that name; choose another"
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if path is not None and Path(f.filename).resolve() == path.resolve()]
    where = f" (line {frames[-1].lineno})" if frames else ""
    if isinstance(e, SyntaxError):  # its own text says the file and the line already
        where = "" if e.lineno is None or f"line {e.lineno}" in str(e) else f" (line {e.lineno})"
    return f"importing it raised {type(e).__name__}: {e}{where}"


def check_strategy(name: str, cls) -> None:
    """What a registered strategy class must declare, checked when its plug-in loads."""
    from lionsim.strategies.core.base import Hyper, Strategy, StrategyConfig
    from lionsim.strategies.core.form import option_specs
    from lionsim.strategies.core.given import check_flags, registered_specs
    from lionsim.transports import PAYLOAD_KINDS, SCHEDULES, TRANSPORTS
    from lionsim.transports.base import AFTER_BACKWARD

    if not (inspect.isclass(cls) and issubclass(cls, Strategy)):
        raise LionsimError(f"strategy {name!r} is not a subclass of lionsim.strategies.Strategy")
    missing = [m for m in ("name", "summary", "payload_kind", "default_transport", "defaults") if not hasattr(cls, m)]
    if missing:
        raise LionsimError(f"strategy {name!r} lacks {', '.join(missing)}; a strategy declares name, summary, "
                           "payload_kind, default_transport and defaults (a Hyper)")
    if inspect.isabstract(cls):
        raise LionsimError(f"strategy {name!r} does not implement {', '.join(sorted(cls.__abstractmethods__))}")
    if cls.name != name:
        raise LionsimError(f"strategy registered as {name!r} says name = {cls.name!r}; they must be the same")
    if not isinstance(cls.defaults, Hyper):
        raise LionsimError(f"strategy {name!r}: defaults must be a lionsim.strategies.core.base.Hyper")
    if cls.payload_kind not in PAYLOAD_KINDS:
        raise LionsimError(f"strategy {name!r}: payload_kind {cls.payload_kind!r}; accepted: {', '.join(PAYLOAD_KINDS)} "
                           "(or a kind the file registers in lionsim.transports.PAYLOAD_KINDS)")
    if cls.schedule not in SCHEDULES:
        raise LionsimError(f"strategy {name!r}: schedule {cls.schedule!r}; accepted: {', '.join(SCHEDULES)} "
                           "(when its reference implementation exchanges)")
    if cls.after_step and cls.schedule != AFTER_BACKWARD:
        raise LionsimError(f"strategy {name!r}: after_step exchanges only after backward; its schedule must be "
                           f"{AFTER_BACKWARD!r}, not {cls.schedule!r}")
    shared = [f.name for f in dataclasses.fields(StrategyConfig)]
    unknown = [r for r in cls.reads if r not in shared] if isinstance(cls.reads, tuple) else [cls.reads]
    if unknown:
        raise LionsimError(f"strategy {name!r}: reads {', '.join(map(repr, unknown))}; accepted: a tuple of "
                           f"StrategyConfig fields: {', '.join(shared)}")
    if "momentum_sync" in cls.reads and not cls.has_momentum_sync:  # reads alone would sync nothing
        raise LionsimError(f"strategy {name!r}: reads 'momentum_sync', which a strategy takes by subclassing "
                           "lionsim.strategies.core.momentum_sync.MomentumSyncing (its per-worker momentum in "
                           "self.exp_avg [w, P]: the sync averages it and prices its all-reduce), not by reads")
    transport = TRANSPORTS.get(cls.default_transport)
    if cls.payload_kind not in transport.carries:
        raise LionsimError(f"strategy {name!r}: its default transport {cls.default_transport} carries "
                           f"{', '.join(transport.carries)}, not {cls.payload_kind}")
    for spec in option_specs(name, cls.Options):
        spec.value(spec.default)  # a default its own check refuses is a bug of the declaration
    check_flags(registered_specs())
    check_specs(name, cls)


def plugin_digests(paths) -> dict[str, str]:
    """Each plug-in file's SHA-256 (the first 16 hex digits), by its resolved path: a sweep records
    them, so that a rerun after the file was edited does not take the cells the earlier code trained
    for this code's (lionsim.sweep.plan.check_resume). A file that is not there is left out."""
    digests = {}
    for path in paths:
        given = Path(path)
        if given.is_file():
            digests[str(given.resolve())] = hashlib.sha256(given.read_bytes()).hexdigest()[:16]
    return digests


STAND_IN = [("weight", (4, 3)), ("bias", (4,))]
"""The tensors check_specs builds a strategy on: two, small, as a model's layer."""
STAND_IN_WORKERS = 3
"""Workers check_specs builds a strategy for (odd: a majority vote needs no tie rule)."""


def check_specs(name: str, cls) -> None:
    """Where its payload kind asks something of a spec (votes: the rule that combines them; sparse:
    its k, at its own size and at the size estimate prices: spec_scaled, or spec_for its shapes), build
    the strategy as `lionsim strategies` and `estimate` do, with its defaults (on STAND_IN, for
    STAND_IN_WORKERS workers), and hold what it says it sends to that: the payload every command
    prices and every transport reads, refused here rather than deep in a transport's plan."""
    import torch

    from lionsim.backends import SimComm
    from lionsim.strategies.core.base import StrategyConfig
    from lionsim.strategies.core.layout import ParamLayout
    from lionsim.transports import PAYLOAD_KINDS, PayloadSpec, spec_problem

    if PAYLOAD_KINDS.get(cls.payload_kind).lacks is None:
        return
    layout = ParamLayout.of([(n, torch.zeros(shape)) for n, shape in STAND_IN])
    numel = 10 * layout.numel  # a model ten times the stand-in, as estimate --params scales it
    try:
        strategy = cls(StrategyConfig(), layout, SimComm(STAND_IN_WORKERS))
        shapes = [shape for _, shape in STAND_IN]
        specs = {"payload_spec()": strategy.payload_spec(),  # a shape-dependent one is priced by its shapes
                 **({f"spec_for({shapes})": strategy.spec_for(shapes)} if strategy.shape_dependent else
                    {f"spec_scaled({numel}, {len(STAND_IN)})": strategy.spec_scaled(numel, len(STAND_IN))})}
    except LionsimError:
        raise
    except Exception as e:  # noqa: BLE001 -- the plug-in's own code: one line, with its line
        source = inspect.getsourcefile(cls)
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == source]
        where = f" (line {lines[-1]})" if lines else ""
        raise LionsimError(f"strategy {name!r}: building it with its defaults for {STAND_IN_WORKERS} workers (as "
                           f"lionsim strategies does) raised {type(e).__name__}: {e}{where}") from None
    for call, spec in specs.items():
        if not isinstance(spec, PayloadSpec):
            raise LionsimError(f"strategy {name!r}: its {call} returns {a_type(spec)}; accepted: a "
                               "lionsim.transports.PayloadSpec")
        if problem := spec_problem(spec):
            raise LionsimError(f"strategy {name!r}: its {call} returns {problem}")


def check_transport(name: str, cls) -> None:
    """What a registered transport class must declare, checked when its plug-in loads."""
    from lionsim.compute.kernel_table import KERNELS
    from lionsim.transports import PAYLOAD_KINDS, SCHEDULES
    from lionsim.transports.base import AFTER_BACKWARD, Transport

    if not (inspect.isclass(cls) and issubclass(cls, Transport)):
        raise LionsimError(f"transport {name!r} is not a subclass of lionsim.transports.Transport")
    missing = [m for m in ("name", "carries", "summary") if not hasattr(cls, m)]
    if missing:
        raise LionsimError(f"transport {name!r} lacks {', '.join(missing)}; a transport declares name, carries, summary")
    if inspect.isabstract(cls):
        raise LionsimError(f"transport {name!r} does not implement {', '.join(sorted(cls.__abstractmethods__))}")
    if cls.name != name:
        raise LionsimError(f"transport registered as {name!r} says name = {cls.name!r}; they must be the same")
    unknown = [k for k in cls.carries if k not in PAYLOAD_KINDS]
    if unknown:
        raise LionsimError(f"transport {name!r} carries {', '.join(unknown)}; accepted payload kinds: "
                           f"{', '.join(PAYLOAD_KINDS)} (or a kind the file registers in lionsim.transports.PAYLOAD_KINDS)")
    overlap = cls.overlap
    if not (isinstance(overlap, frozenset) and AFTER_BACKWARD in overlap and overlap <= set(SCHEDULES)):
        raise LionsimError(f"transport {name!r}: overlap {overlap!r}; accepted: a frozenset of {', '.join(SCHEDULES)} "
                           f"holding {AFTER_BACKWARD!r} (every transport can run after backward)")
    kernels = cls.kernels
    if not (isinstance(kernels, tuple) and len(kernels) == 2 and all(isinstance(k, str) and k for k in kernels)):
        raise LionsimError(f"transport {name!r}: kernels {kernels!r}; accepted: (packing, unpacking) kernel names, "
                           f"e.g. {', '.join(KERNELS)} (a name the kernel table lacks is priced as float-pass)")


def check_kind(name: str, kind) -> None:
    """What a registered payload kind must declare, checked when its plug-in loads."""
    from lionsim.transports import PayloadKind

    if not isinstance(kind, PayloadKind):
        raise LionsimError(f"payload kind {name!r} is {a_type(kind)}, not a lionsim.transports.PayloadKind")
    if not (callable(kind.alone) and callable(kind.written)):
        raise LionsimError(f"payload kind {name!r}: alone and written must be functions (of a Payload, of a PayloadSpec)")


def foreign_strategies(plugins) -> frozenset[str]:
    """Strategies registered by plug-in files other than `plugins` (loaded by an earlier command in
    this process): a record of this command leaves their flags out (lionsim.strategies.core.given
    .flat_options), since a replay in a fresh process would not know them."""
    mine = {str(Path(p).resolve()) for p in plugins or []}
    return frozenset(name for key, (_, added) in LOADED.items() if key not in mine
                     for name in added.get("strategy", []))
