"""One command's edits, applied together: the transaction `Store.write()` yields.

Invariants (see `store.py`): files are written all or nothing (`core.filewrite.Staged`), then
the index, then one commit of this command's change alone (`core.gitwrite`); if the index or
the commit fails, the files and the events log go back as they were.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.core import events as events_mod
from loa_mem.core import filewrite, git, gitstate, gitwrite, notices, textfile
from loa_mem.core.errors import Refused
from loa_mem.memory.files import GrimoireFile, signature_of
from loa_mem.memory.index import Row

Change = Callable[[Any], None]

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.writer import FileResult


@dataclass
class _FilePlan:
    grimoire: GrimoireFile
    appends: list[dict[str, Any]] = field(default_factory=list)
    raw_appends: list[str] = field(default_factory=list)
    changes: dict[int, list[Change]] = field(default_factory=dict)
    removals: set[int] = field(default_factory=set)


class Transaction:
    """The edits of one command, applied together when the command's core function is done."""

    def __init__(self, store: Store, op: str, actor: str) -> None:
        self.store = store
        self.op = op
        self.actor = actor
        self.what = ""
        self.body = ""  # optional commit message body (gc lists each action and why)
        self.ids: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.plans: dict[str, _FilePlan] = {}
        self.files: dict[str, str | bytes | None] = {}
        self.commit_sha: str | None = None
        self.committed = False
        self.changed_paths: list[str] = []

    def _plan(self, grimoire: GrimoireFile) -> _FilePlan:
        return self.plans.setdefault(grimoire.path, _FilePlan(grimoire))

    def _grimoire(self, row: Row) -> GrimoireFile:
        for grimoire in self.store.grimoire_files():
            if grimoire.path == row.path:
                return grimoire
        raise Refused(f"{row.id} is in {row.path}, which is not a grimoire file")

    def add(self, entry: dict[str, Any], in_archive: bool = False) -> str:
        """Append `entry` to its category's file; returns that file's path."""
        category = str(entry["category"])
        path = self.store.file_for(category, in_archive)
        self._plan(GrimoireFile(category, path, in_archive)).appends.append(entry)
        self.ids.append(str(entry["id"]))
        return path

    def add_text(self, category: str, text: str, memory_id: str, in_archive: bool = False) -> None:
        path = self.store.file_for(category, in_archive)
        self._plan(GrimoireFile(category, path, in_archive)).raw_appends.append(text)
        self.ids.append(memory_id)

    def change(self, row: Row, change: Change) -> None:
        self._plan(self._grimoire(row)).changes.setdefault(row.rowid, []).append(change)
        self.ids.append(row.id)

    def remove(self, row: Row) -> None:
        self._plan(self._grimoire(row)).removals.add(row.rowid)
        self.ids.append(row.id)

    def event(self, op: str, ids: list[str], reason: str | None = None, **details: Any) -> None:
        self.events.append(events_mod.make(op, ids, self.actor, reason, **details))

    def put(self, rel_path: str, text: str | bytes) -> None:
        """Write a non-grimoire file (a manifest, a sidecar) atomically with the rest of this
        transaction, and include it in the commit. Text takes the line ending the file has."""
        self.files[rel_path] = textfile.own_ending(self.store.top / rel_path, text) if (
            isinstance(text, str)) else text

    def delete(self, rel_path: str) -> None:
        """Remove a non-grimoire file with this transaction (git history keeps it)."""
        self.files[rel_path] = None

    # -- applying -----------------------------------------------------------------------
    def apply(self, commit: bool) -> None:
        from loa_mem.memory.writer import plan_file

        store = self.store
        results = [plan_file(store, plan) for plan in self.plans.values() if _has_work(plan)]
        writes: dict[str, str | bytes | None] = {r.path: r.text for r in results}
        writes.update(self.files)
        for path in [*writes, store.events_rel]:
            refuse_link(store.top, path)
        gitstate.refuse_left_out(store.top, [*writes, store.events_rel])
        self.changed_paths = [r.path for r in results] + list(self.files)
        if self.events:
            self.changed_paths.append(store.events_rel)
        state = self._git_state() if commit and self.changed_paths else None
        staged = filewrite.Staged(store.top, writes, store.events_path, self.events)
        pending = None
        before = {r.path: signature_of(store.top / r.path) for r in results}  # for the journal
        try:
            if state is not None:
                pending = self._prepare_commit(results, staged, state)
            staged.finish()
        except BaseException:
            staged.undo()
            raise
        try:
            self._update_index(results)
            if pending is not None:
                self.commit_sha = gitwrite.publish(pending, self.what or self.op)
                self.committed = True
        except BaseException as failure:
            self._roll_back(staged, [r.path for r in results], failure)
            if isinstance(failure, sqlite3.Error):
                from loa_mem.core.errors import WriteFailed

                raise WriteFailed(f"could not update the index in .git/loa-mem: {failure}",
                                  "free disk space, then retry; nothing was changed") from None
            raise
        staged.done()
        self._journal(before)

    def _journal(self, before: dict[str, Any]) -> None:
        """Tell the caches derived from the grimoire files what this write did (`journal`)."""
        if not before:
            return
        from loa_mem.memory import journal

        plans = [p for p in self.plans.values() if _has_work(p)]
        journal.note(self.store.cache_dir,
                     {path: [sig, signature_of(self.store.top / path)]
                      for path, sig in before.items()},
                     list(dict.fromkeys(self.ids)),  # all of them added when only_added
                     all(not p.changes and not p.removals for p in plans))

    def _git_state(self) -> gitstate.State | None:
        """HEAD, index and working tree of the paths about to change, or None when an outer
        git command holds the index (inside one of its hooks): the files are then written and
        left for `loa-mem commit`, and HEAD never moves under that command."""
        top = self.store.top
        if gitstate.index_busy(top):
            notices.add("not committed: another git command holds this repository's index "
                        "(inside a git hook?); run `loa-mem commit` when it is done")
            return None
        return gitstate.inspect(top, self.changed_paths)

    def _prepare_commit(self, results: list[FileResult], staged: filewrite.Staged,
                        state: gitstate.State) -> gitwrite.Pending:
        """The commit object of this transaction's change alone (see `gitwrite`)."""
        store = self.store
        by_path = {r.path: r for r in results}
        changes = []
        for path in self.changed_paths:
            result = by_path.get(path)
            if path == store.events_rel:
                changes.append(_events_change(store, staged))
            elif result is not None:
                changes.append(gitwrite.FileChange(path, result.text.encode("utf-8"),
                                                   result.replay))
            else:
                content = self.files[path]
                changes.append(gitwrite.FileChange(
                    path, content.encode("utf-8") if isinstance(content, str) else content))
        message = git.message(self.op, self.what or ", ".join(self.ids[:3]), self.ids,
                              body=self.body)
        return gitwrite.prepare(state, changes, message)

    def _update_index(self, results: list[FileResult]) -> None:
        store = self.store
        index = store.index
        index.begin()
        try:
            for result in results:
                result.update_index(index, signature_of(store.top / result.path))
            index.commit()
        except BaseException:
            index.rollback()
            raise
        store._refresh_events()

    def _roll_back(self, staged: filewrite.Staged, grimoires: list[str],
                   failure: BaseException) -> None:
        """The index or the commit failed after the files were replaced (a full disk, git
        busy): put the files back as they were, so that nothing is left half done."""
        from loa_mem.core.errors import GitFailed, WriteFailed

        failed = staged.roll_back()
        store = self.store
        try:  # the index rows of these files are stale now: the next command parses them
            index = store._open_index()
            index.begin()
            for path in grimoires:
                index.set_file(path, None)
            index.reset_events()
            index.commit()
        except sqlite3.Error:
            store.close()
        if not isinstance(failure, (GitFailed, WriteFailed)):
            return
        if failed:
            failure.hint = (f"{failure.hint}; {', '.join(failed)} could not be put back: "
                            "`git diff` shows it, `loa-mem commit` commits it")
        elif "nothing was" not in failure.hint:
            failure.hint = f"{failure.hint}; nothing was changed"


def refuse_link(top: Path, rel_path: str) -> None:
    """loa-mem replaces files by renaming over them: through a symbolic link that would turn
    the link into a file (and a link out of the repository into a commit of outside data)."""
    path = top / rel_path
    for place in (path, *path.parents):
        if place == top:
            return
        if place.is_symlink():
            where = "outside the repository" if not place.resolve().is_relative_to(
                top.resolve()) else "elsewhere in the repository"
            raise Refused(f"{top.name}/{place.relative_to(top).as_posix()} is a symbolic link "
                          f"to {where}; loa-mem writes only regular files; nothing was written",
                          "replace the link with the file itself (or set the path in "
                          ".loa.config.yaml)")


def _events_change(store: Store, staged: filewrite.Staged) -> gitwrite.FileChange:
    """The events log's change is an append: replayed, it appends the same lines."""
    full = store.events_path.read_bytes()
    added = full[staged.log_size or 0:]

    def replay(other: bytes) -> bytes:
        lead = b"" if not other or other.endswith(b"\n") else b"\n"
        return other + lead + added.lstrip(b"\n")

    return gitwrite.FileChange(store.events_rel, full, replay, created=staged.log_size is None)


def _has_work(plan: _FilePlan) -> bool:
    return bool(plan.appends or plan.raw_appends or plan.changes or plan.removals)
