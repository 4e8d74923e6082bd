"""meta, pin and unpin: show and edit a file's sidecar, with its hotness computed live."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock, yamledit
from loa_mem.core.errors import NothingToDo, Refused
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta
from loa_mem.workingset import rules as ws_rules


@dataclass(frozen=True)
class MetaShown:
    path: str
    sidecar: str
    exists: bool
    fields: dict[str, Any]
    hotness: float
    factors: dict[str, float]
    changed: list[str] = field(default_factory=list)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sidecar": self.sidecar, "exists": self.exists,
                "meta": self.fields, "hotness": self.hotness,
                "hotness_factors": self.factors, "weights": ws_rules.WEIGHTS,
                "changed": self.changed, "commit": self.commit}


def _target(store: Any, given: str) -> tuple[ws.Settings, str]:
    s = ws.settings(store)
    rel = ws.existing_file(store, given)
    reason = ws.own_file_reason(store, s, rel)
    if reason:
        raise Refused(f"{rel} has no sidecar ({reason})", "name a working-tree file")
    return s, rel


def _shown(store: Any, s: ws.Settings, sidecar: meta.Sidecar, changed: list[str],
           commit: str | None, manifests: ws.Manifests | None = None) -> MetaShown:
    manifests = manifests or ws.Manifests(store, s)
    value, factors = ws.hotness(manifests, sidecar.rel, sidecar.pinned)
    return MetaShown(sidecar.rel, sidecar.path, sidecar.exists or bool(changed),
                     yamledit.plain(sidecar.doc), value, factors, changed, commit)


def _archived(store: Any, given: str) -> meta.Sidecar | None:
    """The sidecar of a file gc archived: it stays where the file was, so `meta` still shows
    where the file went and its postmortem."""
    rel = ws.relative(store, given)
    if (Path(store.top) / rel).exists():
        return None
    sidecar = meta.load(Path(store.top), rel)
    return sidecar if sidecar is not None and sidecar.doc.get("archived_in") else None


def show(store: Any, given: str) -> MetaShown:
    """The sidecar as it is (or the defaults it would get), and hotness now."""
    archived = _archived(store, given)
    if archived is not None:
        return _shown(store, ws.settings(store), archived, [], None)
    s, rel = _target(store, given)
    sidecar = meta.load(Path(store.top), rel)
    if sidecar is None:
        sidecar = meta.Sidecar(rel, meta.defaults(rel, "(not created yet)", clock.now_iso()),
                               False)
    return _shown(store, s, sidecar, [], None)


def _write(store: Any, s: ws.Settings, rel: str, op: str, actor: str, commit: bool,
           edit: Any) -> MetaShown:
    with store.write(op, actor, commit) as txn:
        top = Path(store.top)
        sidecar = meta.ensure(top, rel, actor)
        manifests = ws.Manifests(store, s)
        changed = edit(sidecar, manifests, txn)
        sidecar.set("hotness", ws.hotness(manifests, rel, sidecar.pinned)[0])
        now = clock.now_iso()
        sidecar.stamp(now)
        txn.put(sidecar.path, sidecar.text())
        txn.event(op, [], None, path=rel, changed=changed)
        txn.what = f"{rel} ({', '.join(changed)})" if changed else rel
    return _shown(store, s, sidecar, changed, txn.commit_sha, manifests)


def set_fields(store: Any, given: str, assignments: list[str], actor: str,
               commit: bool = True) -> MetaShown:
    s, rel = _target(store, given)
    parsed = [meta.parse_assignment(a) for a in assignments]
    if not parsed:
        raise NothingToDo("nothing to set", "pass --set key=value")
    from loa_mem.core import schemacheck

    def edit(sidecar: meta.Sidecar, manifests: ws.Manifests, txn: Any) -> list[str]:
        del txn
        changed = []
        for key, value in parsed:
            before = yamledit.plain(sidecar.doc)
            meta.apply_assignment(sidecar, key, value)
            if yamledit.plain(sidecar.doc) != before:
                changed.append(key)
            if key == "pin" and value:
                _join(manifests, rel)
        found = schemacheck.problems("meta.schema.json", yamledit.plain(sidecar.doc))
        if found:
            raise Refused(f"{sidecar.path}: {found[0].dotted}: {found[0].message}",
                          "nothing was written")
        return changed

    return _write(store, s, rel, "meta", actor, commit, _with_manifests(edit))


def _join(manifests: ws.Manifests, rel: str) -> None:
    """A pinned file is always in the working set: on the hot list, off the cold list."""
    manifests.drop_cold(rel)
    if manifests.hot_item(rel) is None:
        manifests.touch(rel, "pinned", clock.now_iso(), count=0)


def _with_manifests(edit: Any) -> Any:
    """Write the manifests too when the edit put the file on the hot list (pin)."""
    def wrapped(sidecar: meta.Sidecar, manifests: ws.Manifests, txn: Any) -> list[str]:
        before = (manifests.hot_paths(), manifests.cold_paths())
        changed: list[str] = edit(sidecar, manifests, txn)
        if (manifests.hot_paths(), manifests.cold_paths()) != before:
            for rel, text in manifests.texts(clock.now_iso()).items():
                txn.put(rel, text)
        return changed
    return wrapped


def pin(store: Any, given: str, on: bool, actor: str, commit: bool = True) -> MetaShown:
    """pin: never evicted, always in the working set; unpin: evictable again."""
    s, rel = _target(store, given)
    current = meta.load(Path(store.top), rel)
    if (current is not None and current.pinned) == on:
        state = "pinned" if on else "not pinned"
        raise NothingToDo(f"{rel} is already {state}", "nothing to change")

    def edit(sidecar: meta.Sidecar, manifests: ws.Manifests, txn: Any) -> list[str]:
        del txn
        sidecar.set("pin", on)
        if on:
            _join(manifests, rel)
        return ["pin"]

    return _write(store, s, rel, "pin" if on else "unpin", actor, commit,
                  _with_manifests(edit))
