"""Committing one command's change, and nothing else, with git's plumbing.

What must always hold:
- The commit holds exactly this command's change on top of HEAD. A user's own uncommitted or
  staged edits to the same file stay uncommitted and in place; another command's `--no-commit`
  leftovers are not swept into it. When a change cannot be told apart from the user's edits
  (they touch the same entry), the command is refused before anything is written.
- The user's index keeps what they staged (partial staging included): loa-mem's change is
  added to it, nothing else.
- HEAD moves only by compare-and-swap (`update-ref NEW OLD`), after the files are in place;
  if the index or the ref cannot be updated, the files go back to what they were.

Steps: `prepare` (read HEAD, the index and the working-tree state of the paths; work out the
commit's and the index's content of each path; build the blobs, the tree and the commit object,
which change nothing a user can see), then the caller replaces the files, then `publish`
(update the index, then move HEAD). Reading that state (and refusing when no commit can be
made) is `core.gitstate`'s.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from loa_mem.core import git, gitsign
from loa_mem.core.errors import GitFailed, Refused, WriteFailed
from loa_mem.core.gitstate import Entry, State, plumb

# Replays a command's change on another version of the same file; None when it cannot.
Replay = Callable[[bytes], "bytes | None"]

_ZERO = "0" * 40


@dataclass(frozen=True)
class FileChange:
    """One path a command changes: `after` is its new content (None: the file is deleted);
    `replay` reapplies the change to another version (None: a three-way line merge);
    `created`: the command itself created the file before the commit (a new file of the
    events log), so it is not a file of the user's that git does not track."""

    path: str
    after: bytes | None
    replay: Replay | None = None
    created: bool = False


@dataclass
class Pending:
    """A commit object that is built but not yet on any branch."""

    top: Path
    old_head: str | None
    commit: str
    index_info: bytes
    undo_index_info: bytes


def _blob(top: Path, sha: str) -> bytes:
    return plumb(top, ["cat-file", "blob", sha])


def _merge3(top: Path, current: bytes, base: bytes, other: bytes) -> bytes | None:
    """git's three-way line merge of `base -> other` into `current`; None on a conflict."""
    with _scratch(top) as folder:
        names = []
        for name, data in (("current", current), ("base", base), ("other", other)):
            target = Path(folder) / name
            target.write_bytes(data)
            names.append(str(target))
        result = subprocess.run(["git", "merge-file", "-p", "-q", *names], cwd=top,
                                env=git.clean_env(), capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else None


@contextlib.contextmanager
def _scratch(top: Path) -> Iterator[Path]:
    """A private folder for a commit's temporary files (blobs to hash, a temporary index), in
    loa-mem's folder inside the git directory, removed afterwards. (`tempfile` would cost each
    write ~5 ms of imports.)"""
    place = git.git_dir(top) / "loa-mem"
    folder = place / f"tmp-{os.getpid()}-{os.urandom(6).hex()}"
    try:
        place.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700)
    except OSError as error:
        raise WriteFailed(f"cannot write to this store: {place}: {error.strerror or error}",
                          "free disk space or fix the permissions, then retry; nothing was "
                          "changed") from None
    try:
        yield folder
    finally:
        for name in os.listdir(folder):
            with contextlib.suppress(OSError):
                os.remove(folder / name)
        with contextlib.suppress(OSError):
            folder.rmdir()


def _carry(top: Path, change: FileChange, before: bytes | None, onto: bytes | None,
           where: str) -> bytes | None:
    """This command's change (`before` -> `change.after`) carried onto another version of
    the file (`onto`: HEAD's or the index's). Refused when the two cannot be kept apart."""
    if change.after is None or before is None or onto is None:
        raise Refused(f"{change.path} has {where} changes of yours that this command would "
                      "overwrite; nothing was written", "commit or stash them first")
    carried = change.replay(onto) if change.replay is not None else None
    if carried is None:
        carried = _merge3(top, onto, before, change.after)
    if carried is None:
        raise Refused(f"your {where} changes to {change.path} touch what this command changes; "
                      "nothing was written", "commit or stash them first, then retry")
    return carried


def prepare(state: State, changes: list[FileChange], message: str) -> Pending:
    """Build the commit of `changes` on HEAD. The files on disk must still be as they were
    when `state` was read (the events log may have had lines appended)."""
    top, head, in_head, in_index, dirty = (state.top, state.head, state.in_head, state.in_index,
                                           state.dirty)
    paths = sorted(c.path for c in changes)
    planned = []
    for change in changes:
        committed, staged = _contents(top, change, in_head.get(change.path),
                                      in_index.get(change.path), change.path in dirty)
        mode = (in_index.get(change.path) or in_head.get(change.path) or Entry(
            "100644", "")).mode
        planned.append((change.path, mode, committed, staged))
    with _scratch(top) as folder:
        shas = _hash_all(top, Path(folder), [(p[0], p[2], p[3]) for p in planned])
        tree_index = Path(folder) / "index"
        plumb(top, ["read-tree", head] if head else ["read-tree", "--empty"], index=tree_index)
        plumb(top, ["update-index", "--index-info"], stdin=_info(
            (path, mode, shas, committed) for path, mode, committed, _ in planned),
            index=tree_index)
        tree = plumb(top, ["write-tree"], index=tree_index).decode().strip()
    parents = ["-p", head] if head else []
    commit = plumb(top, [*_UTF8, "commit-tree", *gitsign.signing(top), tree, *parents, "-F", "-"],
                  stdin=message.encode("utf-8")).decode().strip()
    index_info = _info((path, mode, shas, staged) for path, mode, _, staged in planned)
    undo = "".join(f"{e.mode} {e.sha}\t{p}\n" if (e := in_index.get(p)) else f"0 {_ZERO}\t{p}\n"
                   for p in paths)
    return Pending(top, head, commit, index_info, undo.encode())


# The message is UTF-8 text: a commit must say so (no `encoding` header), whatever
# i18n.commitEncoding says, or every other reader shows it garbled.
_UTF8 = ["-c", "i18n.commitEncoding=UTF-8"]


def _hash_all(top: Path, folder: Path, planned: list[tuple[str, bytes | None, bytes | None]]
              ) -> dict[tuple[str, bytes], str]:
    """Write each path's contents (what the commit and the index get) as blobs, cleaned as
    `git add` cleans that path: the contents are working-tree text, and core.autocrlf, an eol
    attribute or a clean filter may mean the blob differs (a checkout with CRLF line endings
    commits LF). One `git hash-object` per path: `--path` applies to all its files."""
    found: dict[tuple[str, bytes], str] = {}
    number = 0
    for path, *contents in planned:
        distinct = list(dict.fromkeys(c for c in contents if c is not None))
        if not distinct:
            continue
        names = []
        for content in distinct:
            target = folder / f"blob{number}"
            number += 1
            target.write_bytes(content)
            names.append(str(target))
        out = plumb(top, ["hash-object", "-w", f"--path={path}", "--", *names]).decode().split()
        found.update(((path, content), sha) for content, sha in zip(distinct, out, strict=True))
    return found


def _info(rows: Iterable[tuple[str, str, dict[tuple[str, bytes], str], bytes | None]]
          ) -> bytes:
    """`git update-index --index-info` input: a mode and blob per path, or a removal."""
    lines = [f"0 {_ZERO}\t{path}\n" if content is None else
             f"{mode} {shas[path, content]}\t{path}\n" for path, mode, shas, content in rows]
    return "".join(lines).encode("utf-8")


def _contents(top: Path, change: FileChange, head: Entry | None, index: Entry | None,
              worktree_dirty: bool) -> tuple[bytes | None, bytes | None]:
    """(what the commit holds, what the index holds) for one path."""
    before = _read(top / change.path)
    head_sha = head.sha if head else None
    index_sha = index.sha if index else None
    untracked = index is None and head is None and before is not None and not change.created
    user_changed = worktree_dirty or index_sha != head_sha or untracked
    if not user_changed:
        return change.after, change.after
    head_text = _blob(top, head_sha) if head_sha else None
    committed = change.after if head_sha is None and before is None else _carry(
        top, change, before, head_text, "uncommitted")
    if index_sha == head_sha:
        return committed, committed
    index_text = _blob(top, index_sha) if index_sha else None
    staged = _carry(top, change, before, index_text, "staged") if index_text is not None else (
        committed)
    return committed, staged


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def publish(pending: Pending, subject: str) -> str:
    """Give the index loa-mem's change, then move HEAD to the new commit. On a failure the
    index goes back as it was and GitFailed is raised (the caller restores the files)."""
    top = pending.top
    plumb(top, ["update-index", "--index-info"], stdin=pending.index_info)
    try:
        plumb(top, ["update-ref", "-m", f"commit: {subject}", "HEAD", pending.commit,
                   pending.old_head or _ZERO])
    except GitFailed:
        # the index is git's cache of the tree; if even this fails, `git status` still tells
        # the truth about the files, which the caller restores
        with contextlib.suppress(GitFailed):
            plumb(top, ["update-index", "--index-info"], stdin=pending.undo_index_info)
        raise
    return pending.commit
