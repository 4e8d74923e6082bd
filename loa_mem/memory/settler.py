"""The process that settles an index a large cold build left unsettled (see `coldbuild`;
`unsettled` starts it): it merges the full-text index and builds the lookup indexes.

It runs apart from the command that built the index, so that command answers without waiting;
it holds the build lock while it works, which is how other commands tell that the index is being
settled.
"""

from __future__ import annotations

import sys

from loa_mem.memory.indexrows import INDEXES
from loa_mem.memory.unsettled import LOCK, UNSETTLED

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

_WAIT_SECONDS = 120.0  # for a build or another settler that holds the lock


def settle(db: sqlite3.Connection) -> None:
    """Merge the full-text index into one segment and build the lookup indexes."""
    # one segment for the whole full-text index, out of the way of the first merges after a
    # few edits (which would otherwise rewrite it whole, leaving its old pages free in the
    # file); the lookup indexes built next take the pages it freed
    db.execute("INSERT INTO entry_text(entry_text) VALUES('optimize')")
    for statement in INDEXES.split(";"):
        if statement.strip():
            db.execute(statement)


def marked(db: sqlite3.Connection) -> bool:
    """Whether the index open on `db` is marked as left unsettled (`coldbuild`)."""
    return db.execute(f"SELECT 1 FROM meta WHERE key='{UNSETTLED}'").fetchone() is not None


def settle_file(target: Path) -> bool:
    """Do the work a large build left (see the module's docstring) on the index at `target`,
    if it is still to do, each step a transaction of its own (a writer waits for one step
    at most); the caller holds the build lock. Whether there was any."""
    import sqlite3

    # mode=rw: an index deleted meanwhile is not created again, empty, by this connection
    db = sqlite3.connect(f"{target.resolve().as_uri()}?mode=rw", uri=True, timeout=30,
                         isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout=30000")
        if not marked(db):
            return False
        settle(db)  # each statement its own transaction (no BEGIN on this connection)
        db.execute(f"DELETE FROM meta WHERE key='{UNSETTLED}'")
        # the index pages went through the write-ahead log: leave the log small again
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True
    finally:
        db.close()


def main(argv: list[str]) -> int:
    from pathlib import Path

    from loa_mem.core import lock

    index = Path(argv[1])
    try:
        with lock.hold(index.parent / LOCK, "index settle", _WAIT_SECONDS):
            settle_file(index)
    except Exception:  # nobody to tell: the next command that opens the index tries again
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
