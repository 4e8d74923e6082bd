"""`<git dir>/loa-mem/open-errors.json`: the command keys of captured errors not yet fixed.

Derived from the error entries (`capture.command_key` without `capture.fixed_at`) and rewritten
after every capture that reaches the store. The hook's shortcut reads it with the standard
library alone: a successful command whose key is not in it has nothing to fix, so the hook exits
before typer, YAML or the store are imported. The file also records the signature (mtime, size)
each live error file had when it was written: after a pull, a checkout or an editor changed one
(a teammate's open error may have arrived), the file no longer answers. A missing, unreadable or
outdated file means "unknown": the full path runs and writes it again.
"""

from __future__ import annotations

import json
import os

FILE = "open-errors.json"
FORMAT = 2
Signatures = dict[str, "list[int]"]  # error file (relative to the top) -> mtime, size


def path(cache_dir: str) -> str:
    return os.path.join(cache_dir, FILE)


def read(cache_dir: str) -> tuple[dict[str, list[str]], Signatures] | None:
    """Command key -> ids of its open errors, and the grimoire files' signatures they were
    derived from; None when the file is missing, unreadable or from an older loa-mem."""
    try:
        with open(path(cache_dir), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    known, files = data.get("open"), data.get("files")
    if not isinstance(known, dict) or not isinstance(files, dict):
        return None
    return known, files


def write(cache_dir: str, open_errors: dict[str, list[str]], files: Signatures) -> None:
    os.makedirs(cache_dir, exist_ok=True)
    target = path(cache_dir)
    temporary = f"{target}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"format": FORMAT, "open": open_errors, "files": files}, handle,
                  sort_keys=True)
    os.replace(temporary, target)
