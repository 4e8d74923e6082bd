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
(update the index, then move HEAD).
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
class _Entry:
    mode: str
    sha: str


@dataclass
class Pending:
    """A commit object that is built but not yet on any branch."""

    top: Path
    old_head: str | None
    commit: str
    index_info: bytes
    undo_index_info: bytes


class Busy(Exception):
    """git is in the middle of something here (a hook of an outer command holds the index)."""


def state_problem(top: Path) -> Refused | None:
    """Why no commit can be made here now, as a refusal (None when it can)."""
    gdir = git.git_dir(top)
    for marker, what, how in (
            ("MERGE_HEAD", "a merge", "git merge --continue, or git merge --abort"),
            ("rebase-merge", "a rebase", "git rebase --continue, or git rebase --abort"),
            ("rebase-apply", "a rebase or `git am`", "git rebase/am --continue or --abort"),
            ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue or --abort"),
            ("REVERT_HEAD", "a revert", "git revert --continue or --abort"),
            ("BISECT_LOG", "a bisect", "git bisect reset")):
        if (gdir / marker).exists():
            return Refused(f"{what} is in progress in this repository; nothing was written",
                           f"finish it first ({how}), or pass --no-commit to write only")
    head = (gdir / "HEAD").read_text(encoding="utf-8", errors="replace").strip() if (
        gdir / "HEAD").exists() else ""
    if head and not head.startswith("ref:"):
        return Refused("HEAD is detached, so a commit would be on no branch; nothing was written",
                       "switch to a branch (git switch NAME, or git switch -c NAME), or pass "
                       "--no-commit to write only")
    return None


def refuse_left_out(top: Path, paths: list[str]) -> None:
    """Refuse to write a path that a sparse checkout leaves out of the working tree: it is
    absent on disk but not deleted, so writing it would replace the committed file with only
    this command's lines. One `git ls-files` call, and only for paths absent on disk."""
    missing = [p for p in paths if not (top / p).exists()]
    if not missing:
        return
    out = _git(top, ["ls-files", "-t", "-z", "--", *missing]).decode("utf-8", "surrogateescape")
    for record in out.split("\0"):
        if record.startswith("S "):
            path = record[2:]
            folder = path.rsplit("/", 1)[0] if "/" in path else path
            raise Refused(f"{path} is left out of this sparse checkout, so writing it would "
                          "replace the committed file; nothing was written",
                          f"bring it back (git sparse-checkout add {folder}, or git "
                          "sparse-checkout disable), then retry")


def index_busy(top: Path) -> bool:
    """An outer git command (a hook's `git commit`, say) holds this repository's index."""
    return (git.git_dir(top) / "index.lock").exists()


def _git(top: Path, args: list[str], stdin: bytes | None = None,
         index: Path | None = None) -> bytes:
    env = git.clean_env()
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    result = subprocess.run(["git", *args], cwd=top, env=env, input=stdin,
                            capture_output=True, check=False)
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().split("\n")
        detail = next((line for line in lines if line.startswith(("fatal:", "error:"))),
                      lines[-1]).removeprefix("fatal: ").removeprefix("error: ")
        command = args[2] if args[0] == "-c" else args[0]
        raise GitFailed(f"git {command} failed: {detail or result.returncode}", hint(detail))
    return result.stdout


def hint(detail: str) -> str:
    """What to do about a failed git command, from what git said."""
    if "commit.gpgSign" in detail or ("sign" in detail and (
            "gpg" in detail or "ssh" in detail or "key" in detail)):
        return ("commits here are signed (commit.gpgSign) and signing failed: fix it (try `git "
                "commit --allow-empty -m test`) or turn it off for this repository (git config "
                "commit.gpgSign false); nothing was changed")
    if "would be replaced by" in detail:
        return ("core.safecrlf refuses a file whose line endings core.autocrlf or an eol "
                "attribute would change; loa-mem writes a new file with LF: set git config "
                "core.safecrlf warn, then retry; nothing was changed")
    if ".lock" in detail:
        return "another git command is running here; retry when it ends; nothing was changed"
    if any(sign in detail.lower() for sign in (
            "tell me who you are", "user.email", "email was given", "auto-detect email",
            "name was given", "empty ident")):
        return ("set an identity (git config user.name NAME; git config user.email ADDRESS), "
                "then retry; nothing was changed")
    return "retry when git works again; nothing was changed"


def _in_head(top: Path, paths: list[str], in_index: dict[str, _Entry]
             ) -> tuple[str | None, dict[str, _Entry]]:
    """HEAD's commit and the blobs `paths` have in it, from one `git cat-file`. A blob's mode
    is only needed for a path the index does not hold (then `ls-tree` reads it)."""
    if any("\n" in p or "\r" in p for p in paths):
        head = _head(top)
        return head, _tree_entries(top, head, paths)
    names = ["HEAD^{commit}", *(f"HEAD:{p}" for p in paths)]
    out = _git(top, ["cat-file", "--batch-check"], stdin="".join(n + "\n" for n in names)
               .encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
    records = out.split("\n")[:len(names)]
    if len(records) != len(names) or records[0].endswith(" missing"):
        return None, {}
    head = records[0].split()[0]
    found: dict[str, _Entry] = {}
    for path, record in zip(paths, records[1:], strict=True):
        if record.endswith(" missing"):
            continue
        sha, kind = record.split()[:2]
        if kind != "blob" or path not in in_index:
            return head, _tree_entries(top, head, paths)
        found[path] = _Entry(in_index[path].mode, sha)
    return head, found


def _head(top: Path) -> str | None:
    out = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=top,
                         env=git.clean_env(), capture_output=True, text=True, check=False)
    return out.stdout.strip() or None


def _tree_entries(top: Path, head: str | None, paths: list[str]) -> dict[str, _Entry]:
    if head is None:
        return {}
    out = _git(top, ["ls-tree", "-z", "--full-tree", head, "--", *paths])
    found = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, _kind, sha = meta.split()
            found[path] = _Entry(mode, sha)
    return found


def _index_entries(top: Path, paths: list[str]) -> tuple[dict[str, _Entry], set[str]]:
    """The index entries of `paths`, and those whose working-tree content is not what the index
    holds, from one `git ls-files` (`-m` compares content where the stat cache is stale, as
    `git diff` does: loa-mem's own index updates carry no stat data)."""
    out = _git(top, ["ls-files", "-t", "-c", "-m", "-s", "-z", "--", *paths])
    found = {}
    differs = set()
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            tag, mode, sha, stage = meta.split()
            if stage != "0":
                raise Refused(f"{path} has unresolved merge conflicts; nothing was written",
                              "resolve them (or run `loa-mem repair`), then retry")
            if tag in ("C", "S"):  # skip-worktree: git does not look, so loa-mem must not trust
                differs.add(path)
            else:
                found[path] = _Entry(mode, sha)
    return found, differs


def _blob(top: Path, sha: str) -> bytes:
    return _git(top, ["cat-file", "blob", sha])


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


@dataclass(frozen=True)
class State:
    """HEAD, the index and the working tree of some paths, read before a command writes."""

    top: Path
    head: str | None
    in_head: dict[str, _Entry]
    in_index: dict[str, _Entry]
    dirty: set[str]


def inspect(top: Path, paths: list[str]) -> State:
    in_index, dirty = _index_entries(top, paths)
    head, in_head = _in_head(top, paths, in_index)
    return State(top, head, in_head, in_index, dirty)


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
        mode = (in_index.get(change.path) or in_head.get(change.path) or _Entry(
            "100644", "")).mode
        planned.append((change.path, mode, committed, staged))
    with _scratch(top) as folder:
        shas = _hash_all(top, Path(folder), [(p[0], p[2], p[3]) for p in planned])
        tree_index = Path(folder) / "index"
        _git(top, ["read-tree", head] if head else ["read-tree", "--empty"], index=tree_index)
        _git(top, ["update-index", "--index-info"], stdin=_info(
            (path, mode, shas, committed) for path, mode, committed, _ in planned),
            index=tree_index)
        tree = _git(top, ["write-tree"], index=tree_index).decode().strip()
    parents = ["-p", head] if head else []
    commit = _git(top, [*_UTF8, "commit-tree", *gitsign.signing(top), tree, *parents, "-F", "-"],
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
        out = _git(top, ["hash-object", "-w", f"--path={path}", "--", *names]).decode().split()
        found.update(((path, content), sha) for content, sha in zip(distinct, out, strict=True))
    return found


def _info(rows: Iterable[tuple[str, str, dict[tuple[str, bytes], str], bytes | None]]
          ) -> bytes:
    """`git update-index --index-info` input: a mode and blob per path, or a removal."""
    lines = [f"0 {_ZERO}\t{path}\n" if content is None else
             f"{mode} {shas[path, content]}\t{path}\n" for path, mode, shas, content in rows]
    return "".join(lines).encode("utf-8")


def _contents(top: Path, change: FileChange, head: _Entry | None, index: _Entry | None,
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
    _git(top, ["update-index", "--index-info"], stdin=pending.index_info)
    try:
        _git(top, ["update-ref", "-m", f"commit: {subject}", "HEAD", pending.commit,
                   pending.old_head or _ZERO])
    except GitFailed:
        # the index is git's cache of the tree; if even this fails, `git status` still tells
        # the truth about the files, which the caller restores
        with contextlib.suppress(GitFailed):
            _git(top, ["update-index", "--index-info"], stdin=pending.undo_index_info)
        raise
    return pending.commit


def subject_of(message: str) -> str:
    return message.split("\n", 1)[0]
