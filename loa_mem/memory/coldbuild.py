"""A whole index built at once (a fresh clone, a deleted index, a new schema version).

The rows go into a new file beside the index, written with the settings a derived file allows
(no journal, no fsync: a crash leaves only a temp file, removed by the next build), as each
grimoire file's rows arrive from the processes parsing them. The full-text index and the lookup
indexes are built once at the end, from the stored rows (sorted, in C), and the finished file is
renamed over the index: readers see either no index or a whole one.
"""

from __future__ import annotations

import functools
import gc
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.core.errors import InvalidFile
from loa_mem.memory.index import add_names, create
from loa_mem.memory.indexrows import INDEX_TEXT, INDEXES, INSERT_ENTRIES, Prepared

if TYPE_CHECKING:
    from loa_mem.core.located import ListFile

_SUFFIXES = ("-wal", "-shm", "-journal")


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
        self.db.execute("BEGIN")
        self.next_rowid = 1

    def add(self, path: str, signature: tuple[int, int], indent: int, flow: bool,
            rows: list[Prepared]) -> None:
        """One grimoire file's rows (from `indexrows.prepare`)."""
        first = self.next_rowid
        add_names(self.db, rows)
        self.db.executemany(INSERT_ENTRIES, ((first + offset, *row)
                                             for offset, row in enumerate(rows)))
        self.next_rowid += len(rows)
        # indexed now, while the other files are still being parsed, rather than all at the end
        self.db.execute(INDEX_TEXT, (first, self.next_rowid - 1))
        self.db.execute("INSERT OR REPLACE INTO files VALUES(?,?,?,?,?)",
                        (path, signature[0], signature[1], indent, int(flow)))

    def finish(self) -> None:
        """Index the rows and rename the file into place (the caller has closed its own
        connection to `target`, under the lock that keeps other builds out)."""
        self.db.execute("COMMIT")
        # one segment for the whole full-text index, out of the way of the first merges after a
        # few edits (which would otherwise rewrite it whole, leaving its old pages free in the
        # file); the lookup indexes built next take the pages it freed
        self.db.execute("INSERT INTO entry_text(entry_text) VALUES('optimize')")
        self.db.executescript(INDEXES)
        self.db.execute("PRAGMA locking_mode=NORMAL")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.close()
        # a journal left beside the old file would be read as the new file's
        for suffix in _SUFFIXES:
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
          prepare: Callable[[str, ListFile], Any], check_empty: Callable[[str], None]
          ) -> dict[str, InvalidFile]:
    """Build the index at `target` from the grimoire files `jobs` ((path, full path,
    signature)); `prepare` gives a parsed file's layout and rows (`indexrows.FileRows`),
    `check_empty` raises for a file emptied by accident. Returns the files that failed, which
    the index leaves out."""
    from loa_mem.core import yamlio

    leftovers(target.parent)
    signatures = {rel: signature for rel, _, signature in jobs}
    failures: dict[str, InvalidFile] = {}
    building = Build(target)
    try:
        for rel, parsed in yamlio.iter_lists([(rel, full) for rel, full, _ in jobs],
                                             functools.partial(_prepare, prepare), _read):
            result = parsed
            if signatures[rel][1] == 0:
                try:
                    check_empty(rel)
                except InvalidFile as emptied:
                    result = emptied
            if isinstance(result, InvalidFile):
                failures[rel] = result
            else:
                building.add(rel, signatures[rel], result.indent, result.flow, result.rows)
        building.finish()
    except BaseException:
        building.abandon()
        raise
    return failures


def _read(text: str, path: str) -> Any:
    """A grimoire file's items as spans, without the garbage collector's passes (each entry
    makes a few containers, none in a cycle: the passes would cost ~30% of the parse)."""
    from loa_mem.core import yamlfast

    collecting = gc.isenabled()
    gc.disable()
    try:
        return yamlfast.load_spans(text, path)
    finally:
        if collecting:
            gc.enable()


def _prepare(prepare: Callable[[str, Any], Any], path: str, parsed: Any) -> Any:
    """`prepare`, likewise without the garbage collector's passes."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return prepare(path, parsed)
    finally:
        if collecting:
            gc.enable()
