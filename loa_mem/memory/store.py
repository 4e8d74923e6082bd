"""The store: where a project's grimoire files are, and the only code that reads or writes them.

Invariants:
- The grimoire files are the truth; the index (see `index.py`) is derived and refreshed by file
  signature before every use.
- A write happens inside `Store.write()`: one lock for read, modify, write and commit; files are
  replaced atomically (temp file + rename), then the index, the events log and one git commit
  follow. A killed process leaves each file either as it was or as it should be.
- A write changes only the lines of the entries it touches; everything else in the file,
  comments included, stays byte for byte.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.core import clock, git, textfile
from loa_mem.core import events as events_mod
from loa_mem.core.errors import InvalidFile, NoStore, NotARepo, NotFound, Refused
from loa_mem.memory import config as config_mod
from loa_mem.memory import eventlog, layout
from loa_mem.memory import rules as model
from loa_mem.memory.fastrows import Preparer
from loa_mem.memory.files import GrimoireFile, refuse_emptied, signature_of
from loa_mem.memory.index import Index, Row, Signature
from loa_mem.memory.indexrows import FileRows, file_rows

if TYPE_CHECKING:
    from loa_mem.core.located import ListFile
    from loa_mem.memory.transaction import Transaction


def locate_top(root: str | None) -> Path:
    chosen = root or os.environ.get("LOA_MEM_ROOT")
    start = Path(chosen) if chosen else Path.cwd()
    top = git.find_top(start) if start.exists() else None
    bare = git.bare_repository(start) if top is None and start.exists() else None
    if bare is not None:
        raise NotARepo(f"{bare} is a bare repository: it has no working tree for memory files",
                       f"clone it (git clone {bare}) and run loa-mem in the clone")
    if top is None:
        ignored = git.ignored_variables()  # a hook's variables, never followed
        raise NotARepo(f"{start} is not inside a git repository" + (
            f" (loa-mem does not follow {ignored}, which git hooks set)" if ignored else ""),
            "run loa-mem in the working tree, whose .git is there (cd into it, or --root "
            "PATH)" if ignored else "run `loa-mem init` to create a memory store here")
    return top


class Store:
    def __init__(self, top: Path, cfg: config_mod.Config) -> None:
        self.top = top
        self.config = cfg
        self.cache_dir = git.git_dir(top) / "loa-mem"
        self.storage = top / cfg.storage_dir
        self.archive = top / cfg.archive_dir
        self._events_target: str | None = None
        self._index: Index | None = None
        self._files_for: dict[tuple[str, bool], str] = {}
        self._grimoires: list[GrimoireFile] | None = None

    @classmethod
    def open(cls, root: str | None = None) -> Store:
        top = locate_top(root)
        cache_dir = git.git_dir(top) / "loa-mem"
        store = cls(top, config_mod.load(top, cache_dir))
        from loa_mem.core import clonesetup

        clonesetup.ensure(top, store.merged_patterns(), store.event_patterns(),
                          store.other_merged())
        return store

    def other_merged(self) -> tuple[str, ...]:
        """Files besides grimoires that other branches also write and loa-mem merges: the
        agents' sidecars (a pattern) and their state index."""
        agents = self.config.section("agents")
        found = [f"{agents['dir']}/*.yaml"] if agents.get("dir") else []
        if agents.get("state_index"):
            found.append(str(agents["state_index"]))
        return tuple(found)

    # -- paths --------------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        return path.relative_to(self.top).as_posix()

    def file_for(self, category: str, in_archive: bool = False) -> str:
        """The file a new entry of `category` goes to (see `layout`: the single file, or
        this month's file once that is full)."""
        # cached until the next refresh: gc and import ask once per entry
        key = (category, in_archive)
        found = self._files_for.get(key)
        if found is None:
            dir_rel = self.config.archive_dir if in_archive else self.config.storage_dir
            found = self._files_for[key] = layout.write_target(
                str(self.top), dir_rel, self.config.rule(category).storage_file,
                clock.now_iso()[:7])
        return found

    def grimoire_files(self) -> list[GrimoireFile]:
        """Every grimoire file: each category's single file (listed whether or not it
        exists) and its month files, in the storage dir, then in the archive dir."""
        if self._grimoires is None:
            top = str(self.top)
            self._grimoires = [
                GrimoireFile(c, path, archived)
                for archived, dir_rel in ((False, self.config.storage_dir),
                                          (True, self.config.archive_dir))
                for c in model.CATEGORIES
                for path in layout.files(top, dir_rel, self.config.rule(c).storage_file)]
        listed = {g.path for g in self._grimoires}
        added = [GrimoireFile(category, path, archived)
                 for (category, archived), path in self._files_for.items() if path not in listed]
        return self._grimoires + added

    def merged_patterns(self) -> list[str]:
        """git attribute patterns of every grimoire file, month files included."""
        return [pattern for dir_rel in (self.config.storage_dir, self.config.archive_dir)
                for c in model.CATEGORIES
                for pattern in layout.patterns(dir_rel, self.config.rule(c).storage_file)]

    @property
    def events_rel(self) -> str:
        """The file of the events log new events go to (see `eventlog`)."""
        if self._events_target is None:
            self._events_target = layout.write_target(
                str(self.top), self.config.storage_dir, events_mod.EVENTS_FILE,
                clock.now_iso()[:7])
        return self._events_target

    @property
    def events_path(self) -> Path:
        return self.top / self.events_rel

    def event_logs(self) -> list[str]:
        """Every file of the events log, in order."""
        return layout.files(str(self.top), self.config.storage_dir, events_mod.EVENTS_FILE)

    def read_events(self) -> list[dict[str, Any]]:
        return eventlog.read_all(str(self.top), self.event_logs())

    def event_patterns(self) -> list[str]:
        """git attribute patterns of every file of the events log."""
        return layout.patterns(self.config.storage_dir, events_mod.EVENTS_FILE)

    # -- index --------------------------------------------------------------------------
    def _open_index(self) -> Index:
        """The index as it is, without refreshing it (refresh_files must see parse failures
        rather than raise them, so that validate can report them)."""
        if self._index is None:
            self._index = Index(self.cache_dir / "index.sqlite3")
        return self._index

    @property
    def index(self) -> Index:
        if self._index is None:
            self._open_index()
            try:
                self.refresh()
            except sqlite3.OperationalError:
                # the index file cannot be written (a full disk, a read-only folder that
                # looked writable): read from a copy in memory instead
                self.close()
                self._index = Index(self.cache_dir / "index.sqlite3", in_memory=True)
                return self.index_refreshed()
            except BaseException:
                self.close()
                raise
        return self._open_index()

    def index_refreshed(self) -> Index:
        """The index, caught up (a cold build may replace it: the one returned is current)."""
        self._open_index()
        try:
            self.refresh()
        except BaseException:
            self.close()
            raise
        return self._open_index()

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def refresh(self) -> None:
        """Bring the index up to date with the files; the first file that fails to parse
        raises its error (file, line, column)."""
        failures = self.refresh_files()
        if failures:
            raise next(iter(failures.values()))
        self._refresh_events()

    def refresh_files(self, only: Collection[str] | None = None) -> dict[str, InvalidFile]:
        """Parse every grimoire file whose signature changed (of the files `only` names, when
        given: the others' rows, and rows of files gone, are left as they are); returns the files
        that failed, whose index rows stay as they were."""
        index = self._open_index()
        self._grimoires = None  # files come and go with pulls and checkouts: listed again
        self._files_for = {}
        self._events_target = None
        listed = [g for g in self.grimoire_files() if only is None or g.path in only]
        gone = set() if only is not None else (
            index.file_paths() - {g.path for g in self.grimoire_files()})
        stale: list[tuple[GrimoireFile, Signature | None]] = [
            (GrimoireFile("", path, False), None) for path in sorted(gone)]
        stale += [(g, signature_of(self.top / g.path)) for g in listed]
        stale = [(g, sig) for g, sig in stale if sig != index.signature(g.path)]
        stale = [(g, sig) for g, sig in stale if not self._reread(g, sig)]
        if not stale:
            return {}
        if only is None and not index.in_memory and not index.file_paths():
            built = self._build_cold([(g.path, sig) for g, sig in stale if sig])
            if built is not None:
                return built
        from loa_mem.core import yamlfast, yamlio

        archived = frozenset(g.path for g in self.grimoire_files() if g.in_archive)
        parsed = yamlio.load_lists([(g.path, self.top / g.path) for g, sig in stale if sig],
                                   functools.partial(file_rows, archived), yamlfast.load_list)
        failures = {}
        for grimoire, signature in stale:
            result = parsed.get(grimoire.path)
            if signature is not None and signature[1] == 0:
                try:
                    refuse_emptied(self.top, grimoire.path)
                except InvalidFile as emptied:
                    result = emptied
            if isinstance(result, InvalidFile):
                failures[grimoire.path] = result
            else:
                self._store_parsed(grimoire, signature, result)
        return failures

    def _build_cold(self, files: list[tuple[str, Signature]]) -> dict[str, InvalidFile] | None:
        """Build the whole index anew (see `coldbuild`) and return the files that failed; when
        another process built it while this one waited, catch up with it as usual; None when
        the lock stayed busy (the caller goes on as usual)."""
        from loa_mem.core import lock
        from loa_mem.core.errors import LockBusy
        from loa_mem.memory import coldbuild

        path = self.cache_dir / "index.sqlite3"
        archived = frozenset(g.path for g in self.grimoire_files() if g.in_archive)
        # closed before waiting: a WAL connection to the file a build replaces would, on
        # closing after the rename, delete the new file's WAL (its name is the same)
        self.close()
        try:
            with lock.hold(self.cache_dir / "build.lock", "index build", self.config.lock_timeout):
                self._index = Index(path)
                if not self._index.file_paths() and not self._index.in_memory:
                    self.close()
                    try:
                        return coldbuild.build(
                            path, [(rel, self.top / rel, sig) for rel, sig in files],
                            Preparer(archived), functools.partial(refuse_emptied, self.top))
                    finally:
                        self._index = Index(path)
        except LockBusy:
            self._index = Index(path)
            return None
        return self.refresh_files()  # built by another process meanwhile

    def _reread(self, grimoire: GrimoireFile, signature: Signature | None) -> bool:
        """Update an indexed file that changed outside loa-mem entry by entry (see `reread`);
        False when it must be parsed whole."""
        from loa_mem.memory import reread

        return reread.catch_up(self._open_index(), self.top / grimoire.path, grimoire.path,
                               grimoire.in_archive, signature) is not None

    def forget_file(self, path: str) -> None:
        """Leave a file that does not parse out of the index (for readers that carry on
        without it); its signature is cleared, so every later command parses it again."""
        index = self._open_index()
        index.begin()
        try:
            index.drop_file(path)
            index.set_file(path, None)
            index.commit()
        except BaseException:
            index.rollback()
            raise

    def reparse(self, grimoire: GrimoireFile, signature: Signature | None) -> None:
        from loa_mem.core import yamlio

        parsed = None
        if signature is not None:
            text = textfile.read_text(self.top / grimoire.path, grimoire.path)
            if not text:
                refuse_emptied(self.top, grimoire.path)
            parsed = yamlio.load_list(text, grimoire.path)
        self._store_parsed(grimoire, signature, parsed)

    def _store_parsed(self, grimoire: GrimoireFile, signature: Signature | None,
                      parsed: ListFile | FileRows | None) -> None:
        if parsed is not None and not isinstance(parsed, FileRows):
            parsed = file_rows(frozenset([grimoire.path] if grimoire.in_archive else []),
                                 grimoire.path, parsed)
        index = self.index
        index.begin()
        try:
            index.drop_file(grimoire.path)
            if parsed is not None and signature is not None:
                index.insert_rows(parsed.rows)
                index.set_file(grimoire.path, signature, parsed.indent, parsed.flow)
            else:
                index.set_file(grimoire.path, None)
            index.commit()
        except BaseException:
            index.rollback()
            raise

    def _refresh_events(self) -> None:
        eventlog.refresh(self.index, str(self.top), self.event_logs())

    # -- reads --------------------------------------------------------------------------
    def entry(self, memory_id: str) -> Row:
        model.check_id(memory_id)
        rows = self.index.by_id(memory_id)
        if not rows:
            hint = "it was forgotten; `loa-mem restore` brings it back" if (
                memory_id in self.index.forgotten_ids()) else "check the id with `loa-mem recall`"
        if not rows:
            raise NotFound(f"no memory {memory_id}", hint)
        if len(rows) > 1:
            places = ", ".join(f"{r.path}:{r.first_line}" for r in rows)
            raise Refused(f"{memory_id} appears {len(rows)} times ({places})",
                          "run `loa-mem validate` and remove the duplicate")
        return rows[0]

    def next_id(self, day: str) -> str:
        """A new id for `day`: random, so no other clone or branch mints it; drawn again in
        the (practically impossible) case that this store already holds or forgot it."""
        index = self.index
        while True:
            memory_id = model.new_id(day)
            if not index.by_id(memory_id) and not index.was_forgotten(memory_id):
                return memory_id

    # -- writes -------------------------------------------------------------------------
    def require_init(self) -> None:
        """Refuse to write into a repository that was never set up: half a store (grimoire
        files without config, merge driver or events log) is worse than none."""
        if not _initialised(self):
            outer = git.superproject(self.top)  # a submodule: is the store in its superproject?
            there = outer is not None and (outer / config_mod.CONFIG_FILE).exists()
            raise NoStore(f"{self.top} is a git submodule of {outer}, whose memory store is "
                          "there" if there else f"{self.top} has no memory store yet",
                          f"run loa-mem in {outer} (or --root {outer}); nothing was written"
                          if there else "run `loa-mem init` first; nothing was written")

    @contextmanager
    def write(self, op: str, actor: str, commit: bool = True) -> Iterator[Transaction]:
        # here, not at the top: a command that only reads (a first recall in a fresh clone
        # builds the index through this module) does not import the write path
        from loa_mem.core import gitstate, lock
        from loa_mem.memory.transaction import Transaction

        commit = commit and self.config.auto_commit
        self.require_init()
        with lock.hold(self.cache_dir / "write.lock", op, self.config.lock_timeout):
            problem = gitstate.state_problem(self.top) if commit else None
            if problem is not None:
                raise problem
            self.refresh()
            transaction = Transaction(self, op, actor)
            yield transaction
            transaction.apply(commit=commit)


def _initialised(store: Store) -> bool:
    """`loa-mem init` ran here (its config or its events log is there, also in a clone)."""
    return (store.top / config_mod.CONFIG_FILE).exists() or store.events_path.exists()


def require_parsed(store: Store, path: str) -> None:
    """Make sure `path` parses before a write depends on its index rows."""
    for grimoire in store.grimoire_files():
        if grimoire.path == path:
            store.reparse(grimoire, signature_of(store.top / path))
            return
    raise InvalidFile(path, 1, 1, "not a grimoire file")


__all__ = ["GrimoireFile", "Store", "locate_top", "require_parsed",
           "signature_of"]
