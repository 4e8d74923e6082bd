"""Three-way merge of one agent's sidecar changed on two branches (pure; the merge driver's part
for `<agents dir>/<agent>.yaml`).

Both branches may run sessions with the same agent. Its memories are matched by what they are
(type, content, when and in which session they were made), not by their per-sidecar id, since
each branch numbers its own new memories from the same `memory_seq`; a memory only the other
branch made keeps its id unless ours already uses it, then it takes the next free one. Rules:
- a memory added on either side is kept; pruned on one side, it goes (pruning wins over a
  change, as archiving does for entries);
- numbers changed on both sides add up what each side added (sessions, counts, confidence
  moves; confidence stays within 0..1); text and timestamps keep the later (larger) value;
- lists (relationships, decision and dissent histories) are unions in order: ours, then what
  only theirs added; an item removed on one side and kept on the other goes;
- the trust score is the score of the latest entry of the merged score history.
"""

from __future__ import annotations

import json
import re
from typing import Any

_MEMORY_ID = re.compile(r"^m(\d+)$")


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _identity(memory: Any) -> str:
    if not isinstance(memory, dict):
        return _key(memory)
    return _key([memory.get(k) for k in ("type", "content", "created", "session",
                                          "source_session")])


def _number(base: Any, ours: Any, theirs: Any) -> Any:
    if isinstance(base, (int, float)) and not isinstance(base, bool):
        total = ours + theirs - base
        if isinstance(total, float) and all(0 <= v <= 1 for v in (base, ours, theirs)):
            total = min(1.0, max(0.0, total))  # a confidence stays a confidence
        return round(total, 6) if isinstance(total, float) else total
    return max(ours, theirs)


def merge_value(base: Any, ours: Any, theirs: Any) -> Any:
    """A value both sides may have changed (None: absent). Two equal changes of a number are
    two changes (each branch counted its own session), not one."""
    if _key(theirs) == _key(base):
        return ours
    if _key(ours) == _key(base):
        return theirs
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (ours, theirs))
    if _key(ours) == _key(theirs) and not numbers:
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return _merge_dicts(base if isinstance(base, dict) else {}, ours, theirs)
    if isinstance(ours, list) and isinstance(theirs, list):
        return _merge_lists(base if isinstance(base, list) else [], ours, theirs)
    if numbers:
        return _number(base, ours, theirs)
    if isinstance(ours, str) and isinstance(theirs, str):
        return max(ours, theirs)
    return ours


def _merge_dicts(base: dict[str, Any], ours: dict[str, Any],
                 theirs: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key in dict.fromkeys([*ours, *theirs]):
        if key in base and (key not in ours or key not in theirs):
            kept = ours.get(key, theirs.get(key))
            if _key(kept) == _key(base[key]):
                continue  # removed on one side, untouched on the other
        merged[key] = merge_value(base.get(key), ours.get(key), theirs.get(key))
    return merged


def _merge_lists(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    by = _identity if any(isinstance(i, dict) and "content" in i for i in [*ours, *theirs]) else (
        _key)
    base_of = {by(item): item for item in base}
    ours_of = {by(item): item for item in ours}
    theirs_of = {by(item): item for item in theirs}
    merged = []
    for key in dict.fromkeys([*ours_of, *theirs_of]):
        if key in base_of and (key not in ours_of or key not in theirs_of):
            continue  # removed (pruned) on one side: removal wins
        if key in ours_of and key in theirs_of:
            merged.append(merge_value(base_of.get(key), ours_of[key], theirs_of[key]))
        else:
            merged.append(ours_of.get(key, theirs_of.get(key)))
    return merged


def merge_sidecar(base: dict[str, Any], ours: dict[str, Any],
                  theirs: dict[str, Any]) -> dict[str, Any]:
    """The merged sidecar; memory ids made unique, the trust score the latest one."""
    merged = _merge_dicts(base, ours, theirs)
    if "memory_seq" in merged:  # a high-water mark, not a count
        merged["memory_seq"] = max(int(ours.get("memory_seq") or 0),
                                   int(theirs.get("memory_seq") or 0))
    memories = merged.get("memories")
    if isinstance(memories, list):
        _unique_ids(merged, memories, ours)
    trust = merged.get("trust")
    if isinstance(trust, dict) and isinstance(trust.get("trust_score_history"), list):
        history = sorted((h for h in trust["trust_score_history"] if isinstance(h, dict)),
                         key=lambda h: str(h.get("timestamp")))
        trust["trust_score_history"] = history
        if history and "score" in history[-1]:
            trust["trust_score"] = history[-1]["score"]
    return merged


def _unique_ids(merged: dict[str, Any], memories: list[Any], ours: dict[str, Any]) -> None:
    ours_ids = {_identity(m): m.get("id") for m in ours.get("memories") or []
                if isinstance(m, dict)}
    highest = int(merged.get("memory_seq") or 0)
    for memory in memories:
        found = _MEMORY_ID.match(str(memory.get("id", ""))) if isinstance(memory, dict) else None
        highest = max(highest, int(found.group(1)) if found else 0)
    taken: set[str] = set()
    for memory in memories:
        if not isinstance(memory, dict):
            continue
        if _identity(memory) in ours_ids:
            memory["id"] = ours_ids[_identity(memory)]
        memory_id = str(memory.get("id"))
        if memory_id in taken:
            highest += 1
            old, memory["id"] = memory_id, f"m{highest}"
            _relink(merged, old, memory["id"], memory)
        taken.add(str(memory["id"]))
    if "memory_seq" in merged:
        merged["memory_seq"] = highest


def _relink(merged: dict[str, Any], old: str, new: str, memory: dict[str, Any]) -> None:
    """The decision-history line of a renumbered decision memory follows it."""
    for decision in merged.get("decision_history") or []:
        if isinstance(decision, dict) and decision.get("memory") == old and (
                decision.get("decision") == memory.get("content")):
            decision["memory"] = new
