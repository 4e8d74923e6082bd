"""MDAN's own sidecar file (`{agent}.sidecar.json`) and an agent sidecar, both ways. Pure.

The format, as the MDAN memory protocol writes it (every key but `memories` may be left out):

    {"agent": "winston", "created": "...", "last_updated": "...", "sessions_participated": 3,
     "memories": [{"type": "decision", "content": "...", "source_session": "2026-01-30",
                   "confidence": 1.0}],
     "relationships": {"agrees_with": [...], "disagrees_with": [...], "complements": [...]},
     "relationship_counts": {"mary": {"agree": 2}},
     "decision_history": [{"date": "...", "decision": "...", "session": null,
                           "confidence": 1.0, "memory": null}]}

What must always hold: `from_sidecar(to_sidecar(f))` gives back every key and value of a file
`f` that `parse` accepted and that has every key (lossless for the format); a key left out comes
back with its default (no relationships, no decisions, 0 sessions; `created` and a memory's
`source_session` from `last_updated`, which defaults to the import's time; a memory's confidence
from its type). Confidences follow MDAN's own scale, 0.5-1.0 (0.5 an inference, 0.6 an
observation), not the Loa category floors.
"""

from __future__ import annotations

import json
import math
from typing import Any

from loa_mem.agents import rules
from loa_mem.agents.sidecars import RELATIONSHIP_KINDS, check_agent_name
from loa_mem.core.errors import Refused

TOP_KEYS = ("agent", "created", "last_updated", "sessions_participated", "memories",
            "relationships", "relationship_counts", "decision_history")
MEMORY_KEYS = ("type", "content", "source_session", "confidence")
DECISION_KEYS = ("date", "session", "decision", "confidence", "memory")
COUNT_KEYS = ("agree", "disagree", "complement")
_FIX = "fix the file (an MDAN sidecar, see `loa-mem import --help`); nothing was written"


def _bad(name: str, where: str, what: str) -> Refused:
    return Refused(f"{name}: {where} {what}", _FIX)


def _unknown(name: str, where: str, item: dict[str, Any], keys: tuple[str, ...]) -> None:
    extra = sorted(set(item) - set(keys))
    if extra:
        raise _bad(name, where, f"has unknown key {extra[0]!r} (known: {', '.join(keys)})")


def _text(name: str, where: str, value: Any, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise _bad(name, where, "must be non-empty text")


def _unit(name: str, where: str, value: Any, low: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= 1:
        raise _bad(name, where, f"must be a number from {low:g} to 1, not {value!r}")


def _memory(name: str, n: int, memory: Any) -> None:
    where = f"memories[{n}]"
    if not isinstance(memory, dict):
        raise _bad(name, where, "must be an object")
    _unknown(name, where, memory, MEMORY_KEYS)
    if memory.get("type") not in rules.TYPES:
        raise _bad(name, f"{where}.type", f"must be one of {', '.join(rules.TYPES)}")
    _text(name, f"{where}.content", memory.get("content"))
    if len(memory["content"]) > rules.MAX_CONTENT or "\n" in memory["content"]:
        raise _bad(name, f"{where}.content", f"must be one line of at most {rules.MAX_CONTENT} "
                   "characters")
    if "confidence" in memory:
        _unit(name, f"{where}.confidence", memory["confidence"], 0.5)
    if "source_session" in memory:
        _text(name, f"{where}.source_session", memory["source_session"])


def _relationships(name: str, data: dict[str, Any]) -> None:
    found = data.get("relationships", {})
    if not isinstance(found, dict):
        raise _bad(name, "relationships", "must be an object")
    _unknown(name, "relationships", found, RELATIONSHIP_KINDS)
    for kind, names in found.items():
        if not isinstance(names, list) or not all(isinstance(a, str) and a for a in names):
            raise _bad(name, f"relationships.{kind}", "must be a list of agent names")
    counts = data.get("relationship_counts", {})
    if not isinstance(counts, dict):
        raise _bad(name, "relationship_counts", "must be an object")
    for other, by_kind in counts.items():
        where = f"relationship_counts.{other}"
        if not isinstance(by_kind, dict):
            raise _bad(name, where, "must be an object")
        _unknown(name, where, by_kind, COUNT_KEYS)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                   for v in by_kind.values()):
            raise _bad(name, where, "must count with whole numbers from 0")


def _decisions(name: str, data: dict[str, Any]) -> None:
    history = data.get("decision_history", [])
    if not isinstance(history, list):
        raise _bad(name, "decision_history", "must be a list")
    for n, item in enumerate(history):
        where = f"decision_history[{n}]"
        if not isinstance(item, dict):
            raise _bad(name, where, "must be an object")
        _unknown(name, where, item, DECISION_KEYS)
        _text(name, f"{where}.date", item.get("date"))
        _text(name, f"{where}.decision", item.get("decision"))
        for key in ("session", "memory"):
            _text(name, f"{where}.{key}", item.get(key), optional=True)
        if "confidence" in item:
            _unit(name, f"{where}.confidence", item["confidence"], 0.0)


def parse(text: str, name: str) -> dict[str, Any]:
    """The file's data, checked: Refused (naming the key) at the first thing out of format."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise Refused(f"{name} is not JSON ({error})", _FIX) from None
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise Refused(f"{name} is not an MDAN sidecar (no \"memories\" list)", _FIX)
    _unknown(name, "the sidecar", data, TOP_KEYS)
    if "agent" in data:
        _text(name, "agent", data["agent"])
    for key in ("created", "last_updated"):
        if key in data:
            _text(name, key, data[key])
    sessions = data.get("sessions_participated", 0)
    if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 0:
        raise _bad(name, "sessions_participated", "must be a whole number from 0")
    for n, memory in enumerate(data["memories"]):
        _memory(name, n, memory)
    _relationships(name, data)
    _decisions(name, data)
    return data


def agent_of(data: dict[str, Any], name: str, given: str | None) -> str:
    """The agent: --agent, else the file's `agent`, else the file name before `.sidecar.json`."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].split(".", maxsplit=1)[0]
    return check_agent_name(given or str(data.get("agent") or stem))


def to_sidecar(data: dict[str, Any], agent: str, now_iso: str) -> dict[str, Any]:
    """A loa-mem agent sidecar holding the file's data (memories get ids m1, m2, ...)."""
    updated = str(data.get("last_updated") or now_iso)
    sidecar: dict[str, Any] = {"agent": agent, "created": str(data.get("created") or updated),
                               "last_updated": updated,
                               "sessions_participated": int(data.get("sessions_participated", 0)),
                               "memory_seq": len(data["memories"]), "memories": []}
    for n, memory in enumerate(data["memories"], start=1):
        kind = str(memory["type"])
        sidecar["memories"].append({
            "id": f"m{n}", "type": kind, "content": memory["content"],
            "confidence": memory.get("confidence", rules.DEFAULT_CONFIDENCE[kind]),
            "source_session": str(memory.get("source_session") or updated),
            "unreinforced_sessions": 0})
    found = data.get("relationships") or {}
    sidecar["relationships"] = {kind: list(found.get(kind) or []) for kind in RELATIONSHIP_KINDS}
    sidecar["relationship_counts"] = {k: dict(v) for k, v in
                                      (data.get("relationship_counts") or {}).items()}
    sidecar["decision_history"] = [dict(d) for d in data.get("decision_history") or []]
    return sidecar


def from_sidecar(sidecar: dict[str, Any]) -> dict[str, Any]:
    """The sidecar in MDAN's format (loa-mem's own fields, such as ids, left out)."""
    out: dict[str, Any] = {"agent": sidecar.get("agent")}
    for key in ("created", "last_updated"):
        if sidecar.get(key) is not None:
            out[key] = str(sidecar[key])
    out["sessions_participated"] = int(sidecar.get("sessions_participated") or 0)
    out["memories"] = [{k: m[k] for k in MEMORY_KEYS if k in m}
                       for m in rules.memories(sidecar) if isinstance(m, dict)]
    found = sidecar.get("relationships") or {}
    out["relationships"] = {kind: list(found.get(kind) or []) for kind in RELATIONSHIP_KINDS}
    out["relationship_counts"] = {str(k): dict(v) for k, v in
                                  (sidecar.get("relationship_counts") or {}).items()}
    out["decision_history"] = [dict(d) for d in sidecar.get("decision_history") or []]
    return out


def merge(existing: dict[str, Any], incoming: dict[str, Any]) -> tuple[int, int]:
    """Add an imported sidecar to the agent's own: memories it does not hold yet (new ids),
    relationships and decisions it does not list yet, the higher counts and the later update.
    Returns (memories added, memories already held)."""
    added = held = 0
    for memory in rules.memories(incoming):
        if rules.duplicate_of(existing, memory["type"], memory["content"]) is not None:
            held += 1
            continue
        rules.memories(existing).append({**memory, "id": rules.next_id(existing)})
        added += 1
    mine = existing.setdefault("relationships", {})
    for kind, names in incoming["relationships"].items():
        listed = mine.setdefault(kind, [])
        listed.extend(n for n in names if n not in listed)
    counts = existing.setdefault("relationship_counts", {})
    for other, by_kind in incoming["relationship_counts"].items():
        row = counts.setdefault(other, {})
        for kind, count in by_kind.items():
            row[kind] = max(int(row.get(kind) or 0), count)
    history = existing.setdefault("decision_history", [])
    history.extend(d for d in incoming["decision_history"] if d not in history)
    existing["sessions_participated"] = max(int(existing.get("sessions_participated") or 0),
                                            incoming["sessions_participated"])
    existing["last_updated"] = max(str(existing.get("last_updated") or ""),
                                   incoming["last_updated"])
    return added, held
