"""JSON schemas shipped with the package: entries, config, and the files later features add."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


@cache
def load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(text(name))
    return loaded
