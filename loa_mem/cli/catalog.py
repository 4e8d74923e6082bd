"""Which module holds each top-level command, and its one-line help, without importing them.

`catalog.json` is generated from `COMMAND_MODULES` (`python -m loa_mem.cli.catalog`) and a
test fails when it drifts. A command missing from it is still found, by importing every command
module.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_CATALOG = Path(__file__).with_name("catalog.json")

# each defines `add_commands(app: typer.Typer) -> None` (keep its module-level imports light)
COMMAND_MODULES: list[str] = [
    "loa_mem.cli.report",
    "loa_mem.cli.memory",
    "loa_mem.cli.integrations",
    "loa_mem.cli.integrations_context",
    "loa_mem.cli.working_set",
    "loa_mem.cli.agents",
    "loa_mem.cli.trust",
    "loa_mem.cli.people",
    "loa_mem.cli.capture",
    "loa_mem.cli.oracle",
]


@cache
def _entries() -> dict[str, dict[str, str]]:
    try:
        loaded: dict[str, dict[str, str]] = json.loads(_CATALOG.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded


def names() -> list[str]:
    return list(_entries())


def short_help(name: str) -> str:
    entry = _entries().get(name)
    if entry:
        return entry["help"]
    command = build(name)
    return command.get_short_help_str(limit=80) if command is not None else ""


def _command_name(info: Any) -> str:
    if info.name:
        return str(info.name)
    return str(info.callback.__name__).lower().replace("_", "-")


def _group_name(info: Any) -> str:
    return str(info.name or info.typer_instance.info.name)


def _apps(module_names: list[str]) -> list[tuple[str, Any]]:
    import importlib

    import typer

    built = []
    for module_name in module_names:
        module = importlib.import_module(module_name)
        add_commands = getattr(module, "add_commands", None)
        if add_commands is None:
            continue
        app = typer.Typer(rich_markup_mode=None)
        add_commands(app)
        built.append((module_name, app))
    return built


def build(name: str) -> Any:
    """The click command for `name`, built alone; None when no feature has it."""
    entry = _entries().get(name)
    modules = [entry["module"]] if entry else list(COMMAND_MODULES)
    for _, app in _apps(modules):
        commands = [c for c in app.registered_commands if _command_name(c) == name]
        groups = [g for g in app.registered_groups if _group_name(g) == name]
        if commands or groups:
            import typer.main

            app.registered_commands, app.registered_groups = commands, groups
            return typer.main.get_group(app).commands.get(name)
    return None


def generate() -> dict[str, dict[str, str]]:
    import typer.main

    catalog: dict[str, dict[str, str]] = {}
    for module_name, app in _apps(list(COMMAND_MODULES)):
        for name, command in typer.main.get_group(app).commands.items():
            catalog[name] = {"module": module_name, "help": command.get_short_help_str(limit=80)}
    return catalog


if __name__ == "__main__":
    _CATALOG.write_text(json.dumps(generate(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {_CATALOG}")
