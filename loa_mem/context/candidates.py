"""The lines the session-start block can hold, source by source, each source's in priority
order: pinned files, expiry warnings, the user's preferences, agents' sidecar memories, the top
memories of each category, and the hot working set.

What it knows: how each source's items become one line (flattened, at most `MAX_LINE`
characters) and the data behind it for `--format json`, grouped in titled `Section`s. Which
lines fit the budget, and the order of the sections in the block, is `context.block`'s.

Imported by the session-start hook: standard library, `memo` and `rowcodec` (only when the
index is read) only.
"""

from __future__ import annotations

from loa_mem.context import memo as ahead

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection
    from typing import Any

MAX_LINE = 240
_PLURAL = {"fact": "Facts", "decision": "Decisions", "learning": "Learnings", "error": "Errors",
           "preference": "Preferences"}


class Section:
    """A titled group of lines; `items` carry the data of each line for `--format json`."""

    __slots__ = ("headings", "items", "lines", "name", "omitted", "title")

    def __init__(self, name: str, title: str, headings: tuple[str, ...] = ()) -> None:
        self.name = name
        self.title = title
        self.headings = headings or (f"## {title}",)
        self.lines: list[str] = []
        self.items: list[dict[str, Any]] = []
        self.omitted = 0

    def add(self, line: str, item: dict[str, Any]) -> None:
        self.lines.append(line)
        self.items.append(item)


def one_line(text: object, limit: int = MAX_LINE) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# -- candidates, in priority order within each source ------------------------------------------
Candidate = tuple[Section, str, "dict[str, Any]"]


def pinned(side: dict[str, Any]) -> list[Candidate]:
    section = Section("pinned", "Pinned")
    found = []
    for item in side.get("pinned") or []:
        words = " — ".join(str(item[k]) for k in ("title", "summary") if item.get(k))
        found.append((section, one_line(f"- `{item['path']}`" + (f": {words}" if words else "")),
                      item))
    return found


def expiring(db: Connection | None, memory: dict[str, Any], now_iso: str,
              memo: dict[str, Any] | None = None) -> list[Candidate]:
    if not (memory.get("lifecycle") or {}).get("check_on_session_start", True):
        return []
    section = Section("expiring", "Expiring soon")
    if memo is not None:
        return [(section, line, item) for line, item in memo["expiring"]]
    if db is None:
        return []
    from loa_mem.memory import rowcodec

    limit = ahead.warning_limit(memory, now_iso)
    live = "retired=0 AND superseded_by IS NULL AND expires_at IS NOT NULL"
    found: list[Candidate] = []
    for memory_id, expires, *data in db.execute(
            f"SELECT id, expires_at, {rowcodec.columns('entries')} FROM entries WHERE {live} "
            "AND expires_at>? AND expires_at<=? ORDER BY expires_at, id", (now_iso, limit)):
        summary = summary_of(rowcodec.unpack(*data))
        found.append((section, one_line(f"- {memory_id} expires {expires}: {summary}"),
                      {"id": memory_id, "expires_at": expires, "summary": summary}))
    (expired,) = db.execute(f"SELECT count(*) FROM entries WHERE {live} AND expires_at<=?",
                            (now_iso,)).fetchone()
    if expired:
        waits = "entry waits" if expired == 1 else "entries wait"
        found.append((section, f"- {expired} expired {waits} for `loa-mem archive --expired`",
                      {"expired": expired}))
    return found


def entry_data(data: str | dict[str, Any]) -> dict[str, Any]:
    """A ranked row's entry data: JSON text from the index, already decoded in a memo (whose
    reader, the hook, does not import json)."""
    if isinstance(data, dict):
        return data
    import json

    decoded: dict[str, Any] = json.loads(data)
    return decoded


def summary_of(data: dict[str, Any]) -> str:
    return one_line(data.get("summary") or data.get("content") or "", 200)


def memories(db: Connection | None, memory: dict[str, Any], query: str, now_iso: str,
              per_category: int, shortlist: list[str] | None,
              rows: list[Any] | None = None) -> tuple[list[Section], list[Candidate]]:
    """One section per category (in the config's order) and each category's top entries by
    recall's score, best first across categories. Without a query, the ranking runs over the
    `shortlist` when one is given (see `shortlist`), else over every live entry; `rows`, when
    given, are that ranking already made (`memo`)."""
    sections = {name: Section(f"memories:{name}", _PLURAL.get(name, name.title()),
                              ("## Memories", f"### {_PLURAL.get(name, name.title())}"))
                for name in memory["categories"]}
    ids = None if query else shortlist
    if rows is None:
        rows = [] if ids == [] or db is None else ahead.top_rows(db, memory, query, now_iso,
                                                           per_category, len(sections), ids)
    found: list[Candidate] = []
    for memory_id, confidence, _, _, _, total, _, _, data_text, category, *_ in rows:
        if category not in sections:
            continue
        data = entry_data(data_text)
        tags = [str(t) for t in data.get("tags") or []]
        summary = summary_of(data)
        note = f"{confidence:g}" + (f"; {', '.join(tags)}" if tags else "")
        found.append((sections[category], one_line(f"- {memory_id}: {summary}") + f" ({note})",
                      {"id": memory_id, "category": category, "summary": summary,
                       "confidence": confidence, "score": round(total, 4), "tags": tags}))
    return list(sections.values()), found


def preferences(lines: list[str], user: str | None) -> list[Candidate]:
    section = Section("preferences", "Your preferences" + (f" ({user})" if user else ""))
    found = []
    for line in lines:
        text = one_line(line)
        found.append((section, text if text.startswith("- ") else f"- {text}", {"line": text}))
    return found


def agents(side: dict[str, Any], names: tuple[str, ...]) -> list[Candidate]:
    found: list[Candidate] = []
    known = side.get("agents") or {}
    for name in names:
        section = Section(f"agents:{name}", f"Agent {name}")
        sidecar = known.get(name)
        if not sidecar:
            found.append((section, "- first session for this agent; no prior memories",
                          {"agent": name, "first_session": True}))
            continue
        for item in sidecar.get("memories") or []:
            found.append((section, one_line(f"- [{item.get('type')}] {item.get('content')} "
                                             f"(confidence {item.get('confidence')})"),
                          {"agent": name, **item}))
        relations = "; ".join(f"{kind}: {', '.join(others)}" for kind, others
                              in (sidecar.get("relationships") or {}).items() if others)
        if relations:
            found.append((section, one_line(f"- relationships: {relations}"),
                          {"agent": name, "relationships": sidecar["relationships"]}))
    return found


def working_set(side: dict[str, Any]) -> list[Candidate]:
    """The hot list by touches, without the pinned files (listed above it already)."""
    section = Section("working_set", "Hot working set")
    pinned = {p["path"] for p in side.get("pinned") or []}
    keep = sorted((k for k in side.get("hot") or [] if k.get("path") not in pinned),
                  key=lambda k: (-int(k.get("touches") or 0), str(k.get("path"))))
    found = []
    for item in keep:
        why = f": {item['why']}" if item.get("why") else ""
        touches = int(item.get("touches") or 0)
        count = f"{touches} touch" + ("" if touches == 1 else "es")
        found.append((section, one_line(f"- `{item.get('path')}`{why} ({count})"),
                      item))
    return found
