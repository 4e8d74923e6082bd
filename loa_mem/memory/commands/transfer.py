"""import and export: entries in and out of the store, in the formats of `transfer.py`.

Import checks every entry first (the entry rules, the category floors of this store's config,
the schema, secrets and personal data) and then writes all of them in one transaction and one
commit, or nothing. Entries already in the store (the same id and data, or the same content in
the same category) are not written twice. A jsonl entry keeps its id when this store never used
it; otherwise it gets the next free id of its day, and links inside the file follow it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock, sensitive, textfile
from loa_mem.core.errors import LoaMemError, NotFound, NothingToDo, Refused
from loa_mem.memory import formats as transfer
from loa_mem.memory import rules as model
from loa_mem.memory.store import Store

Progress = Callable[[int, int], None]
PLACEHOLDER = "MEM-00000000-000"
_LINK_KEYS = ("supersedes", "superseded_by")


@dataclass(frozen=True)
class Imported:
    source: str
    format: str
    ids: list[str]
    duplicates: dict[str, str] = field(default_factory=dict)
    renumbered: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    dry_run: bool = False
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "imported": len(self.ids),
                "ids": self.ids, "duplicates": self.duplicates, "renumbered": self.renumbered,
                "skipped": self.skipped, "dry_run": self.dry_run, "commit": self.commit}


@dataclass(frozen=True)
class Exported:
    format: str
    count: int
    text: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": self.format, "count": self.count, "path": self.path}
        if self.path is None:
            data["text"] = self.text
        return data


@dataclass
class _Candidate:
    line: int
    entry: dict[str, Any]


def chosen_format(source: str, fmt: str | None) -> str:
    """--format, else the format the file name says."""
    if fmt is None and source == "-":
        raise Refused("the format of stdin is unknown", "pass --format")
    if fmt is not None and fmt not in transfer.FORMATS:
        raise Refused("unknown --format", f"use one of: {', '.join(transfer.FORMATS)}")
    return fmt or transfer.detect(source)


def read_source(store: Store, source: str) -> tuple[str, str]:
    """The text of the file (or stdin, `-`) and its name as reported: relative to the store."""
    if source == "-":
        return textfile.read_stdin(), "stdin"
    path = Path(source)
    try:
        text = textfile.read_text(path, source)
    except FileNotFoundError:
        raise NotFound(f"no file {source}", "check the path") from None
    try:
        name = path.resolve().relative_to(store.top).as_posix()
    except ValueError:
        name = path.name
    return text, name


def _build(store: Store, draft: transfer.Draft) -> dict[str, Any]:
    if draft.entry is not None:
        return dict(draft.entry)
    assert draft.request is not None
    request = draft.request
    model.check_category(request.category)
    moment = clock.parse(draft.when) if draft.when else clock.now()
    return model.build_entry(request, PLACEHOLDER, store.config.rule(request.category), moment)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _check(store: Store, entry: dict[str, Any]) -> list[str]:
    """Every reason this entry cannot be written, without the entry's own text."""
    from loa_mem.core import schemacheck

    found = [f"{p.dotted or 'entry'}: {p.message}" for p in schemacheck.problems(
        "memory.schema.json", {**entry, "id": entry.get("id") or PLACEHOLDER})]
    category = entry.get("category")
    confidence = entry.get("confidence")
    if category in model.CATEGORIES and isinstance(confidence, (int, float)):
        floor = store.config.rule(str(category)).floor
        if confidence < floor:
            found.append(f"confidence {confidence} is under the {category} floor of {floor}")
    kinds = {f.kind for text in _strings({k: v for k, v in entry.items() if k != "id"})
             for f in sensitive.scan(text)}
    if kinds:
        found.append(f"it looks like it contains {', '.join(sorted(kinds))}")
    return found


def _prepare(store: Store, parsed: transfer.Parsed, progress: Progress | None
             ) -> tuple[list[_Candidate], list[str]]:
    candidates: list[_Candidate] = []
    problems = [f"line {s.line}: {s.message}" for s in parsed.skipped]
    total = len(parsed.drafts)
    for done, draft in enumerate(parsed.drafts, start=1):
        try:
            entry = _build(store, draft)
        except LoaMemError as error:
            problems.append(f"line {draft.line}: {error.message}")
            continue
        reasons = _check(store, entry)
        if reasons:
            problems += [f"line {draft.line}: {r}" for r in reasons]
        else:
            candidates.append(_Candidate(draft.line, entry))
        if progress is not None and (done % 50 == 0 or done == total):
            progress(done, total)
    problems += _dangling(store, candidates)
    return candidates, problems


def _dangling(store: Store, candidates: list[_Candidate]) -> list[str]:
    batch = {str(c.entry.get("id")) for c in candidates}
    found = []
    for candidate in candidates:
        for key in _LINK_KEYS:
            target = candidate.entry.get(key)
            if target and target not in batch and not store.index.by_id(str(target)):
                found.append(f"line {candidate.line}: {key} {target} is neither in the file "
                             "nor in the store")
    return found


class _Ids:
    """Ids for one import: kept ones first, then the next free sequence of each day."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.used = {i for e in store.read_events() for i in e.get("ids") or []}
        self.taken: set[str] = set()
        self.high: dict[str, int] = {}

    def keep(self, memory_id: Any) -> bool:
        if not isinstance(memory_id, str) or memory_id == PLACEHOLDER or not (
                model.ID_PATTERN.match(memory_id)):
            return False
        if memory_id in self.used or memory_id in self.taken or self.store.index.by_id(memory_id):
            return False
        self.taken.add(memory_id)
        return True

    def fresh(self, day: str) -> str:
        while True:
            memory_id = self.store.next_id(day)
            if memory_id not in self.taken and memory_id not in self.used:
                self.taken.add(memory_id)
                return memory_id


@dataclass
class _Assigned:
    new: list[dict[str, Any]] = field(default_factory=list)
    duplicates: dict[str, str] = field(default_factory=dict)
    renumbered: dict[str, str] = field(default_factory=dict)


def _existing(store: Store, entry: dict[str, Any], batch: dict[tuple[str, str], dict[str, Any]]
              ) -> str | dict[str, Any] | None:
    """The stored id, or the earlier entry of this import, that already holds `entry`."""
    memory_id = entry.get("id")
    if isinstance(memory_id, str) and memory_id != PLACEHOLDER:
        rows = store.index.by_id(memory_id)
        if rows and rows[0].data == entry:
            return memory_id
    if not model.is_active(entry):
        return None
    key = (str(entry.get("category")), model.normalize(str(entry.get("content", ""))))
    return batch.get(key) or store.index.duplicate_of(*key)


def _assign(store: Store, candidates: list[_Candidate]) -> _Assigned:
    result = _Assigned()
    ids = _Ids(store)
    batch: dict[tuple[str, str], dict[str, Any]] = {}
    fresh: list[dict[str, Any]] = []
    same_as: list[tuple[str, str | dict[str, Any]]] = []
    for candidate in candidates:
        entry = candidate.entry
        old = entry.get("id")
        same = _existing(store, entry, batch)
        if same is not None:
            # an entry without an id of its own is named by its line: never `None` for all
            named = isinstance(old, str) and old and old != PLACEHOLDER
            same_as.append((str(old) if named else f"line {candidate.line}", same))
            continue
        if not ids.keep(entry.get("id")):
            fresh.append(entry)
        result.new.append(entry)
        if model.is_active(entry):
            batch[(str(entry.get("category")),
                   model.normalize(str(entry.get("content", ""))))] = entry
    for entry in fresh:
        day = str(entry["source"]["timestamp"])[:10].replace("-", "")
        new_id = ids.fresh(day)
        if entry.get("id") not in (None, PLACEHOLDER):
            result.renumbered[str(entry["id"])] = new_id
        entry["id"] = new_id
    result.duplicates = {old: same if isinstance(same, str) else str(same["id"])
                         for old, same in same_as}
    mapping = {**result.duplicates, **result.renumbered}
    for entry in result.new:
        _relink(entry, mapping)
    return result


def _relink(entry: dict[str, Any], mapping: dict[str, str]) -> None:
    for key in _LINK_KEYS:
        if entry.get(key) in mapping:
            entry[key] = mapping[entry[key]]
    if isinstance(entry.get("related_memories"), list):
        entry["related_memories"] = list(dict.fromkeys(
            mapping.get(i, i) for i in entry["related_memories"]))


def _refuse(problems: list[str], total: int, name: str) -> Refused:
    shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3
                                       else "")
    return Refused(f"{len(problems)} problem(s) in {total} item(s) of {name}: {shown}",
                   "fix them, or pass --skip-invalid to import the others; nothing was written")


def import_file(store: Store, source: str, fmt: str | None, actor: str, *,
                category: str | None = None, skip_invalid: bool = False, dry_run: bool = False,
                commit: bool = True, progress: Progress | None = None) -> Imported:
    store.config.require_memory("import")
    text, name = read_source(store, source)
    if fmt is None and source == "-":
        raise Refused("the format of stdin is unknown", "pass --format")
    chosen = fmt or transfer.detect(name)
    if category is not None:
        model.check_category(category)
    parsed = transfer.parse(text, chosen, name, category)
    total = len(parsed.drafts) + len(parsed.skipped)
    candidates, problems = _prepare(store, parsed, progress)
    if problems and not skip_invalid:
        raise _refuse(problems, total, name)
    if dry_run:
        planned = _assign(store, candidates)
        if not planned.new:  # as the real run would say
            raise NothingToDo(f"every entry of {name} is already in the store",
                              "nothing would be written")
        return Imported(name, chosen, [str(e["id"]) for e in planned.new], planned.duplicates,
                        planned.renumbered, problems, dry_run=True)
    with store.write("import", actor, commit) as txn:
        planned = _assign(store, candidates)
        if not planned.new:
            raise NothingToDo(f"every entry of {name} is already in the store",
                              "nothing was written")
        for entry in planned.new:
            txn.add(entry, in_archive=bool(entry.get("archived")))
        new_ids = [str(e["id"]) for e in planned.new]
        txn.event("import", new_ids, None, source=name, format=chosen)
        txn.what = f"{len(new_ids)} entr{'y' if len(new_ids) == 1 else 'ies'} from {name}"
    return Imported(name, chosen, new_ids, planned.duplicates, planned.renumbered, problems,
                    commit=txn.commit_sha)


def export_entries(store: Store, fmt: str, *, categories: tuple[str, ...] = (),
                   everything: bool = False, agent: str | None = None) -> Exported:
    """Entries in `fmt`: jsonl holds every entry (archived and superseded too); the other
    formats hold the entries recall would find, unless `everything`."""
    store.config.require_memory("export")
    if fmt not in transfer.FORMATS:
        raise Refused("unknown --format", f"use one of: {', '.join(transfer.FORMATS)}")
    for name in categories:
        model.check_category(name)
    now = clock.now_iso()
    chosen = []
    for row in store.index.all_rows():
        data = row.data
        if categories and data.get("category") not in categories:
            continue
        if agent and (data.get("source") or {}).get("agent") != agent:
            continue
        current = not row.in_archive and model.is_active(data) and not model.is_expired(data, now)
        if fmt == "jsonl" or everything or current:
            chosen.append(data)
    chosen.sort(key=lambda e: model.id_order(str(e.get("id"))))
    return Exported(fmt, len(chosen), transfer.render(chosen, fmt, agent))
