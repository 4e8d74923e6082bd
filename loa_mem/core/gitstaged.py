"""What the next commit holds, as files: `validate --staged` checks them, not the working tree.

Inside a git hook, git names the index being committed in `GIT_INDEX_FILE` (`git commit -a`
and `git commit PATH` commit a temporary one, not `.git/index`). `git.scrub_process_env` drops
the variable from the environment at start-up, so that no other git call writes to that index;
`git.hook_index` is where it was, for the plumbing here, which only reads it.

When the working tree already is what is staged (nothing unstaged, nothing untracked), it is
checked in place. Otherwise the staged files are checked out into a temporary repository that
borrows this one's objects (`objects/info/alternates`) and HEAD, so that rules which read the
last commit still can, with every file as its blob holds it (no filters, no conversions); it is
deleted afterwards. Nothing of the user's repository is written
but objects: `write-tree` stores the index's trees, as `git commit` is about to.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loa_mem.core import git
from loa_mem.core.errors import GitFailed


def _git(top: Path, *args: str, check: bool = True, hook: bool = True
         ) -> subprocess.CompletedProcess[str]:
    """git in `top`; with `hook`, on the index the enclosing hook commits (if any)."""
    env = git.clean_env()
    index = git.hook_index() if hook else None
    if index:
        env["GIT_INDEX_FILE"] = index
    done = subprocess.run(["git", *args], cwd=top, env=env, capture_output=True, text=True,
                          errors="replace", check=False)
    if check and done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: {detail[-1] if detail else done.returncode}",
                        "nothing was checked; resolve what git reports, then validate again")
    return done


def _tree_is_staged(top: Path) -> bool:
    """Nothing unstaged (a stat-only difference counts, which is merely slower) and nothing
    untracked that is not ignored."""
    if _git(top, "diff-files", "--quiet", "--ignore-submodules", check=False).returncode:
        return False
    return not _git(top, "ls-files", "-z", "--others", "--exclude-standard").stdout


@contextmanager
def staged_tree(top: Path) -> Iterator[Path]:
    """A folder whose files are the staged ones: `top` itself when they are the same."""
    if _tree_is_staged(top):
        yield top
        return
    tree = _git(top, "write-tree").stdout.strip()
    head = _git(top, "rev-parse", "-q", "--verify", "HEAD", check=False).stdout.strip()
    objects = _git(top, "rev-parse", "--git-path", "objects").stdout.strip()
    copy = Path(tempfile.mkdtemp(prefix="loa-mem-staged-"))
    try:
        _git(copy, "init", "-q", hook=False)
        alternates = git.git_dir(copy) / "objects" / "info" / "alternates"
        alternates.write_text(str((top / objects).resolve()) + "\n", encoding="utf-8")
        # the files as committed: no smudge filter (git-lfs would fetch, a missing one fail)
        # and no line-ending or encoding conversion
        (git.git_dir(copy) / "info").mkdir(exist_ok=True)
        (git.git_dir(copy) / "info" / "attributes").write_text(
            "* -filter -text -ident -working-tree-encoding\n", encoding="utf-8")
        if head:
            _git(copy, "update-ref", "--no-deref", "HEAD", head, hook=False)
        _git(copy, "read-tree", tree, hook=False)
        _git(copy, "checkout-index", "-a", "-f", hook=False)
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)
