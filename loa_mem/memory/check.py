"""The memory entries' part of validate: each entry on its own (schema, floor, expiry, archive,
secrets) and the rules that span entries (unique ids, supersede chains, related ids)."""

from __future__ import annotations

from collections import Counter

from loa_mem.core import clock
from loa_mem.memory import checkcache
from loa_mem.memory import rules as model
from loa_mem.memory.files import GrimoireFile
from loa_mem.memory.index import Row
from loa_mem.memory.problems import Run, Seen
from loa_mem.memory.store import Store


def _line(seen: Seen, key: str) -> int:
    return seen.row.line_of(key)


def schema_problems(run: Run, seen: Seen, path: str) -> None:
    from loa_mem.core import schemacheck

    for problem in schemacheck.problems("memory.schema.json", seen.row.data):
        key = str(problem.path[0]) if problem.path else ""
        where = problem.dotted or "entry"
        run.add(seen, path, _line(seen, key), "schema", f"{where}: {problem.message}")


def entry_rules(run: Run, seen: Seen, path: str) -> None:
    from loa_mem.core import sensitive  # its patterns are compiled only when an entry is checked

    data, grimoire = seen.data, seen.grimoire
    category = data.get("category")
    if category in model.CATEGORIES and category != grimoire.category:
        run.add(seen, path, _line(seen, "category"), "category-file",
                f"a {category} entry in the {grimoire.category} file")
    if category in model.CATEGORIES and isinstance(data.get("confidence"), (int, float)):
        floor = run.store.config.rule(str(category)).floor
        if data["confidence"] < floor:
            run.add(seen, path, _line(seen, "confidence"), "floor",
                    f"confidence {data['confidence']} is under the {category} floor of {floor}")
    _expiry_rule(run, seen, path)
    archived = bool(data.get("archived"))
    if grimoire.in_archive and not archived:
        run.add(seen, path, seen.first_line, "archive",
                "an entry in the archive without archived: true")
    if archived and not grimoire.in_archive:
        run.add(seen, path, _line(seen, "archived"), "archive",
                "an archived entry outside the archive directory")
    if archived and not data.get("archive_reason"):
        run.add(seen, path, _line(seen, "archived"), "archive", "archived without archive_reason")
    # loa-mem's own values (ids, enums, times, counters) hold nothing a person typed
    skip = {"id", "category", "confidence", "ttl", "expires_at", "supersedes", "superseded_by",
            "related_memories", "effectiveness", "archived", "archived_at"}
    summary = data.get("summary")
    if isinstance(summary, str) and summary in str(data.get("content")):
        skip.add("summary")  # a summary cut from the content was scanned with it
    for dotted, _, kinds in sensitive.found_in(data, frozenset(skip)):
        key = dotted.split(".", 1)[0]
        run.add(seen, path, _line(seen, key), "secret", f"{dotted} contains {kinds}")


def _expiry_rule(run: Run, seen: Seen, path: str) -> None:
    data = seen.data
    ttl, source = data.get("ttl"), data.get("source")
    if not isinstance(ttl, str) or not isinstance(source, dict) or not source.get("timestamp"):
        return
    try:
        expected = model.expires_at(str(source["timestamp"]), ttl)
    except Exception:
        return
    actual = data.get("expires_at")
    if actual is not None:
        try:
            actual = clock.iso(clock.parse(str(actual)))
        except ValueError:
            return
    if actual != expected:
        run.add(seen, path, _line(seen, "expires_at") if "expires_at" in data else _line(
            seen, "ttl"), "expiry", f"expires_at should be {expected or 'null'} for ttl {ttl}")


# the files validate checked: each with its entries' ids, first lines, problems and links
Files = list[tuple[GrimoireFile, checkcache.FileNotes]]


def cross_rules(run: Run, files: Files) -> None:
    """The rules across entries, from each file's notes: only the entries that link, that are
    linked to or whose id is used twice are looked at one by one."""
    every, twice = _ids(files)
    places = _places(files, twice)
    for memory_id in twice:
        where = ", ".join(f"{p.grimoire.path}:{p.first_line}" for p in places[memory_id])
        for place in places[memory_id]:
            run.add(place, place.grimoire.path, place.first_line, "unique-id",
                    f"id {memory_id} is used {len(places[memory_id])} times ({where}); "
                    "run `loa-mem repair`")
    linked = [seen for seen_at in places.values() for seen in seen_at
              if not _LINKS.isdisjoint(seen.data)]
    forgotten = _Forgotten(run.store)
    for seen in linked:
        _link_rules(run, seen, every, forgotten)
    _chain_rules(run, files, places, twice, every, linked)


def _ids(files: Files) -> tuple[set[str], set[str]]:
    """Every id, and the ids used more than once (set operations, no loop over the ids)."""
    every: set[str] = set()
    twice: set[str] = set()
    for _, notes in files:
        ids = notes.mapped_ids()
        own = set(ids)
        if len(own) < len(ids):
            twice.update(i for i, count in Counter(ids).items() if count > 1)
        twice |= every & own
        every |= own
    return every, twice


def _places(files: Files, twice: set[str]) -> dict[str, list[Seen]]:
    """The entries with links (archived counts) and the entries whose id is used more than once,
    by id, in file order."""
    places: dict[str, list[Seen]] = {}
    for grimoire, notes in files:
        unmapped = notes.unmapped()
        rows = {row for row, noted in notes.noted.items() if noted.links and row not in unmapped}
        if not twice.isdisjoint(notes.ids):
            rows.update(row for row, memory_id in enumerate(notes.ids)
                        if memory_id in twice and row not in unmapped)
        for row in sorted(rows):
            places.setdefault(notes.ids[row], []).append(_seen(grimoire, notes, row))
    return places


def _seen(grimoire: GrimoireFile, notes: checkcache.FileNotes, row: int) -> Seen:
    noted = notes.noted.get(row, checkcache.CLEAN)
    memory_id, first_line = notes.ids[row], notes.lines[row]
    return Seen(Row(row, memory_id, grimoire.path, grimoire.in_archive, first_line, first_line,
                    {"id": memory_id, **noted.links}, noted.offsets), grimoire)


# the fields that link an entry to others; an entry with none of them can only be a link's end
_LINKS = frozenset(("supersedes", "superseded_by", "related_memories"))


def _chain_rules(run: Run, files: Files, places: dict[str, list[Seen]], twice: set[str],
                 every: set[str], linked: list[Seen]) -> None:
    """The chain problems among the entries that link and the entries they link to (no other
    entry can be part of a chain)."""
    from loa_mem.memory import chains

    ends = {str(v) for seen in linked for k in ("supersedes", "superseded_by")
            if (v := seen.data.get(k))}
    wanted = {str(s.data.get("id")) for s in linked} | ends
    unique = {i: seen_at[0] for i, seen_at in places.items() if i in wanted and i not in twice}
    entries = {i: seen.data for i, seen in unique.items()}
    # an end without links of its own is only its id
    entries.update((i, {"id": i}) for i in ends - unique.keys() - twice if i in every)
    for problem in chains.problems(entries):
        seen = unique.get(problem.id) or _find(files, problem.id)
        fix = problem.fix or "run `loa-mem repair` to set the other end"
        run.add(seen, seen.grimoire.path, _line(seen, problem.key), "chain",
                f"{problem.message}; {fix}")


def _find(files: Files, memory_id: str) -> Seen:
    """The entry of an id used once."""
    for grimoire, notes in files:
        unmapped = notes.unmapped()
        for row, found in enumerate(notes.ids):
            if found == memory_id and row not in unmapped:
                return _seen(grimoire, notes, row)
    raise LookupError(memory_id)


class _Forgotten:
    """The ids the events log says were forgotten, read when first asked."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ids: set[str] | None = None

    def __contains__(self, memory_id: object) -> bool:
        if self.ids is None:
            self.ids = _forgotten_ids(self.store)
        return memory_id in self.ids


def _link_rules(run: Run, seen: Seen, every: set[str], forgotten: _Forgotten) -> None:
    data, path = seen.data, seen.grimoire.path
    for key in ("supersedes", "superseded_by"):
        other_id = data.get(key)
        if not other_id or str(other_id) in every:
            continue
        severity = "warning" if other_id in forgotten else "error"
        note = " (it was forgotten; see the events log)" if other_id in forgotten else ""
        run.add(seen, path, _line(seen, key), "chain",
                f"{key} {other_id}, which is not in any grimoire file{note}", severity)
    for related in data.get("related_memories") or []:
        if isinstance(related, str) and related not in every:
            gone = related in forgotten
            run.add(seen, path, _line(seen, "related_memories"), "related",
                    f"related memory {related} is not in any grimoire file"
                    + (" (it was forgotten; see the events log)" if gone else ""),
                    "warning" if gone else "error")


def _forgotten_ids(store: Store) -> set[str]:
    gone: set[str] = set()
    for event in store.read_events():
        ids = {i for i in event.get("ids") or [] if isinstance(i, str)}
        if event.get("op") == "forget":
            gone |= ids
        elif event.get("op") == "restore":
            gone -= ids
    return gone
