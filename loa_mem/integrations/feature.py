"""What the integrations add to `loa-mem init`: the merge driver's set-up (see `core.features`)."""

from __future__ import annotations

from typing import Any


def on_init(store: Any) -> list[str]:
    from loa_mem.integrations.merge_driver import register_driver

    return register_driver(store)
