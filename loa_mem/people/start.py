"""What a person's session starts with, and session records kept for later when a save failed.

The preference document: "STORAGE FAILURE — retry once after 2 seconds; if still fails log error
and continue; memory will be attempted again next session". A session record whose save failed
twice (`writing` retries once) goes to `pending-sessions.json` in the person's own folder
(private, never committed, never in a project); the next session start (`loa-mem context`,
`pref context`, `pref session load`) stores it, in one commit, before it reads. A pending record
is the person's data like any other: `pref forget` and `pref clear --sessions` remove it too.
"""

from __future__ import annotations

import os

from loa_mem.core.errors import LoaMemError
from loa_mem.people import home as people

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib are not imported at run time: the hook's import budget
    from typing import Any

PENDING_FILE = "pending-sessions.json"


def _path(folder: str) -> str:
    return os.path.join(folder, PENDING_FILE)


def read_pending(folder: str) -> list[dict[str, Any]]:
    import json  # only when a pending file exists: the hook must not import it otherwise

    try:
        with open(_path(folder), encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return []
    records = data.get("records") if isinstance(data, dict) else None
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def write_pending(folder: str, records: list[dict[str, Any]]) -> None:
    import contextlib
    import json
    from pathlib import Path

    from loa_mem.core.filewrite import atomic_write

    if not records:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_path(folder))
        return
    with people.Private():
        atomic_write(Path(_path(folder)), json.dumps({"format": people.FORMAT, "records": records},
                                                     ensure_ascii=False, indent=2) + "\n",
                     new_mode=0o600)


def keep_pending(folder: str, record: dict[str, Any]) -> None:
    write_pending(folder, [*read_pending(folder), record])


def retry_pending(user: str | None) -> int:
    """Store the pending session records of `user` (how many); 0 when there are none or the
    store still fails (logged; they stay pending)."""
    try:
        name = people.resolve_user(user)
        folder = people.user_dir(name)
    except (LoaMemError, OSError):
        return 0
    if not os.path.exists(_path(folder)):
        return 0
    pending = read_pending(folder)
    if not pending:
        return 0
    from loa_mem.people import writing

    try:
        with writing.writing(name, "pref session retry") as change:
            change.records.extend(r for r in pending if r not in change.records)
            change.keys = sorted({str(r.get("key")) for r in pending})
            change.what = f"{len(pending)} pending session record(s)"
    except (LoaMemError, OSError):  # logged by `writing`; they stay pending
        return 0
    write_pending(folder, [r for r in read_pending(folder) if r not in pending])
    return len(pending)


def context_lines(user: str | None, email_cache: str | None = None) -> list[str]:
    """`home.context_lines` after the pending records are stored. The user is resolved once:
    resolving from git's user.email costs a process unless `email_cache` (a file in the
    project's loa-mem cache) still vouches for the answer, and this runs in every session
    start."""
    try:  # noqa: SIM105 - contextlib (and what it imports) is not for the hook
        user = people.resolve_user(user, email_cache)
    except (LoaMemError, OSError):  # home.context_lines says it its own way
        pass
    retry_pending(user)
    return people.context_lines(user)
