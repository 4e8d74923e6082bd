"""JSON schemas shipped with the package: entries, config, and the files later features add."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any


def text(name: str) -> str:
    try:  # a package on disk, as installed (importlib.resources costs ~5 ms to import)
        with open(os.path.join(os.path.dirname(__file__), name), encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        from importlib import resources

        return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


@cache
def load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(text(name))
    return loaded
