"""`<git dir>/loa-mem/open-errors.json`: the command keys of captured errors not yet fixed.

Derived from the error entries (`capture.command_key` without `capture.fixed_at`) and rewritten
after every capture that reaches the store. The hook's shortcut reads it with the standard
library alone: a successful command whose key is not in it has nothing to fix, so the hook exits
before typer, YAML or the store are imported. A missing file means "unknown": the full path runs
and writes it again.
"""

from __future__ import annotations

import json
import os

FILE = "open-errors.json"


def path(cache_dir: str) -> str:
    return os.path.join(cache_dir, FILE)


def read(cache_dir: str) -> dict[str, list[str]] | None:
    """Command key -> ids of its open errors; None when the file is missing or unreadable."""
    try:
        with open(path(cache_dir), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write(cache_dir: str, open_errors: dict[str, list[str]]) -> None:
    os.makedirs(cache_dir, exist_ok=True)
    target = path(cache_dir)
    temporary = f"{target}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(open_errors, handle, sort_keys=True)
    os.replace(temporary, target)
