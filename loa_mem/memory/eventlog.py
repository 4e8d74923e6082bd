"""The events log across its files, as the index reads it.

The log is `events.jsonl` until that holds `layout.LIMIT` bytes, then one file per month
(`events/2026-11.jsonl`, then `2026-11.2.jsonl`, ...), by the rule grimoire files follow (see
`layout`). Read in order (the single file, then the months, oldest first) they are one log.
The index keeps, per file, how far it has read (offset and the last characters read), so a
command reads only the lines appended since; a file that shrank, changed before that offset or
vanished makes it read every file again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.core import events as events_mod

if TYPE_CHECKING:
    from loa_mem.memory.index import Index


def read_all(top: str, logs: list[str]) -> list[dict[str, Any]]:
    """Every event of every file of the log, in order."""
    found: list[dict[str, Any]] = []
    for rel in logs:
        found += events_mod.read_all(_path(top, rel))
    return found


def refresh(index: Index, top: str, logs: list[str]) -> None:
    """Bring the index's forgotten ids up to date with the log's files."""
    reads = []
    rewound = bool(index.event_paths() - set(logs))
    for rel in logs:
        size = _size(top, rel)
        offset, tail = index.events_state(rel)
        if size == offset:
            continue
        start = offset if offset and size > offset and _tail_matches(top, rel, offset,
                                                                      tail) else 0
        rewound = rewound or (offset > 0 and start == 0)
        reads.append((rel, start, size))
    if rewound:
        reads = [(rel, 0, _size(top, rel)) for rel in logs]
    if not reads:
        return
    index.begin()
    try:
        if rewound:
            index.reset_events()
        for rel, start, size in reads:
            fresh = _read(top, rel, start, size)
            ingest(index, events_mod.parse_lines(fresh))
            index.set_events_state(rel, size, fresh[-64:])
        index.commit()
    except BaseException:
        index.rollback()
        raise


def ingest(index: Index, new_events: list[dict[str, Any]]) -> None:
    for event in new_events:
        ids = [i for i in event.get("ids") or [] if isinstance(i, str)]
        if event.get("op") == "forget":
            for memory_id in ids:
                index.set_forgotten(memory_id, True)
        elif event.get("op") == "restore":
            for memory_id in ids:
                index.set_forgotten(memory_id, False)


def _path(top: str, rel: str) -> Path:
    return Path(top) / rel


def _size(top: str, rel: str) -> int:
    try:
        return os.stat(os.path.join(top, rel)).st_size
    except FileNotFoundError:
        return 0


def _tail_matches(top: str, rel: str, offset: int, tail: str) -> bool:
    raw = tail.encode()
    with open(os.path.join(top, rel), "rb") as handle:
        handle.seek(max(0, offset - len(raw)))
        return handle.read(len(raw)).decode("utf-8", "replace") == tail


def _read(top: str, rel: str, start: int, size: int) -> str:
    if not size:
        return ""
    with open(os.path.join(top, rel), "rb") as handle:
        handle.seek(start)
        return handle.read(size - start).decode("utf-8", "replace")
