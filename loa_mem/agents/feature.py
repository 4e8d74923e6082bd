"""What agent sidecars add to validate and commit (see `core.features`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.validate import Problem


def check(store: Store, paths: list[str] | None,
          counted: dict[str, int]) -> Iterable[Problem]:
    from loa_mem.agents.check import check as do_check

    return do_check(store, paths, counted)


def managed_dirs(store: Store) -> list[str]:
    from loa_mem.agents.sidecars import agents_dir, state_index_rel

    return [agents_dir(store), state_index_rel(store)]
