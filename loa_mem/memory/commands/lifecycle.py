"""archive, forget, restore, feedback and application tracking: what happens to an entry after
it is written. Every one of them is logged, committed, and can be undone from git history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loa_mem.core import clock, githistory, textfile, yamledit, yamlio
from loa_mem.core.errors import InvalidFile, NotFound, NothingToDo, Refused
from loa_mem.core.sensitive import refuse_sensitive
from loa_mem.memory import rules as model
from loa_mem.memory.index import Row
from loa_mem.memory.store import Store
from loa_mem.memory.transaction import Transaction

ARCHIVE_FIELDS = ("archived", "archived_at", "archive_reason")


@dataclass(frozen=True)
class Changed:
    """The outcome of a command that changed (or, with --dry-run, would change) entries."""

    op: str
    ids: list[str]
    reason: str | None = None
    dry_run: bool = False
    commit: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "ids": self.ids, "reason": self.reason, "dry_run": self.dry_run,
                "commit": self.commit, **self.details}


def span_text(store: Store, row: Row, cache: dict[str, list[str]] | None = None) -> str:
    cache = {} if cache is None else cache
    if row.path not in cache:
        cache[row.path] = textfile.read_text(store.top / row.path, row.path).splitlines(True)
    return "".join(cache[row.path][row.first_line - 1:row.last_line])


def _archived_copy(store: Store, row: Row, reason: str, when: str,
                   cache: dict[str, list[str]]) -> str:
    indent, _ = store.index.layout(row.path)
    text = span_text(store, row, cache)
    quick = _append_archive_fields(text, row.data, reason, when)
    if quick is not None:
        return quick

    def mark(mapping: Any) -> None:
        mapping["archived"] = True
        mapping["archived_at"] = when
        mapping["archive_reason"] = reason
    return yamledit.edit_item(text, indent, mark)


def _append_archive_fields(text: str, data: dict[str, Any], reason: str,
                           when: str) -> str | None:
    """The archive fields appended as lines (`yamlio.append_fields`): a ruamel round trip costs
    ~20 ms an entry, which made gc of hundreds of expired entries take many seconds."""
    if any(key in data for key in ARCHIVE_FIELDS):
        return None
    return yamlio.append_fields(text, data, {"archived": True, "archived_at": when,
                                             "archive_reason": reason})


def move_to_archive(store: Store, txn: Transaction, rows: list[Row], reason: str,
                    words: str | None = None) -> None:
    """Move active entries to the archive file of their category (shared with gc). `reason`
    is the kind recorded in each entry, `words` what the events log says (default: the kind)."""
    when = clock.now_iso()
    cache: dict[str, list[str]] = {}
    for row in rows:
        category = str(row.data.get("category"))
        txn.add_text(category, _archived_copy(store, row, reason, when, cache), row.id, True)
        txn.remove(row)
    txn.event("archive", [r.id for r in rows], words or reason)


def expired_rows(store: Store) -> list[Row]:
    now = clock.now_iso()
    return store.index.where("in_archive=0 AND expires_at IS NOT NULL AND expires_at<=? "
                             "ORDER BY id", (now,))


def archive(store: Store, ids: list[str], expired: bool, reason: str | None, dry_run: bool,
            actor: str, commit: bool = True) -> Changed:
    store.config.require_memory("archive")
    # free words, like every --reason; one of the kinds also names the kind, else "manual"
    words = " ".join((reason or "").split())
    kind = words if words in model.ARCHIVE_REASONS else "expired" if expired and not words \
        else "manual"
    if words and words != kind:
        refuse_sensitive(words, "the reason")
    reason = words or kind
    if not ids and not expired:
        raise NothingToDo("nothing to archive", "name entry ids or pass --expired")
    rows = [store.entry(i) for i in ids]
    for row in rows:
        if row.in_archive:
            raise Refused(f"{row.id} is already archived", "nothing to do for it")
    if expired:
        rows += [r for r in expired_rows(store) if r.id not in ids]
    if dry_run or not rows:
        return Changed("archive", [r.id for r in rows], reason, dry_run)
    with store.write("archive", actor, commit) as txn:
        current = [store.entry(r.id) for r in rows]
        move_to_archive(store, txn, current, kind, reason)
        txn.what = f"{len(current)} entr{'y' if len(current) == 1 else 'ies'} ({reason})"
    return Changed("archive", [r.id for r in rows], reason, False, txn.commit_sha)


def forget(store: Store, memory_id: str, reason: str, actor: str, commit: bool = True) -> Changed:
    store.config.require_memory("forget")
    if not reason.strip():
        raise Refused("forgetting needs a reason", "pass --reason 'why it should go'")
    refuse_sensitive(reason, "the reason")
    row = store.entry(memory_id)
    with store.write("forget", actor, commit) as txn:
        row = store.entry(memory_id)
        txn.remove(row)
        txn.event("forget", [row.id], reason, path=row.path)
        txn.what = f"{row.id} ({reason})"
    return Changed("forget", [row.id], reason, False, txn.commit_sha, {"path": row.path})


def _unarchive(mapping: Any) -> None:
    for key in ARCHIVE_FIELDS:
        if key in mapping:
            del mapping[key]


def _find_in_history(store: Store, memory_id: str) -> tuple[str, str, str] | None:
    """(sha, path, entry text) of the newest committed version of a removed entry."""
    paths = [g.path for g in store.grimoire_files()]
    for info in githistory.history(store.top, memory_id, [store.config.storage_dir,
                                                    store.config.archive_dir]):
        for sha in (info.sha, githistory.parent_of(store.top, info.sha)):
            if sha is None:
                continue
            for path in paths:
                text = githistory.file_at(store.top, sha, path)
                if text is None or memory_id not in text:
                    continue
                lines = text.splitlines(True)
                try:
                    items = yamlio.load_list(text, f"{path}@{sha[:8]}").items
                except InvalidFile:  # that version was broken: an older one may hold it
                    continue
                for item in items:
                    if isinstance(item.data, dict) and item.data.get("id") == memory_id:
                        return sha, path, "".join(lines[item.first_line - 1:item.last_line])
    return None


def restore(store: Store, memory_id: str, actor: str, commit: bool = True) -> Changed:
    store.config.require_memory("restore")
    model.check_id(memory_id)
    rows = store.index.by_id(memory_id)
    if rows and not rows[0].in_archive:
        raise NothingToDo(f"{memory_id} is already active in {rows[0].path}", "nothing to restore")
    source = None
    if not rows:
        source = _find_in_history(store, memory_id)
        if source is None and githistory.shallow_cuts(store.top):
            raise NotFound(f"no version of {memory_id} in the history this clone holds",
                           githistory.SHALLOW_HINT)
        if source is None:
            raise NotFound(f"no version of {memory_id} in this repository's git history",
                           "check the id; `loa-mem history ID` lists what git knows")
    with store.write("restore", actor, commit) as txn:
        in_archive = False
        if rows:
            row = store.entry(memory_id)
            indent, _ = store.index.layout(row.path)
            text = yamledit.edit_item(span_text(store, row), indent, _unarchive)
            category = str(row.data.get("category"))
            txn.remove(row)
            origin = f"{row.path}"
        else:
            # Undoing a forget: the entry comes back exactly as it was committed, an archived
            # one into the archive with its reason (`restore` again takes it out of there).
            assert source is not None
            sha, path, text = source
            data = yamlio.load_list(text, path).items[0].data
            category = str(data.get("category"))
            origin = f"{path}@{sha[:12]}"
            in_archive = path in {g.path for g in store.grimoire_files() if g.in_archive} or (
                bool(data.get("archived")))
        txn.add_text(category, text, memory_id, in_archive=in_archive)
        txn.event("restore", [memory_id], source=origin)
        txn.what = f"{memory_id} from {origin}"
    return Changed("restore", [memory_id], None, False, txn.commit_sha, {"from": origin})


def _effectiveness(mapping: Any) -> Any:
    if not isinstance(mapping.get("effectiveness"), dict):
        mapping["effectiveness"] = {"applications": 0, "successes": 0, "failures": 0,
                                    "score": None, "last_applied": None}
    return mapping["effectiveness"]


def _recount(effect: Any, when: str) -> None:
    applications = int(effect.get("applications") or 0)
    effect["score"] = model.effectiveness_score(int(effect.get("successes") or 0), applications)
    effect["last_applied"] = when


def feedback(store: Store, memory_id: str, success: bool, actor: str,
             commit: bool = True) -> Changed:
    store.config.require_memory("feedback")
    row = store.entry(memory_id)
    if row.in_archive:
        raise Refused(f"{memory_id} is archived", "restore it before giving feedback")
    when = clock.now_iso()

    def count(mapping: Any) -> None:
        effect = _effectiveness(mapping)
        applications = int(effect.get("applications") or 0)
        outcomes = int(effect.get("successes") or 0) + int(effect.get("failures") or 0)
        if outcomes >= applications:
            effect["applications"] = applications + 1
        key = "successes" if success else "failures"
        effect[key] = int(effect.get(key) or 0) + 1
        _recount(effect, when)

    with store.write("feedback", actor, commit) as txn:
        row = store.entry(memory_id)
        txn.change(row, count)
        outcome = "success" if success else "failure"
        txn.event("feedback", [memory_id], outcome=outcome)
        txn.what = f"{memory_id} {outcome}"
    after = store.entry(memory_id).data.get("effectiveness") or {}
    return Changed("feedback", [memory_id], None, False, txn.commit_sha,
                   {"effectiveness": after, "tier": model.tier(after)})


def track(store: Store, ids: list[str], actor: str, commit: bool = True) -> str | None:
    """Count one application for each recalled entry (recall --track)."""
    when = clock.now_iso()

    def count(mapping: Any) -> None:
        effect = _effectiveness(mapping)
        effect["applications"] = int(effect.get("applications") or 0) + 1
        _recount(effect, when)

    with store.write("track", actor, commit) as txn:
        for memory_id in ids:
            txn.change(store.entry(memory_id), count)
        txn.event("track", ids)
        txn.what = f"{len(ids)} application(s)"
    return txn.commit_sha
