"""A whole index built at once (a fresh clone, a deleted index, a new schema version).

The rows go into a new file beside the index, written with the settings a derived file allows
(no journal, no fsync: a crash leaves only a temp file, removed by the next build), as each part
of a grimoire file arrives from the processes parsing them (`coldparts`), and into the full-text
index while the other parts are still being parsed. The finished file is renamed over the
index: readers see either no index or a whole one.

What a recall does not need is done after that: merging the full-text index's segments into
one ('optimize') and building the lookup indexes (by id, by file, the live-entry filter).
A small build does it before the rename. A build read in several processes (a large store)
marks the index unsettled and leaves that work to a process of its own (`settler`), started in
the background, so that the command that built the index answers without waiting for it; any
later command that finds the index still unsettled and nobody settling it starts one again (a
killed settler). Until then every query works; lookups by id or by file scan the rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loa_mem.core.errors import InvalidFile, invalid_from
from loa_mem.memory import settler, unsettled
from loa_mem.memory.fastrows import Preparer
from loa_mem.memory.index import add_names, create
from loa_mem.memory.indexrows import INDEX_TEXT, INSERT_NEXT, Prepared
from loa_mem.memory.unsettled import UNSETTLED

_SUFFIXES = ("-wal", "-shm", "-journal")
_IN_FILE = "file=(SELECT file FROM paths WHERE path=?)"


class Build:
    """A new index file being filled; `finish` puts it in place of `target`."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.temp = target.with_name(f"{target.name}.build-{os.getpid()}")
        _remove(self.temp)
        self.db = sqlite3.connect(self.temp, isolation_level=None)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "locking_mode=EXCLUSIVE",
                       "temp_store=MEMORY", "cache_size=-65536"):
            self.db.execute(f"PRAGMA {pragma}")
        create(self.db, indexes=False)
        # no merges of the full-text index's segments while it is filled: 'optimize' merges
        # them all once at the end (merging as they come, then again, cost ~15% more)
        self.db.execute("INSERT INTO entry_text(entry_text, rank) VALUES('automerge', 0)")
        self.db.execute("INSERT INTO entry_text(entry_text, rank) VALUES('crisismerge', 1000)")
        self.db.execute("BEGIN")
        self.next_rowid = 1

    def add(self, path: str, rows: list[Prepared]) -> None:
        """Rows of a grimoire file (from `indexrows.prepare`), all or a part of them."""
        first = self.next_rowid
        add_names(self.db, rows)
        self.db.executemany(INSERT_NEXT, rows)  # numbered from `first` on, as they come
        self.next_rowid += len(rows)
        # indexed now, while the other files are still being parsed, rather than all at the end
        self.db.execute(INDEX_TEXT, (first, self.next_rowid - 1))

    def drop(self, path: str) -> None:
        """Take out the rows added for `path` (its parts, when the file must be read whole)."""
        self.db.execute(f"DELETE FROM entry_text WHERE rowid IN (SELECT rowid FROM entries "
                        f"WHERE {_IN_FILE})", (path,))
        self.db.execute(f"DELETE FROM entries WHERE {_IN_FILE}", (path,))
        self.next_rowid = self.db.execute(
            "SELECT coalesce(max(rowid), 0) + 1 FROM entries").fetchone()[0]

    def done(self, path: str, signature: tuple[int, int], indent: int, flow: bool,
             record: tuple[str, str] | None) -> None:
        """`path` has all its rows; `record`: its text recorded in blocks for the first
        catch-up after this build (`reread.built_record`), if any."""
        self.db.execute("INSERT OR REPLACE INTO files VALUES(?,?,?,?,?)",
                        (path, signature[0], signature[1], indent, int(flow)))
        if record is not None and not flow:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", record)

    def finish(self, defer: bool = False) -> None:
        """Index the rows (or, `defer`, mark the file unsettled: see the module's docstring)
        and rename the file into place (the caller has closed its own connection to `target`,
        under the lock that keeps other builds out)."""
        if defer:
            self.db.execute(f"INSERT OR REPLACE INTO meta VALUES('{UNSETTLED}', '')")
        else:
            settler.settle(self.db)
        # the merge settings back to FTS5's own (read by each later connection)
        self.db.execute("DELETE FROM entry_text_config WHERE k IN ('automerge', 'crisismerge')")
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA locking_mode=NORMAL")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.close()
        # a journal left beside the old file would be read as the new file's; the old file
        # goes first too: ext4 writes a file renamed over another out to disk before the
        # rename returns (5-25 ms here), and a reader meanwhile finds no index, as before a build
        for suffix in ("", *_SUFFIXES):
            Path(f"{self.target}{suffix}").unlink(missing_ok=True)
        os.replace(self.temp, self.target)

    def abandon(self) -> None:
        self.db.close()
        _remove(self.temp)


def _remove(path: Path) -> None:
    for name in (str(path), *(f"{path}{suffix}" for suffix in _SUFFIXES)):
        Path(name).unlink(missing_ok=True)


def leftovers(cache_dir: Path) -> None:
    """Remove the temp files of builds that were killed (their processes are gone)."""
    for found in cache_dir.glob("index.sqlite3.build-*"):
        pid = found.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            found.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build(target: Path, jobs: list[tuple[str, Path, tuple[int, int]]],
          prepare: Preparer, check_empty: Callable[[str], None]
          ) -> dict[str, InvalidFile]:
    """Build the index at `target` from the grimoire files `jobs` ((path, full path,
    signature)); `prepare` gives a parsed file's layout and rows (`indexrows.FileRows`),
    `check_empty` raises for a file emptied by accident. Returns the files that failed, which
    the index leaves out."""
    from loa_mem.memory import coldparts

    leftovers(target.parent)
    work = coldparts.jobs(jobs, prepare)
    files = {rel: (full, signature) for rel, full, signature in jobs}
    left = coldparts.parts_of(work)  # parts still to come, per file
    whole: set[str] = set()  # files to read whole: a part could not be read apart
    records: dict[str, tuple[str, str] | None] = {}  # each file's block record
    failures: dict[str, InvalidFile] = {}
    building = Build(target)
    count = coldparts.processes(work)
    try:
        for rel, _, result, record in coldparts.results(work, count):
            records[rel] = records.get(rel) or record
            if result is None:
                whole.add(rel)
            elif (failure := invalid_from(result)) is not None:
                failures[rel] = failure
            elif rel not in whole:
                building.add(rel, result.rows)
            left[rel] -= 1
            if left[rel] == 0 and rel not in failures:
                last = _read_whole(building, rel, files[rel], prepare) if rel in whole \
                    else (result, records[rel])
                _finish_file(building, rel, files[rel], last, check_empty, failures)
        building.finish(defer=count > 1)
    except BaseException:
        building.abandon()
        raise
    if count > 1:
        unsettled.start(target)
    return failures


def _read_whole(building: Build, rel: str, file: tuple[Path, tuple[int, int]],
                prepare: Preparer) -> tuple[Any, tuple[str, str] | None]:
    """Read a file (its full path and signature) whole after one of its parts could not be
    read apart (here: rare), in place of the rows its other parts gave: its result and its
    block record."""
    from loa_mem.memory import coldparts

    building.drop(rel)
    _, _, result, record = coldparts.run((rel, str(file[0]), 0, -1, 0, prepare, file[1]))
    if invalid_from(result) is None:
        building.add(rel, result.rows)
    return result, record


def _finish_file(building: Build, rel: str, file: tuple[Path, tuple[int, int]],
                 last: tuple[Any, tuple[str, str] | None], check_empty: Callable[[str], None],
                 failures: dict[str, InvalidFile]) -> None:
    """Record a file (its full path and signature) whose rows are all in (`last`: its last
    part's rows, or the whole file's, and its block record), or its failure."""
    signature = file[1]
    result, record = last
    failure = invalid_from(result)
    if failure is None and signature[1] == 0:
        try:
            check_empty(rel)
        except InvalidFile as emptied:
            failure = emptied
    if failure is not None:
        building.drop(rel)
        failures[rel] = failure
    else:
        building.done(rel, signature, result.indent, result.flow, record)
