"""What the working set adds to validate and commit (see `core.features`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.validate import Problem


def check(store: Store, paths: list[str] | None,
          counted: dict[str, int]) -> Iterable[Problem]:
    from loa_mem.workingset.check import check as do_check

    return do_check(store, paths, counted)


def managed_dirs(store: Store) -> list[str]:
    from loa_mem.workingset.manifests import SIDECAR_SUFFIX, settings

    s = settings(store)
    return [s.dir, s.summaries_dir, s.archive_dir, "*" + SIDECAR_SUFFIX]
