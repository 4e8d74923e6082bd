"""Three-way merge of one grimoire file by entry id (the pure part of `loa-mem merge-driver`).

Input: the base, ours and theirs texts of one file, and a `Plan` that says which ids each side
must renumber and which ids each side removed on purpose (archived or forgotten). Output: the
merged text, built on ours so that its comments and layout stay byte for byte, and the ids of
the entries no rule could settle (shown between standard conflict markers).

Rules (README, "Merging branches"):
- an entry added on one side is kept; removed on one side and untouched on the other, it goes;
- removed on one side (archived or forgotten there) and changed on the other: the removal wins;
  removed for no known reason and changed on the other side: a conflict; an archived copy
  takes what the other side changed (`Plan.carry_*`, found in the other files by the plan);
- changed on both sides: field by field. A field changed on one side takes that change.
  superseded_by and the archive fields win over their absence; two archivings keep the earlier;
  superseded_by set differently on both sides keeps the smaller id (the earlier day) and the
  other replacement becomes a fork that `validate` reports with the command that settles it;
  effectiveness counts add up (applications, successes and failures each gain what both sides
  added; the score is recomputed; last_applied is the later); confidence takes the later side's
  value; tags and related_memories merge as sets; any other field changed differently on both
  sides is a conflict (or, in a repair, keeps ours and is reported).
- comment lines and blank lines between entries merge three-way (ours, plus what theirs added).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loa_mem.core import yamledit, yamlio
from loa_mem.core.errors import InvalidFile
from loa_mem.core.located import Located
from loa_mem.memory import rules as model

MEM_ID = model.ID_IN_TEXT
_MISSING: Any = object()
_ARCHIVE_KEYS = ("archived", "archived_at", "archive_reason")
_SET_KEYS = ("tags", "related_memories")


@dataclass(frozen=True)
class Plan:
    """What the whole-store view decided for this merge (see `merge_plan.py`)."""

    rename_ours: dict[str, str] = field(default_factory=dict)
    rename_theirs: dict[str, str] = field(default_factory=dict)
    retired_ours: frozenset[str] = frozenset()
    retired_theirs: frozenset[str] = frozenset()
    later: str = "theirs"
    theirs_label: str = "theirs"
    # a repair must end with a file that parses: a field no rule settles keeps ours
    settle_with_ours: bool = False
    # entries one side moved to an archive file that the other side changed where they were:
    # id -> (its base version, the other side's), so the archived copy takes that change
    carry_ours: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    carry_theirs: dict[str, tuple[Any, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Merged:
    text: str
    conflicts: list[str]
    renamed: dict[str, str]
    settled: list[str] = field(default_factory=list)  # repair: kept ours where no rule settled


@dataclass
class _Side:
    text: str
    lines: list[str]
    items: dict[str, Located]
    order: list[str]
    gaps: dict[str, list[str]]
    indent: int

    def span(self, memory_id: str) -> str:
        item = self.items[memory_id]
        return "".join(self.lines[item.first_line - 1:item.last_line])


def rename_ids(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    return MEM_ID.sub(lambda m: mapping.get(m.group(), m.group()), text)


def _parse(text: str, label: str) -> _Side:
    parsed = yamlio.load_list(text, label)
    if parsed.flow:
        raise InvalidFile(label, 1, 1, "a flow-style list cannot be merged by id")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    items: dict[str, Located] = {}
    order: list[str] = []
    gaps: dict[str, list[str]] = {}
    previous = 0
    for item in parsed.items:
        memory_id = item.data.get("id") if isinstance(item.data, dict) else None
        if not isinstance(memory_id, str) or memory_id in items:
            raise InvalidFile(label, item.first_line, 1, "an entry without a unique id")
        items[memory_id] = item
        gaps["^" if not order else memory_id] = lines[previous:item.first_line - 1]
        order.append(memory_id)
        previous = item.last_line
    gaps["^" if not order else ""] = lines[previous:]
    gaps.setdefault("", [])
    return _Side(text, lines, items, order, gaps, parsed.indent)


def _set_merge(base: Any, ours: Any, theirs: Any) -> list[Any]:
    base_list = base if isinstance(base, list) else []
    ours_list = ours if isinstance(ours, list) else []
    theirs_list = theirs if isinstance(theirs, list) else []
    removed = {str(v) for v in base_list} - ({str(v) for v in ours_list}
                                              & {str(v) for v in theirs_list})
    merged = [v for v in ours_list + theirs_list if str(v) not in removed]
    return list({str(v): v for v in reversed(merged)}.values())[::-1]


def _applied(value: Any) -> str:
    return str(value.get("last_applied") or "") if isinstance(value, dict) else ""


_COUNTS = ("applications", "successes", "failures")


def add_counts(base: Any, ours: Any, theirs: Any) -> dict[str, Any]:
    """Effectiveness changed on both sides: each count gains what both sides added to it.
    With no common version to count from, the larger count of the two (nothing counted twice)."""
    def count(value: Any, key: str) -> int:
        found = value.get(key) if isinstance(value, dict) else None
        return int(found) if isinstance(found, (int, float)) else 0

    ours_map = ours if isinstance(ours, dict) else {}
    theirs_map = theirs if isinstance(theirs, dict) else {}
    merged: dict[str, Any] = {**theirs_map, **ours_map}
    for key in _COUNTS:
        if key in ours_map or key in theirs_map:
            merged[key] = (count(ours, key) + count(theirs, key) - count(base, key)) if (
                isinstance(base, dict)) else max(count(ours, key), count(theirs, key))
    applications = int(merged.get("applications") or 0)
    if "score" in merged:
        merged["score"] = model.effectiveness_score(int(merged.get("successes") or 0),
                                                    applications)
    merged["last_applied"] = max(_applied(ours), _applied(theirs)) or None
    if merged["last_applied"] is None and "last_applied" not in ours_map:
        del merged["last_applied"]
    return merged


def merge_capture(base: Any, ours: Any, theirs: Any) -> dict[str, Any]:
    """A captured error seen (or fixed) on both sides: its occurrences gain what both sides
    added, it was last seen at the later time, and it stays fixed only if the later fix came
    after the last failure on either side (a failure reopens an error)."""
    ours_map = ours if isinstance(ours, dict) else {}
    theirs_map = theirs if isinstance(theirs, dict) else {}
    base_map = base if isinstance(base, dict) else {}
    merged: dict[str, Any] = {**theirs_map, **ours_map}

    def seen(value: dict[str, Any]) -> int:
        found = value.get("occurrences")
        return int(found) if isinstance(found, (int, float)) else 1

    merged["occurrences"] = (seen(ours_map) + seen(theirs_map) - seen(base_map)) if base_map \
        else max(seen(ours_map), seen(theirs_map))
    last_seen = max(str(ours_map.get("last_seen") or ""), str(theirs_map.get("last_seen") or ""))
    if last_seen:
        merged["last_seen"] = last_seen
    fixes = [m for m in (ours_map, theirs_map) if m.get("fixed_at")]
    merged.pop("fixed_at", None)
    merged.pop("fixed_session", None)
    if fixes:
        fix = max(fixes, key=lambda m: str(m["fixed_at"]))
        if str(fix["fixed_at"]) >= last_seen:
            merged["fixed_at"] = fix["fixed_at"]
            if "fixed_session" in fix:
                merged["fixed_session"] = fix["fixed_session"]
    return merged


def _archive_side(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    if ours.get("archived") and theirs.get("archived"):
        return ours if str(ours.get("archived_at") or "") <= str(
            theirs.get("archived_at") or "") else theirs
    return ours if ours.get("archived") else theirs


def _settle(key: str, values: tuple[Any, Any, Any], sides: tuple[dict[str, Any], dict[str, Any]],
            later: str) -> Any:
    """The value of a field both sides changed differently, or _MISSING for a conflict."""
    base, ours, theirs = values
    if key in _ARCHIVE_KEYS:
        return _archive_side(*sides).get(key, _MISSING)
    if key == "superseded_by":
        if ours in (None, _MISSING):
            return theirs
        if theirs in (None, _MISSING):
            return ours
        return min(str(ours), str(theirs), key=model.id_order)
    if key == "confidence":
        return ours if later == "ours" else theirs
    if key == "effectiveness":
        return add_counts(base, ours, theirs)
    if key == "capture":
        return merge_capture(base, ours, theirs)
    if key in _SET_KEYS:
        return _set_merge(base, ours, theirs)
    return _MISSING


def merge_fields(base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any],
                 later: str, settle_with_ours: bool = False) -> dict[str, Any] | None:
    """Merge one entry changed on both sides; None when a field no rule settles differs."""
    fresh = base is None  # added on both sides: no common version to count from
    base = base or {}
    merged: dict[str, Any] = {}
    for key in list(dict.fromkeys([*ours, *theirs])):
        values = (base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING))
        if values[1] == values[2]:
            value = values[1]
        elif values[1] == values[0]:
            value = values[2]
        elif values[2] == values[0]:
            value = values[1]
        else:
            known = values if fresh or values[0] is not _MISSING else ({}, *values[1:])
            value = _settle(key, known, (ours, theirs), later)
            if value is _MISSING and key not in _ARCHIVE_KEYS:
                if not settle_with_ours:
                    return None
                value = values[1]
        if value is not _MISSING:
            merged[key] = value
    return merged


def identity(data: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two copies of an id the same entry: category, content and when it was made."""
    source = data["source"] if isinstance(data.get("source"), dict) else {}
    return (str(data.get("category")), str(data.get("content")), str(source.get("timestamp")))


@dataclass
class _Job:
    base: _Side
    ours: _Side
    theirs: _Side
    plan: Plan
    marker: int
    out: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)
    seen_lines: set[str] = field(default_factory=set)

    def data(self, side: _Side, memory_id: str) -> dict[str, Any] | None:
        item = side.items.get(memory_id)
        return item.data if item is not None else None

    def entry_text(self, memory_id: str) -> str:
        """The merged text of one entry present in ours ('' when it goes)."""
        base, ours = self.data(self.base, memory_id), self.data(self.ours, memory_id)
        theirs = self.data(self.theirs, memory_id)
        assert ours is not None
        if theirs is None:
            if base is None and memory_id in self.plan.carry_ours:
                return self.carried(memory_id, self.ours.span(memory_id), ours, True)
            if base is None or base == ours or memory_id in self.plan.retired_theirs:
                return self.ours.span(memory_id) if base is None else ""
            return self.conflict(memory_id)
        if theirs in (ours, base):
            return self.ours.span(memory_id)
        if ours == base:
            return _reindent(self.theirs.span(memory_id), self.ours.indent)
        if base is None and identity(ours) != identity(theirs):
            return self.conflict(memory_id)
        merged = merge_fields(base, ours, theirs, self.plan.later)
        if merged is None and self.plan.settle_with_ours:  # a repair: ours, and it says so
            self.settled.append(memory_id)
            merged = merge_fields(base, ours, theirs, self.plan.later, settle_with_ours=True)
        if merged is None:
            return self.conflict(memory_id)
        return _rewrite(self.ours.span(memory_id), self.ours.indent, merged)

    def conflict(self, memory_id: str) -> str:
        ours = self.ours.span(memory_id) if memory_id in self.ours.items else ""
        theirs = _reindent(self.theirs.span(memory_id), self.ours.indent) if (
            memory_id in self.theirs.items) else ""
        if self.plan.settle_with_ours:
            self.settled.append(memory_id)
            return ours or theirs
        self.conflicts.append(memory_id)
        return (f"{'<' * self.marker} ours\n{ours}{'=' * self.marker}\n{theirs}"
                f"{'>' * self.marker} {self.plan.theirs_label}\n")

    def gap(self, key: str) -> list[str]:
        ours = self.ours.gaps.get(key, [])
        theirs = self.theirs.gaps.get(key)
        base = self.base.gaps.get(key, [])
        if theirs is None or theirs in (base, ours):
            return ours
        if ours == base:
            return theirs
        extra = [line for line in theirs if line.strip() and line not in ours and line not in base]
        return ours + extra

    def theirs_only(self, memory_id: str) -> list[str]:
        """Text of an entry only theirs has, or '' when ours removed it on purpose."""
        base, theirs = self.data(self.base, memory_id), self.data(self.theirs, memory_id)
        if base is not None and (base == theirs or memory_id in self.plan.retired_ours):
            return []
        if base is not None:
            return [self.conflict(memory_id)]
        known = self.known()
        gap = self.theirs.gaps.get(memory_id, [])
        fresh = [line for line in gap if line.strip() and line not in known]
        blank = [line for line in gap if not line.strip()] if not fresh else []
        span = _reindent(self.theirs.span(memory_id), self.ours.indent)
        if memory_id in self.plan.carry_theirs and theirs is not None:
            span = self.carried(memory_id, span, theirs, False)
        return [*blank, *fresh, span]

    def carried(self, memory_id: str, span: str, archived: dict[str, Any], ours: bool) -> str:
        """The text of an entry one side archived (`ours`: this side), with what the other
        side changed in it where it was (superseded it, say); as it is when the two changes
        cannot be told apart."""
        base, other = (self.plan.carry_ours if ours else self.plan.carry_theirs)[memory_id]
        merged = merge_fields(base, archived if ours else other, other if ours else archived,
                              self.plan.later)
        return span if merged is None else _rewrite(span, self.ours.indent, merged)

    def known(self) -> set[str]:
        if not self.seen_lines:
            self.seen_lines = set(self.ours.lines) | set(self.base.lines)
        return self.seen_lines

    def run(self) -> str:
        self.out += self.gap("^")
        for position, memory_id in enumerate(self.ours.order):
            if position:
                self.out += self.gap(memory_id)
            self.out.append(self.entry_text(memory_id))
        self.out += self.gap("")
        for memory_id in self.theirs.order:
            if memory_id not in self.ours.items:
                self.out += self.theirs_only(memory_id)
        return "".join(self.out)


def merge_texts(texts: tuple[str, str, str], plan: Plan, path: str = "file",
                marker: int = 7) -> Merged:
    """Merge three versions of a grimoire file. Raises InvalidFile when one does not parse or
    has an entry without a unique id (the caller falls back to a line merge)."""
    base, ours, theirs = texts
    job = _Job(_parse(base, f"{path} (base)"),
               _parse(rename_ids(ours, plan.rename_ours), f"{path} (ours)"),
               _parse(rename_ids(theirs, plan.rename_theirs), f"{path} (theirs)"), plan, marker)
    text = job.run()
    if not job.conflicts:
        yamlio.load_list(text, f"{path} (merged)")
    in_ours, in_theirs = set(MEM_ID.findall(ours)), set(MEM_ID.findall(theirs))
    renamed = {old: new for old, new in plan.rename_ours.items() if old in in_ours}
    renamed.update({old: new for old, new in plan.rename_theirs.items() if old in in_theirs})
    return Merged(text, job.conflicts, renamed, job.settled)


def _rewrite(span: str, indent: int, merged: dict[str, Any]) -> str:
    def apply(mapping: Any) -> None:
        for key in [k for k in mapping if k not in merged]:
            del mapping[key]
        for key, value in merged.items():
            if yamledit.plain(mapping.get(key, _MISSING)) != value:
                mapping[key] = value
    return yamledit.edit_item(span, indent, apply)


def _reindent(text: str, indent: int) -> str:
    lines = text.splitlines(keepends=True)
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")),
                 "")
    current = len(first) - len(first.lstrip())
    if current == indent:
        return text if text.endswith("\n") else text + "\n"
    shift: Callable[[str], str] = (lambda line: " " * (indent - current) + line) if (
        indent > current) else (lambda line: line[current - indent:] if line[
            :current - indent].isspace() else line.lstrip())
    joined = "".join(shift(line) if line.strip() else line for line in lines)
    return joined if joined.endswith("\n") else joined + "\n"
