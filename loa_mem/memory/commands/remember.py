"""remember and supersede: the two ways an entry comes into being."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import Refused
from loa_mem.core.sensitive import refuse_sensitive
from loa_mem.memory import rules as model
from loa_mem.memory.store import Store

_PLACEHOLDER_ID = "MEM-00000000-000"


@dataclass(frozen=True)
class Remembered:
    id: str
    created: bool
    category: str
    summary: str
    path: str
    commit: str | None = None
    supersedes: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "created": self.created, "category": self.category,
                                "path": self.path, "commit": self.commit}
        if self.supersedes:
            data["supersedes"] = self.supersedes
        return data


def screen(request: model.NewEntry) -> None:
    model.check_category(request.category)
    model.check_content(request.content)
    refuse_sensitive(request.content, "content")
    for label, value in (("summary", request.summary), ("--file", request.file_path),
                         ("--phase", request.phase), ("--session", request.session),
                         ("--agent", request.agent)):
        if value:
            refuse_sensitive(value, label)
    for tag in request.tags:
        refuse_sensitive(tag, "a tag")


def _check_related(store: Store, related: tuple[str, ...]) -> None:
    for memory_id in related:
        store.entry(model.check_id(memory_id))


def remember(store: Store, request: model.NewEntry, actor: str, commit: bool = True) -> Remembered:
    store.config.require_memory("remember")
    screen(request)
    rule = store.config.rule(request.category)
    draft = model.build_entry(request, _PLACEHOLDER_ID, rule, clock.now())
    _check_related(store, request.related)
    with store.write("remember", actor, commit) as txn:
        existing = store.index.duplicate_of(request.category, request.content, clock.now_iso())
        if existing:
            return Remembered(existing, False, request.category, store.entry(existing).data.get(
                "summary", ""), store.entry(existing).path)
        entry = {**draft, "id": store.next_id(draft["source"]["timestamp"][:10].replace("-", ""))}
        path = txn.add(entry)
        txn.what = f"{entry['id']} {entry['summary']}"
        txn.event("remember", [entry["id"]], category=request.category)
    return Remembered(entry["id"], True, request.category, entry["summary"],
                      path, txn.commit_sha)


def chain_head(store: Store, memory_id: str) -> str:
    seen = {memory_id}
    current = store.entry(memory_id).data
    while current.get("superseded_by"):
        nxt = str(current["superseded_by"])
        if nxt in seen:
            break
        seen.add(nxt)
        try:
            current = store.entry(nxt).data
        except Exception:
            return nxt
    return str(current.get("id"))


def supersede(store: Store, old_id: str, request: model.NewEntry, actor: str,
              commit: bool = True) -> Remembered:
    store.config.require_memory("supersede")
    old = store.entry(model.check_id(old_id))
    if not request.category:
        request = request._replace(category=str(old.data.get("category")))
    # the replacement is about the same thing: it keeps the old entry's tags, plus new ones
    kept = [str(t) for t in old.data.get("tags") or [] if isinstance(t, str)]
    request = request._replace(tags=tuple(dict.fromkeys([*kept, *request.tags])))
    if old.data.get("superseded_by"):
        head = chain_head(store, old_id)
        raise Refused(f"{old_id} is already superseded; the head of its chain is {head}",
                      f"supersede {head} instead")
    if old.in_archive or old.data.get("archived"):
        raise Refused(f"{old_id} is archived", "restore it first, or remember a new entry")
    if model.normalize(request.content) == model.normalize(str(old.data.get("content", ""))):
        raise Refused(f"the new content is the same as {old_id}'s", "change the content")
    screen(request)
    rule = store.config.rule(request.category)
    draft = model.build_entry(request, _PLACEHOLDER_ID, rule, clock.now())
    _check_related(store, request.related)
    with store.write("supersede", actor, commit) as txn:
        old = store.entry(old_id)
        if old.data.get("superseded_by"):
            raise Refused(f"{old_id} was superseded meanwhile by {old.data['superseded_by']}",
                          "supersede the newer entry instead")
        new_id = store.next_id(draft["source"]["timestamp"][:10].replace("-", ""))
        entry = {**draft, "id": new_id, "supersedes": old_id}

        def link(mapping: Any) -> None:
            mapping["superseded_by"] = new_id

        path = txn.add(entry)
        txn.change(old, link)
        txn.what = f"{new_id} supersedes {old_id}"
        txn.event("supersede", [new_id, old_id], supersedes=old_id)
    return Remembered(new_id, True, request.category, entry["summary"],
                      path, txn.commit_sha, old_id)
