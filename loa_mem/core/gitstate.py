"""What a repository holds before a command commits to it, read with git's plumbing.

What it knows: whether a commit can be made here now (no merge, rebase, cherry-pick, revert or
bisect in progress, HEAD on a branch, no outer git command holding the index, no path a sparse
checkout leaves out), and the `State` of the paths a command will change: HEAD's commit and
blobs, the index's entries and which working-tree files differ from them. `plumb` runs one
plumbing command with bytes in and out, and `hint` says what to do when git fails. Building
and publishing the commit from that state is `core.gitwrite`'s.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from loa_mem.core import git
from loa_mem.core.errors import GitFailed, Refused


@dataclass
class Entry:
    """A path's mode and blob, in HEAD's tree or in the index."""

    mode: str
    sha: str


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
    out = plumb(top, ["ls-files", "-t", "-z", "--", *missing]).decode("utf-8", "surrogateescape")
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


def plumb(top: Path, args: list[str], stdin: bytes | None = None,
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


def _in_head(top: Path, paths: list[str], in_index: dict[str, Entry]
             ) -> tuple[str | None, dict[str, Entry]]:
    """HEAD's commit and the blobs `paths` have in it, from one `git cat-file`. A blob's mode
    is only needed for a path the index does not hold (then `ls-tree` reads it)."""
    if any("\n" in p or "\r" in p for p in paths):
        head = _head(top)
        return head, _tree_entries(top, head, paths)
    names = ["HEAD^{commit}", *(f"HEAD:{p}" for p in paths)]
    out = plumb(top, ["cat-file", "--batch-check"], stdin="".join(n + "\n" for n in names)
               .encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
    records = out.split("\n")[:len(names)]
    if len(records) != len(names) or records[0].endswith(" missing"):
        return None, {}
    head = records[0].split()[0]
    found: dict[str, Entry] = {}
    for path, record in zip(paths, records[1:], strict=True):
        if record.endswith(" missing"):
            continue
        sha, kind = record.split()[:2]
        if kind != "blob" or path not in in_index:
            return head, _tree_entries(top, head, paths)
        found[path] = Entry(in_index[path].mode, sha)
    return head, found


def _head(top: Path) -> str | None:
    out = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=top,
                         env=git.clean_env(), capture_output=True, text=True, check=False)
    return out.stdout.strip() or None


def _tree_entries(top: Path, head: str | None, paths: list[str]) -> dict[str, Entry]:
    if head is None:
        return {}
    out = plumb(top, ["ls-tree", "-z", "--full-tree", head, "--", *paths])
    found = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, _kind, sha = meta.split()
            found[path] = Entry(mode, sha)
    return found


def _index_entries(top: Path, paths: list[str]) -> tuple[dict[str, Entry], set[str]]:
    """The index entries of `paths`, and those whose working-tree content is not what the index
    holds, from one `git ls-files` (`-m` compares content where the stat cache is stale, as
    `git diff` does: loa-mem's own index updates carry no stat data)."""
    out = plumb(top, ["ls-files", "-t", "-c", "-m", "-s", "-z", "--", *paths])
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
                found[path] = Entry(mode, sha)
    return found, differs


@dataclass(frozen=True)
class State:
    """HEAD, the index and the working tree of some paths, read before a command writes."""

    top: Path
    head: str | None
    in_head: dict[str, Entry]
    in_index: dict[str, Entry]
    dirty: set[str]


def inspect(top: Path, paths: list[str]) -> State:
    in_index, dirty = _index_entries(top, paths)
    head, in_head = _in_head(top, paths, in_index)
    return State(top, head, in_head, in_index, dirty)
