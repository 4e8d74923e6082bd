"""What the trust memory adds to validate (see `core.features`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.validate import Problem


def check(store: Store, paths: list[str] | None,
          counted: dict[str, int]) -> Iterable[Problem]:
    # nothing to count: the trust block is part of the agent sidecars the agents feature counts
    from loa_mem.trust.check import check as do_check

    return do_check(store, paths)
