"""restore PATH: bring back a file gc archived or compressed, byte for byte, or one that was
deleted, from git history; or put an evicted file back in the working set.

Where the original is, in order: the last gc event that archived or compressed PATH (an
archive copy, or the commit before the compression), else the newest commit that holds PATH.
A file whose current bytes git does not have (uncommitted work) is never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import clock, githistory
from loa_mem.core.errors import NotFound, NothingToDo, Refused
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta


@dataclass(frozen=True)
class RestoredFile:
    path: str
    source: str
    action: str
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"op": "restore", "path": self.path, "from": self.source, "action": self.action,
                "commit": self.commit}


@dataclass(frozen=True)
class _Origin:
    data: bytes
    source: str
    archive_copy: str | None = None


def _gc_record(store: Any, rel: str) -> dict[str, Any] | None:
    """The newest gc action that took `rel` away (archived or compressed), unless a restore of
    it came after."""
    for event in reversed(store.read_events()):
        if event.get("op") == "restore" and event.get("path") == rel:
            return None
        if event.get("op") != "gc":
            continue
        for action in event.get("files") or []:
            if isinstance(action, dict) and action.get("path") == rel and action.get(
                    "action") in ("archived", "compressed"):
                return action
    return None


def _from_history(top: Path, path: str) -> tuple[bytes, str] | None:
    sha = githistory.last_commit_with(top, path)
    if sha is None:
        return None
    data = githistory.file_bytes_at(top, sha, path)
    return (data, f"{path}@{sha[:12]}") if data is not None else None


def _origin(store: Any, rel: str) -> _Origin | None:
    top = Path(store.top)
    record = _gc_record(store, rel)
    if record is not None and record.get("action") == "archived" and record.get("to"):
        copy = str(record["to"])
        if (top / copy).is_file():
            return _Origin((top / copy).read_bytes(), copy, copy)
        found = _from_history(top, copy)
        return _Origin(found[0], found[1]) if found else None
    if record is not None and record.get("original_commit"):
        sha = str(record["original_commit"])
        data = githistory.file_bytes_at(top, sha, rel)
        if data is not None:
            return _Origin(data, f"{rel}@{sha[:12]}")
    found = _from_history(top, rel)
    return _Origin(found[0], found[1]) if found else None


def _check_overwrite(store: Any, rel: str, origin: _Origin) -> bool:
    """True when the file must be written; refuses to overwrite uncommitted work."""
    from loa_mem.core.git import uncommitted

    full = Path(store.top) / rel
    if not full.exists():
        return True
    if full.read_bytes() == origin.data:
        return False
    if uncommitted(Path(store.top), [rel]):
        raise Refused(f"{rel} has changes git has not recorded; restoring would overwrite them",
                      "commit or move the file first")
    return True


def restore_path(store: Any, given: str, actor: str, commit: bool = True) -> RestoredFile:
    s = ws.settings(store)
    rel = ws.relative(store, given)
    if ws.own_file_reason(store, s, rel) and not rel.endswith(ws.SIDECAR_SUFFIX):
        raise Refused(f"{rel} is one of loa-mem's own files",
                      "restore memories by id (loa-mem restore MEM-...)")
    origin = _origin(store, rel)
    if origin is None:
        if (Path(store.top) / rel).is_file():
            origin = _Origin((Path(store.top) / rel).read_bytes(), rel)
        elif githistory.shallow_cuts(Path(store.top)):
            raise NotFound(f"no version of {rel} in the history this clone holds",
                           githistory.SHALLOW_HINT)
        else:
            raise NotFound(f"no version of {rel} in this repository's git history",
                           "check the path; `git log --all -- PATH` lists what git knows")
    write = _check_overwrite(store, rel, origin)
    with store.write("restore", actor, commit) as txn:
        manifests = ws.Manifests(store, s)
        now = clock.now_iso()
        in_working_set = rel in manifests.working_set()
        if not write and in_working_set and origin.archive_copy is None:
            raise NothingToDo(f"{rel} is as it was and in the working set", "nothing to restore")
        if write:
            txn.put(rel, origin.data)
        if origin.archive_copy is not None:
            txn.delete(origin.archive_copy)
        manifests.drop_cold(rel)
        manifests.touch(rel, "restored", now)
        for path, text in manifests.texts(now).items():
            txn.put(path, text)
        sidecar = meta.ensure(Path(store.top), rel, actor)
        sidecar.clear("archived_in", "archive_date", "compressed_date")
        sidecar.set("hotness", ws.hotness(manifests, rel, sidecar.pinned)[0])
        sidecar.stamp(now)
        txn.put(sidecar.path, sidecar.text())
        action = "restored" if write else "returned to the working set"
        source = origin.source if write or origin.archive_copy else "the working tree"
        txn.event("restore", [], None, path=rel, source=source, action=action)
        txn.what = f"{rel} from {source}" if write else f"{rel} back in the working set"
    return RestoredFile(rel, source, action, txn.commit_sha)
