"""Plug-ins loaded before click reads the commands: the files `--plugin` names, on the command
line or in a --config file's `plugin` list, and those estimate's `--from-run DIR` was trained
with (lionsim.run_plugins), register their strategies before the strategy commands' signatures
are built, so the flags those strategies declare exist when click parses them
(lionsim.cli.strategy_flags). Only a command that takes --plugin loads any."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Sequence

import typer

from lionsim.cli.config_file import config_path, load_toml
from lionsim.cli.config_paths import rebased
from lionsim.errors import LionsimError


def takes_plugin(app: typer.Typer, command: str | None) -> bool:
    """Whether `app`'s command named takes --plugin: those that run or list strategies and transports
    (what a plug-in registers) declare it; comm, regress, networks, workloads and devices do not,
    so their --help does not list it. An unknown name counts as taking it (click refuses it next)."""
    commands = {(c.name or c.callback.__name__.replace("_", "-")): c.callback for c in app.registered_commands}
    if command in commands:
        return "plugin" in inspect.signature(commands[command]).parameters
    return True  # a group (sweep, whose run and merge both take it) or no such command


def preload_plugins(argv: Sequence[str], app: typer.Typer) -> None:
    """Load the plug-ins argv names (`--plugin`, a --config file's `plugin` list, --from-run's) before click
    reads the commands, so their strategies' flags exist (lionsim.cli.strategy_flags). A command
    that takes no --plugin loads none: click refuses the option there, before any file is imported."""
    from lionsim.cli.strategy_flags import refresh
    from lionsim.plugins import load_plugins

    command = next((a for a in argv if not a.startswith("-")), None)
    if not takes_plugin(app, command):
        return
    args, paths = list(argv), []
    for i, arg in enumerate(args):
        if arg == "--plugin" and i + 1 < len(args):
            paths.append(args[i + 1])
        elif arg.startswith("--plugin="):
            paths.append(arg.split("=", 1)[1])
    config = config_path(args)
    if config is not None and Path(config).is_file():  # a missing or bad file is config_defaults' to report
        from lionsim.run_plugins import given_wins

        paths += given_wins(_recorded_plugins(Path(config)), [Path(p).name for p in paths])  # typed --plugin wins
    from_run = _from_run(args) if command == "estimate" else None
    if paths or from_run is not None:
        from lionsim.plugins import LOADED, unload_since

        before = set(LOADED)
        load_plugins(paths)
        if from_run is not None and Path(from_run).is_dir():  # after --plugin: a moved file given there
            from lionsim.run_plugins import load_recorded

            load_recorded(from_run)
        try:
            refresh()
        except LionsimError:  # a flag no command can take: the plug-ins just loaded go again
            unload_since(before)
            refresh()
            raise


def _from_run(args: list[str]) -> str | None:
    """--from-run DIR's value on the command line (None: not given), whose trained runs' plug-ins
    load as the others do (lionsim.run_plugins)."""
    for i, arg in enumerate(args):
        if arg == "--from-run" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--from-run="):
            return arg.split("=", 1)[1]
    return None


def _recorded_plugins(path: Path) -> list:
    """The `plugin` list of a TOML --config or of a run.json's config ([] if it has none or is unreadable),
    read as lionsim.run_plugins reads every record's."""
    from lionsim.run_plugins import plugin_paths, recorded_in

    try:
        data = load_toml(path) if path.suffix.lower() != ".json" else json.loads(path.read_text(encoding="utf-8"))
    except (LionsimError, OSError, ValueError):
        return []
    if path.suffix.lower() == ".json":  # a run.json's paths stay as the run was given them
        return recorded_in(data, "config", "plugin")
    recorded = plugin_paths(data.get("plugin") if isinstance(data, dict) else None)
    return rebased({"plugin": recorded}, path)[0]["plugin"]  # a TOML's: from its folder, as config_defaults reads them
