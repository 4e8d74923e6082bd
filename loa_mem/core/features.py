"""Where the domains declare what the store-wide commands need from them.

`validate`, `init` and `commit` belong to the memory store but cover every domain's files. Each
domain that has files of its own lists a `feature` module here, by name, so that the core and
the memory store import no domain (and no CLI) to reach them. A feature module defines any of:
- `check(store: Store, paths: list[str] | None, counted: dict[str, int])
  -> Iterable[validate.Problem]`: its part of validate; it may set in `counted` how many files of
  each kind it read (validate's summary says so);
- `on_init(store: Store) -> list[str]`: files it creates at `loa-mem init` (relative paths);
- `managed_dirs(store: Store) -> list[str]`: directories `loa-mem commit` picks pending work from.

The CLI's commands are registered separately, by the CLI (`loa_mem.cli.catalog.COMMAND_MODULES`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

FEATURES: list[str] = [
    "loa_mem.integrations.feature",
    "loa_mem.workingset.feature",
    "loa_mem.agents.feature",
    "loa_mem.trust.feature",
]


def modules() -> Iterator[ModuleType]:
    for name in FEATURES:
        yield importlib.import_module(name)


def hooks(name: str) -> Iterator[object]:
    for module in modules():
        hook = getattr(module, name, None)
        if hook is not None:
            yield hook
