"""Writing files so that a failure changes nothing: atomic replacement of one file, and a
transaction's files plus its events-log lines, all or nothing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loa_mem.core import events as events_mod
from loa_mem.core.errors import WriteFailed


def atomic_write(path: Path, text: str | bytes, new_mode: int = 0o644, durable: bool = True
                 ) -> None:
    """`durable=False` for a file derived again whenever it is missing or wrong: not flushed
    to disk before the rename (an fsync costs 5-75 ms on a busy disk)."""
    tmp = write_temporary(path, text, new_mode, durable)
    try:
        os.replace(tmp, path)
    except OSError as failure:
        # e.g. a folder where the file goes: no temporary left behind, and the error names
        # the path the user gave, not the temporary's
        tmp.unlink(missing_ok=True)
        raise type(failure)(failure.errno, failure.strerror, str(path)) from None


def write_temporary(path: Path, text: str | bytes, new_mode: int = 0o644, durable: bool = True
                    ) -> Path:
    """Write `text` beside `path` (its mode, or `new_mode` for a new file; flushed to disk
    unless not `durable`) and return the temporary file; renaming it over `path` is the atomic
    step. A failed write (disk full, interrupted) leaves no temporary file behind for
    `loa-mem commit` to pick up later, and a link planted where the temporary goes is refused,
    not followed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = new_mode
    data = text.encode("utf-8") if isinstance(text, str) else text
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        with os.fdopen(os.open(tmp, flags, mode), "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


class Undo:
    """What a transaction's writes replaced, to put back when a later step (the index, the
    commit) fails: the old files are kept as hard links (no space needed), else in memory."""

    def __init__(self, top: Path, events_path: Path, log_size: int | None) -> None:
        self.top = top
        self.events_path = events_path
        self.log_size = log_size
        self.kept: dict[str, Path | bytes | None] = {}  # None: the file did not exist

    def keep(self, rel_path: str) -> None:
        path = self.top / rel_path
        if not path.exists():
            self.kept[rel_path] = None
            return
        backup = path.with_name(f".{path.name}.{os.getpid()}.old")
        try:
            backup.unlink(missing_ok=True)
            os.link(path, backup)
            self.kept[rel_path] = backup
        except OSError:
            self.kept[rel_path] = path.read_bytes()

    def restore(self, only: list[str] | None = None) -> list[str]:
        """Put the kept files (or `only` these) back; returns those that could not be."""
        failed = []
        for rel_path, old in self.kept.items():
            if only is not None and rel_path not in only:
                continue
            path = self.top / rel_path
            try:
                if old is None:
                    path.unlink(missing_ok=True)
                elif isinstance(old, Path):
                    os.replace(old, path)
                else:
                    atomic_write(path, old)
            except OSError:
                failed.append(rel_path)
        _truncate(self.events_path, self.log_size)
        self.discard()
        return failed

    def discard(self) -> None:
        for old in self.kept.values():
            if isinstance(old, Path):
                old.unlink(missing_ok=True)
        self.kept.clear()


class Staged:
    """A transaction's files written beside their places and its events appended, not yet
    renamed into place. `finish` renames them (a rename needs no space); `undo` before that,
    or `roll_back` after it, leaves every file and the log as they were (the old files are kept
    as hard links, so even a full disk can have them back); `done` when it all worked."""

    def __init__(self, top: Path, writes: dict[str, str | bytes | None], events_path: Path,
                 new_events: list[dict[str, Any]]) -> None:
        self.top = top
        self.writes = writes
        self.events_path = events_path
        self.temporaries: dict[str, Path] = {}
        self.log_size = events_path.stat().st_size if events_path.exists() else None
        self.kept = Undo(top, events_path, self.log_size)
        try:
            for rel_path, text in writes.items():
                if text is not None:
                    self.temporaries[rel_path] = write_temporary(top / rel_path, text)
            events_mod.append(events_path, new_events)
            for rel_path in writes:
                self.kept.keep(rel_path)
        except BaseException as failure:
            self.undo()
            if isinstance(failure, OSError):
                raise _write_failed(failure, []) from None
            raise

    def finish(self) -> None:
        done: list[str] = []
        try:
            for rel_path, text in self.writes.items():
                if text is None:
                    (self.top / rel_path).unlink(missing_ok=True)
                else:
                    os.replace(self.temporaries[rel_path], self.top / rel_path)
                    del self.temporaries[rel_path]
                done.append(rel_path)
        except OSError as failure:
            failed = self.roll_back(done)
            raise _write_failed(failure, failed) from None

    def undo(self) -> None:
        _undo(self.temporaries.values(), self.events_path, self.log_size, restore_log=True)
        self.temporaries.clear()
        self.kept.discard()

    def roll_back(self, only: list[str] | None = None) -> list[str]:
        """Put back the files already replaced and the log; the paths that could not be."""
        _undo(self.temporaries.values(), self.events_path, self.log_size, restore_log=True)
        self.temporaries.clear()
        return self.kept.restore(only)

    def done(self) -> None:
        self.kept.discard()




def write_all_or_nothing(top: Path, writes: dict[str, str | bytes | None], events_path: Path,
                         new_events: list[dict[str, Any]]) -> Staged:
    """Write `writes` and append the events, all or nothing (see `Staged`); the result puts
    the old files back if a later step fails, and must be told `done` when it succeeded."""
    staged = Staged(top, writes, events_path, new_events)
    staged.finish()
    return staged


def _undo(temporaries: Iterable[Path], events_path: Path, log_size: int | None,
          restore_log: bool) -> None:
    for tmp in temporaries:
        tmp.unlink(missing_ok=True)
    if restore_log:
        _truncate(events_path, log_size)


def _write_failed(failure: OSError, replaced: list[str]) -> WriteFailed:
    where = Path(failure.filename).name if failure.filename else "a store file"
    outcome = ("nothing was changed" if not replaced else
               f"{', '.join(replaced)} changed and nothing was committed: `git diff` shows it")
    return WriteFailed(f"could not write {where}: {failure.strerror or failure}",
                       f"free disk space or fix the folder's permissions, then retry; {outcome}")


def _truncate(path: Path, size: int | None) -> None:
    try:
        if size is None:
            path.unlink(missing_ok=True)
        elif path.stat().st_size != size:
            os.truncate(path, size)
    except OSError:
        pass  # the log is append-only JSON lines; a torn last line is skipped when read
