"""A journal of loa-mem's own writes to the grimoire files, for the caches derived from them.

`<git dir>/loa-mem/writes.log` (outside git, derived, safe to delete): one JSON line per
transaction that wrote grimoire files,

    {"files": {PATH: [SIGNATURE_BEFORE | null, SIGNATURE_AFTER | null]},
     "added": [ID, ...], "only_added": true | false}

where a signature is [mtime_ns, size] and `only_added` says that the transaction did nothing
to those files but append the `added` entries. A cache that recorded a file's signature can
follow the records from it to the file's signature now and learn whether loa-mem alone changed
the file since, and how (the session-start shortlist takes the added entries in rather than
ranking every entry again). A change made outside loa-mem breaks the chain, and so does an
emptied journal (it is emptied when it passes `LIMIT` bytes): a cache then rebuilds as before.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

JOURNAL = "writes.log"
LIMIT = 256 * 1024


def note(cache_dir: Path, files: dict[str, list[Any]], added: list[str],
         only_added: bool) -> None:
    """Append one transaction's record. Never fails the write it follows: a journal that
    cannot be written only makes the caches rebuild."""
    path = cache_dir / JOURNAL
    line = json.dumps({"files": files, "added": added, "only_added": only_added},
                      separators=(",", ":")) + "\n"
    with contextlib.suppress(OSError):
        if path.exists() and path.stat().st_size > LIMIT:
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)


def read(cache_dir: Path) -> list[dict[str, Any]]:
    """The records, oldest first (a torn or foreign line is skipped)."""
    try:
        text = (cache_dir / JOURNAL).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    records = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and isinstance(record.get("files"), dict):
                records.append(record)
    return records


def added_since(cache_dir: Path, recorded: dict[str, Any], now: dict[str, Any]
                ) -> list[str] | None:
    """The entries loa-mem added to the files whose signature went from `recorded` to `now`
    (path -> signature), when appending them is all that happened to those files; else None.
    Files whose signature did not change are taken as unchanged."""
    changed = {path for path, signature in now.items() if recorded.get(path) != signature}
    at = {path: recorded.get(path) for path in changed}
    added: list[str] = []
    for record in read(cache_dir):
        touched = {p: s for p, s in record["files"].items() if p in changed}
        if not touched:
            continue
        if any(at[p] != s[0] for p, s in touched.items()):
            continue  # a record from before the cache was made, or of another chain
        if record.get("only_added") is not True:
            return None
        for p, s in touched.items():
            at[p] = s[1]
        added.extend(str(i) for i in record.get("added") or [])
    return added if all(at[p] == now[p] for p in changed) else None
