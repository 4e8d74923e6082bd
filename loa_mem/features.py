"""The features built on the core store, and the hooks each may offer.

A feature is a module listed in `FEATURES` that defines any of:
- `add_commands(app: typer.Typer) -> None`: its CLI commands (keep module-level imports light);
- `check(store: Store, paths: list[str] | None, counted: dict[str, int])
  -> Iterable[validate.Problem]`: validate coverage; it may set in `counted` how many files of
  each kind it read (validate's summary says so);
- `on_init(store: Store) -> list[str]`: files it creates at `loa-mem init` (relative paths);
- `managed_dirs(store: Store) -> list[str]`: directories `loa-mem commit` picks pending work from.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

FEATURES: list[str] = [
    "loa_mem.cli.memory",
    "loa_mem.cli.integrations",
    "loa_mem.cli.integrations_context",
    "loa_mem.cli.working_set",
    "loa_mem.cli.agents",
    "loa_mem.cli.trust",
    "loa_mem.cli.people",
    "loa_mem.report.cli",
]


def modules() -> Iterator[ModuleType]:
    for name in FEATURES:
        yield importlib.import_module(name)


def hooks(name: str) -> Iterator[object]:
    for module in modules():
        hook = getattr(module, name, None)
        if hook is not None:
            yield hook
