"""init (create a store) and commit (commit what --no-commit left pending)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import events, git
from loa_mem.core.errors import GitFailed, NotARepo, NothingToDo, Refused, UsageError
from loa_mem.core.filewrite import atomic_write
from loa_mem.memory import config as config_mod
from loa_mem.memory import rules as model
from loa_mem.memory.store import Store

_CONFIG_TEMPLATE = """\
# loa-mem project configuration: Loa's memory_schema (see README, "Configuration").
# Every key is optional; a missing key takes the default shown here.
memory_schema:
  enabled: true
  storage_dir: grimoires/loa/memory
  categories:
{categories}
  auto_capture: {decisions: true, errors: true, learnings: true}
  retrieval:
    max_per_query: 10
    min_confidence: 0.6
    recency_weight: 0.2
    integrate_with_oracle: true
  lifecycle:
    auto_archive: true
    archive_dir: grimoires/loa/memory/archive
    check_on_session_start: true
    warn_before_archive_days: 7
"""
CONFIG_TEXT = _CONFIG_TEMPLATE.replace("{categories}", "\n".join(
    f"    {r.name + ':':<12}{{ttl: {r.ttl + ',':<11}confidence_required: {r.floor}, "
    f"storage_file: {r.storage_file}}}" for r in model.DEFAULT_RULES))

_HEADER = (
    "# Loa memory: {plural}. Managed by loa-mem; hand edits and comments are kept.\n"
    "# One list item per entry; `loa-mem validate` checks this file.\n"
)


@dataclass(frozen=True)
class Initialized:
    root: str
    created: list[str]
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "created": self.created, "commit": self.commit}


def _plural(category: str) -> str:
    return {"fact": "facts", "decision": "decisions", "learning": "learnings", "error": "errors",
            "preference": "preferences"}[category]


def init(root: str | None) -> Initialized:
    # LOA_MEM_ROOT chooses the store for init as for every other command (spec section 5).
    top = Path(root or os.environ.get("LOA_MEM_ROOT") or ".").resolve()
    if top.exists() and not top.is_dir():
        raise UsageError(f"{top} is a file, not a folder",
                         "give --root (or LOA_MEM_ROOT) the folder to make a store in; "
                         "nothing was written")
    found = git.find_top(top) if top.exists() else None
    bare = git.bare_repository(top) if found is None and top.exists() else None
    if bare is not None:
        raise NotARepo(f"{bare} is a bare repository: it has no working tree for memory files",
                       f"clone it (git clone {bare}) and run `loa-mem init` in the clone")
    if found is None:
        git.init(top)
    else:
        top = found
    from loa_mem.core import gitstate

    created: list[str] = []
    config_path = top / config_mod.CONFIG_FILE
    gitstate.refuse_left_out(top, [config_mod.CONFIG_FILE, ".gitattributes"])
    if not config_path.exists():
        atomic_write(config_path, CONFIG_TEXT)
        created.append(config_mod.CONFIG_FILE)
    store = Store.open(str(top))
    gitstate.refuse_left_out(top, [*(store.rel(store.storage / r.storage_file)
                                     for r in store.config.rules()), store.events_rel])
    for rule in store.config.rules():
        path = store.storage / rule.storage_file
        if not path.exists():
            atomic_write(path, _HEADER.format(plural=_plural(rule.name)))
            created.append(store.rel(path))
    if not store.events_path.exists():
        atomic_write(store.events_path, "")
        created.append(store.events_rel)
    from loa_mem.core import features

    attributes = _bytes(top / ".gitattributes")
    yours = attributes is not None and bool(git.uncommitted(top, [".gitattributes"]))
    for on_init in features.hooks("on_init"):
        created.extend(on_init(store))  # type: ignore[operator]
    sha = _commit_init(store, created, attributes, yours) if created else None
    store.close()
    return Initialized(str(top), created, sha)


def _commit_init(store: Store, created: list[str], attributes: bytes | None, yours: bool
                 ) -> str | None:
    """Commit what init wrote; if that fails, or would commit the user's own uncommitted
    lines of .gitattributes, put every file back as it was (nothing written)."""
    from loa_mem.core import gitstate, lock

    top = store.top
    with lock.hold(store.cache_dir / "write.lock", "init", store.config.lock_timeout):
        before = {".gitattributes": attributes, store.events_rel: _bytes(store.events_path)}
        before.update({p: None for p in created if p != ".gitattributes"})
        paths = list(dict.fromkeys([*created, store.events_rel]))
        staged = git.run(top, "ls-files", "-s", "-z", "--", *paths)
        if yours and ".gitattributes" in created:
            _undo_init(top, paths, before, staged)
            raise Refused(".gitattributes has changes git has not committed, which init would "
                          "commit with its own lines; nothing was written",
                          "commit or stash them first, then retry")
        events.append(store.events_path, [events.make("init", [], events.actor())])
        try:
            return git.commit(top, paths, git.message("init", "create the memory store", []))
        except GitFailed as failure:
            _undo_init(top, paths, before, staged)
            failure.hint = gitstate.hint(f"{failure.message}\n{failure.hint}")
            raise


def _bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def _undo_init(top: Path, paths: list[str], before: dict[str, bytes | None],
               staged: str) -> None:
    """The commit failed (signing, say): every file init wrote, and its index entry, goes
    back as it was, so that a second `init` starts again rather than finding a store.
    `staged`: the index entries of `paths` before (`git ls-files -s -z`)."""
    entries = {r.split("\t", 1)[1]: r.split()[:2] for r in staged.split("\0") if "\t" in r}
    info = "".join(f"{entries[p][0]} {entries[p][1]}\t{p}\n" if p in entries else
                   f"0 {'0' * 40}\t{p}\n" for p in paths)
    git.run(top, "update-index", "--index-info", stdin=info, check=False)
    for rel in paths:
        old = before.get(rel)
        if old is None:
            (top / rel).unlink(missing_ok=True)
        else:
            atomic_write(top / rel, old)


@dataclass(frozen=True)
class Committed:
    commit: str
    paths: list[str]
    ops: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "paths": self.paths, "ops": self.ops}


def managed_dirs(store: Store) -> list[str]:
    from loa_mem.core import features

    dirs = [store.config.storage_dir, store.config.archive_dir]
    for more in features.hooks("managed_dirs"):
        dirs.extend(more(store))  # type: ignore[operator]
    return list(dict.fromkeys(dirs))


def commit_pending(store: Store) -> Committed:
    from loa_mem.core import lock

    with lock.hold(store.cache_dir / "write.lock", "commit", store.config.lock_timeout):
        paths = git.pending(store.top, managed_dirs(store))
        if not paths:
            raise NothingToDo("nothing is pending", "every loa-mem change is already committed")
        new_events = _uncommitted_events(store)
        ops = list(dict.fromkeys(str(e.get("op")) for e in new_events)) or ["edit"]
        ids = [i for e in new_events for i in e.get("ids") or [] if model.ID_PATTERN.match(i)]
        message = git.message("commit", f"{len(new_events)} pending operation(s): "
                              + ", ".join(ops), ids, {"Loa-Ops": " ".join(ops)})
        sha = git.commit(store.top, paths, message)
    if sha is None:
        raise NothingToDo("nothing is pending", "the working files match the last commit")
    return Committed(sha, paths, ops)


def _uncommitted_events(store: Store) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for log in store.event_logs():
        committed = ""
        if git.has_commits(store.top):
            committed = git.run(store.top, "show", f"HEAD:{log}", check=False)
        path = store.top / log
        current = path.read_bytes().decode("utf-8", "replace") if path.exists() else ""
        # not only a tail: a pending `--no-commit` line sits before the lines of later
        # commands, each committed alone, and a hand edit or a merge may reorder lines
        # (events.parse_lines splits at "\n" only, as here)
        found += events.parse_lines("\n".join(events.unmatched(current.split("\n"),
                                                                committed.split("\n"))))
    return found
