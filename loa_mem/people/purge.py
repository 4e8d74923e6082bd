"""`--purge`: rewrite a personal store's history so forgotten data is gone from git too.

Every commit is replayed, oldest first, with the forgotten preferences and session records
removed from each version of `preferences.json` and `sessions.json` (a record is dropped from
every version in which it matches, so an old value that matched goes as well). Authors, dates
and messages are kept; messages never hold keys or values. Then the branch points at the new
tip, the index is rebuilt from it, every reflog is expired and unreachable objects are pruned,
so neither `git log -p --all`, the reflogs nor `git cat-file --batch-all-objects` holds them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import git
from loa_mem.people import home as people
from loa_mem.people.writing import dump_prefs, dump_records

Drop = Callable[[str, dict[str, Any]], bool]  # (kind, record) -> whether it goes


@dataclass(frozen=True)
class Purged:
    commits: int
    objects_before: int
    objects_after: int

    def to_json(self) -> dict[str, Any]:
        return {"commits_rewritten": self.commits, "objects_before": self.objects_before,
                "objects_after": self.objects_after, "reflogs_expired": True,
                "unreachable_pruned": True}


def _filtered(name: str, text: str, drop: Drop) -> str | None:
    """The file's text without dropped records; None when nothing in it changes."""
    if name not in (people.PREFS_FILE, people.SESSIONS_FILE):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if name == people.PREFS_FILE:
        prefs = data.get("preferences") or {}
        kept = {k: p for k, p in prefs.items() if not drop("preference", p)}
        return dump_prefs(kept) if len(kept) != len(prefs) else None
    records = data.get("records") or []
    left = [r for r in records if not drop("session", r)]
    return dump_records(left) if len(left) != len(records) else None


def _commit_env(top: Path, sha: str) -> tuple[dict[str, str], str]:
    fields = git.run(top, "show", "-s", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B",
                     sha).split("\0", 6)
    names = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
             "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")
    return dict(zip(names, fields[:6], strict=True)), fields[6]


def _replay(top: Path, sha: str, parent: str | None, drop: Drop) -> str:
    entries = []
    for line in git.run(top, "ls-tree", sha).splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob":
            text = git.run(top, "cat-file", "blob", blob)
            filtered = _filtered(name, text, drop)
            if filtered is not None:
                blob = git.run(top, "hash-object", "-w", "--stdin", stdin=filtered).strip()
        entries.append(f"{mode} {kind} {blob}\t{name}\n")
    tree = git.run(top, "mktree", stdin="".join(entries)).strip()
    identity, message = _commit_env(top, sha)
    return git.commit_tree(top, tree, parent, message, identity)


def _count_objects(top: Path) -> int:
    out = git.run(top, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return len(out.split())


def rewrite(folder: str, drop: Drop) -> Purged:
    """Replay the store's history without what `drop` selects, then forget the old one."""
    top = Path(folder)
    before = _count_objects(top)
    ref = git.run(top, "symbolic-ref", "HEAD").strip()
    shas = git.run(top, "rev-list", "--reverse", "--topo-order", "HEAD").split()
    tip: str | None = None
    for sha in shas:
        tip = _replay(top, sha, tip, drop)
    if tip is not None:
        git.run(top, "update-ref", "-m", "loa-mem pref purge", ref, tip)
        git.run(top, "read-tree", "HEAD")
    for extra in ("ORIG_HEAD", "FETCH_HEAD"):
        (git.git_dir(top) / extra).unlink(missing_ok=True)
    git.run(top, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    git.run(top, "gc", "-q", "--prune=now")
    git.run(top, "prune", "--expire=now")
    return Purged(len(shas), before, _count_objects(top))
