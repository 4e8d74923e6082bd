"""The memory entries' part of validate: each entry on its own (schema, floor, expiry, archive,
secrets) and the rules that span entries (unique ids, supersede chains, related ids)."""

from __future__ import annotations

from loa_mem.core import clock, sensitive
from loa_mem.memory import rules as model
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


def cross_rules(run: Run) -> None:
    forgotten = _forgotten_ids(run.store)
    for memory_id, places in run.seen.items():
        if len(places) > 1:
            where = ", ".join(f"{p.grimoire.path}:{p.first_line}" for p in places)
            for place in places:
                run.add(place, place.grimoire.path, place.first_line, "unique-id",
                        f"id {memory_id} is used {len(places)} times ({where}); "
                        "run `loa-mem repair`")
    linked = [seen for places in run.seen.values() for seen in places
              if not _LINKS.isdisjoint(seen.data)]
    for seen in linked:
        _link_rules(run, seen, forgotten)
    _chain_rules(run, linked)


# the fields that link an entry to others; an entry with none of them can only be a link's end
_LINKS = frozenset(("supersedes", "superseded_by", "related_memories"))


def _chain_rules(run: Run, linked: list[Seen]) -> None:
    """The chain problems among the entries that link and the entries they link to (no other
    entry can be part of a chain)."""
    from loa_mem.memory import chains

    ends = {str(seen.data.get(k)) for seen in linked for k in ("supersedes", "superseded_by")}
    wanted = {str(s.data.get("id")) for s in linked} | ends
    unique = {i: places[0] for i, places in run.seen.items() if len(places) == 1 and i in wanted}
    for problem in chains.problems({i: seen.data for i, seen in unique.items()}):
        seen = unique[problem.id]
        fix = problem.fix or "run `loa-mem repair` to set the other end"
        run.add(seen, seen.grimoire.path, _line(seen, problem.key), "chain",
                f"{problem.message}; {fix}")


def _link_rules(run: Run, seen: Seen, forgotten: set[str]) -> None:
    data, path = seen.data, seen.grimoire.path
    for key in ("supersedes", "superseded_by"):
        other_id = data.get(key)
        if not other_id or run.seen.get(str(other_id)):
            continue
        severity = "warning" if other_id in forgotten else "error"
        note = " (it was forgotten; see the events log)" if other_id in forgotten else ""
        run.add(seen, path, _line(seen, key), "chain",
                f"{key} {other_id}, which is not in any grimoire file{note}", severity)
    for related in data.get("related_memories") or []:
        if isinstance(related, str) and related not in run.seen:
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
