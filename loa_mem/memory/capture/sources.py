"""`capture decisions` and `capture learnings`: items of a file become memories, once each.

An item is known by its `ref` (its own id, else a hash of its text). A ref recorded by an earlier
capture (on an entry's `capture.ref`, or in a `capture` event, which outlives a forgotten entry)
is not captured again, and neither is a text an active entry already holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock, textfile
from loa_mem.core.errors import InvalidFile, Refused, SwitchedOff
from loa_mem.memory import rules as model
from loa_mem.memory.capture import rules
from loa_mem.memory.commands.remember import screen
from loa_mem.memory.store import Store

_PLACEHOLDER = "MEM-00000000-000"


@dataclass(frozen=True)
class Captured:
    source: str
    added: list[str] = field(default_factory=list)
    already: int = 0
    skipped: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    commit: str | None = None
    off: str | None = None  # the key that switched this source off (--if-enabled)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "added": self.added, "already_captured": self.already,
                "skipped": self.skipped, "updated": self.updated, "fixed": self.fixed,
                "commit": self.commit, "switched_off": self.off, "note": self.note or None}


@dataclass(frozen=True)
class Item:
    ref: str
    request: model.NewEntry
    where: str  # how messages name the item: file:line


def gate(store: Store, source: str, if_enabled: bool) -> str | None:
    """None when `source` may be captured; else the key that switches it off (with
    `if_enabled`), or SwitchedOff."""
    key = None
    if not store.config.enabled:
        key = "memory_schema.enabled"
    elif not store.config.captures(source):
        key = f"memory_schema.auto_capture.{source}"
    if key is None or if_enabled:
        return key
    raise SwitchedOff(f"capturing {source} is switched off (.loa.config.yaml: {key}: false)",
                      f"set {key}: true to capture them")


def captured_refs(store: Store, source: str) -> set[str]:
    found = {str(r.data["capture"].get("ref")) for r in store.index.where(
        "json_extract(data, '$.capture.source')=? AND json_extract(data, '$.capture.ref') "
        "IS NOT NULL", (source,))}
    for event in store.read_events():
        if event.get("op") == "capture" and event.get("source") == source:
            found.update(str(r) for r in event.get("refs") or [])
    return found


def _draft(store: Store, item: Item, source: str) -> dict[str, Any]:
    try:
        screen(item.request)
        rule = store.config.rule(item.request.category)
        draft = model.build_entry(item.request, _PLACEHOLDER, rule, clock.now())
    except Refused as refused:
        raise Refused(f"{item.where}: {refused.message}",
                      f"{refused.hint}; nothing was written") from None
    draft["capture"] = {"source": source, "ref": item.ref}
    return draft


def capture_items(store: Store, source: str, items: list[Item], origin: str, actor: str,
                  commit: bool) -> Captured:
    known = captured_refs(store, source)
    fresh = [i for i in items if i.ref not in known]
    drafts = [(i, _draft(store, i, source)) for i in fresh]
    now = clock.now_iso()
    new = [(i, d) for i, d in drafts
           if not store.index.duplicate_of(d["category"], d["content"], now)]
    if not new:
        return Captured(source, already=len(items))
    with store.write("capture", actor, commit) as txn:
        added: list[str] = []
        for _, draft in new:
            if store.index.duplicate_of(draft["category"], draft["content"], now):
                continue
            day = draft["source"]["timestamp"][:10].replace("-", "")
            entry = {**draft, "id": store.next_id(day)}
            txn.add(entry)
            added.append(entry["id"])
        txn.event("capture", added, source=source, origin=origin,
                  refs=[i.ref for i, _ in new])
        txn.what = f"{len(added)} {source} from {origin}"
    return Captured(source, added, len(items) - len(added), commit=txn.commit_sha)


# -- decisions ------------------------------------------------------------------------------------
def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _decision_item(data: Any, rel: str, line: int, last: int) -> Item | None:
    where = f"{rel}:{line}"
    if not isinstance(data, dict):
        raise Refused(f"{where}: a decision must be a mapping",
                      "write each decision as a list item with content (or decision) and "
                      "status; nothing was written")
    text = rules.decision_text(data)
    if text is None:
        raise Refused(f"{where}: the decision has no content (or decision) text",
                      "add it; nothing was written")
    if not rules.is_accepted(data):
        return None
    source: dict[str, Any] = data["source"] if isinstance(data.get("source"), dict) else {}
    return _item(text, "decision", data, where, session=_text(source.get("session_id")),
                 agent=_text(source.get("agent")), phase=_text(source.get("phase")),
                 file_path=rel, line_range=f"{line}-{last}" if last > line else str(line))


def _item(text: str, category: str, data: dict[str, Any], where: str, *, session: str | None,
          agent: str | None, file_path: str | None, phase: str | None = None,
          line_range: str | None = None) -> Item:
    """The entry a captured item asks for, and its ref: the item's own id, else its content's.
    Summary, confidence and tags read the same way from every source."""
    confidence = data.get("confidence")
    request = model.NewEntry(
        content=text, category=category,
        summary=str(data["summary"]) if data.get("summary") else None,
        confidence=float(confidence) if isinstance(confidence, (int, float)) else None,
        tags=_strings(data.get("tags")), session=session or model.CAPTURE_SESSION, agent=agent,
        phase=phase, file_path=file_path, line_range=line_range)
    ref = data.get("id")
    return Item(str(ref) if isinstance(ref, (str, int)) and str(ref).strip()
                else rules.content_ref(text), request, where)


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and str(value).strip() else None


def capture_decisions(store: Store, if_enabled: bool, actor: str, commit: bool = True
                      ) -> Captured:
    off = gate(store, "decisions", if_enabled)
    if off:
        return Captured("decisions", off=off)
    rel = str(store.config.capture["decisions_file"])
    try:
        text = textfile.read_text(store.top / rel, rel)
    except FileNotFoundError:
        return Captured("decisions", note=f"{rel} does not exist: nothing to capture")
    from loa_mem.core import yamlio

    parsed = yamlio.load_list(text, rel) if text.strip() else None
    items, skipped = [], []
    for located in parsed.items if parsed else []:
        item = _decision_item(located.data, rel, located.first_line, located.last_line)
        if item is None:
            status = located.data.get("status")
            skipped.append(f"{rel}:{located.first_line} (status {status})")
        else:
            items.append(item)
    result = capture_items(store, "decisions", items, rel, actor, commit)
    return Captured("decisions", result.added, result.already, skipped, commit=result.commit)


# -- learnings ------------------------------------------------------------------------------------
_LEARNING_KEYS = ("content", "learning", "pattern", "insight", "lesson")


def _learning_request(data: Any, name: str, number: int) -> Item:
    where = f"{name}: learning {number}"
    if isinstance(data, str):
        data = {"content": data}
    if not isinstance(data, dict):
        raise Refused(f"{where} is neither a text nor a mapping",
                      "give each learning as a text or a mapping with content; nothing was "
                      "written")
    text = next((str(data[k]).strip() for k in _LEARNING_KEYS
                 if isinstance(data.get(k), str) and data[k].strip()), None)
    if text is None:
        raise Refused(f"{where} has no content", f"give it one of: {', '.join(_LEARNING_KEYS)}; "
                      "nothing was written")
    return _item(text, "learning", data, where, session=_text(data.get("session_id")),
                 agent=_text(data.get("agent")), file_path=name if name != "stdin" else None)


def _learning_data(text: str, name: str) -> list[Any]:
    from loa_mem.core import yamlio

    try:
        data = yamlio.load(text, name)
    except InvalidFile:
        data = None
    if isinstance(data, dict) and isinstance(data.get("learnings"), list):
        data = data["learnings"]
    if isinstance(data, list) and not any(_bullet_artifact(d) for d in data):
        return data
    return list(rules.learning_lines(text))


def _bullet_artifact(item: Any) -> bool:
    """A Markdown bullet `- Pin it: a moving tag broke builds` read as YAML: a one-key mapping
    of two texts, with none of the learning keys."""
    if isinstance(item, str):
        return False
    return isinstance(item, dict) and len(item) == 1 and not any(
        k in item for k in _LEARNING_KEYS) and all(
        isinstance(v, str) for pair in item.items() for v in pair)


def capture_learnings(store: Store, source: str, if_enabled: bool, actor: str,
                      commit: bool = True) -> Captured:
    off = gate(store, "learnings", if_enabled)
    if off:
        return Captured("learnings", off=off)
    if source == "-":
        text, name = textfile.read_stdin(), "stdin"
    else:
        path = Path(source)
        try:
            text = textfile.read_text(path, source)
        except FileNotFoundError:
            raise Refused(f"{source} does not exist", "name the compound-learning output "
                          "file, or pass - and give it on stdin") from None
        name = store.rel(path.resolve()) if path.resolve().is_relative_to(store.top) else source
    items = [_learning_request(d, name, n) for n, d in enumerate(_learning_data(text, name), 1)]
    if not items:
        return Captured("learnings", note=f"{name} holds no learnings: nothing to capture")
    return capture_items(store, "learnings", items, name, actor, commit)
