"""The rules of agent memory (the MDAN memory protocol, spec section 8), without any IO.

A sidecar is a mapping (plain or ruamel round-trip); these functions change it in place, so a
sidecar a person edited keeps its comments. Every memory carries `unreinforced_sessions`: the
agent's sessions since it was created or last reinforced, reset when it decays. The settled
readings of what the protocol leaves open are listed in the README (How-to: agents, sessions
and trust) and tested in tests/test_agent_sessions.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loa_mem.core.errors import NotFound, Refused

TYPES = ("observation", "preference", "context", "decision")
# The protocol's confidence scale: 1.0 explicit decision or stated fact, 0.8 strong argument
# unchallenged, 0.6 observation from discussion, 0.5 inference. A recorded preference or
# constraint is stated by the agent, an observation is seen in discussion.
DEFAULT_CONFIDENCE = {"decision": 1.0, "context": 0.8, "preference": 0.8, "observation": 0.6}
MAX_CONTENT = 100
MIN_CONFIDENCE, MAX_CONFIDENCE = 0.5, 1.0
RELATIONS = {"agree": "agrees_with", "disagree": "disagrees_with", "complement": "complements"}


@dataclass(frozen=True)
class Settings:
    recent_memories: int = 10
    max_new_per_session: int = 5
    max_memories: int = 50
    decay_after_sessions: int = 5
    decay_step: float = 0.1
    prune_below: float = 0.3
    reinforce_step: float = 0.1
    relationship_threshold: int = 2

    @classmethod
    def of(cls, section: dict[str, Any]) -> Settings:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in section.items() if k in names})


# -- input ---------------------------------------------------------------------------------------
def check_content(text: str) -> str:
    """One line of at most 100 characters (runs of whitespace count as one space)."""
    content = " ".join(str(text).split())
    if not content:
        raise Refused("the memory is empty", "give a short sentence (at most 100 characters)")
    if len(content) > MAX_CONTENT:
        raise Refused(f"the memory has {len(content)} characters; an agent memory holds at most "
                      f"{MAX_CONTENT}", "shorten it to one concise line")
    return content


def check_type(kind: str) -> str:
    if kind not in TYPES:
        raise Refused("unknown memory type (--type)", f"use one of: {', '.join(TYPES)}")
    return kind


def check_confidence(value: float | None, kind: str) -> float:
    if value is None:
        return DEFAULT_CONFIDENCE[kind]
    if not MIN_CONFIDENCE <= value <= MAX_CONFIDENCE:
        raise Refused(f"confidence {value:g} is outside {MIN_CONFIDENCE}-{MAX_CONFIDENCE}",
                      "0.5 inference, 0.6 observation, 0.8 unchallenged argument, 1.0 decision")
    return round(float(value), 2)


def _norm(text: object) -> str:
    return " ".join(str(text).split()).casefold()


# -- reading a sidecar ---------------------------------------------------------------------------
def memories(data: dict[str, Any]) -> list[Any]:
    found = data.get("memories")
    if not isinstance(found, list):
        found = []
        data["memories"] = found
    return found


def find_memory(data: dict[str, Any], memory_id: str, agent: str) -> dict[str, Any]:
    for memory in memories(data):
        if isinstance(memory, dict) and str(memory.get("id")) == memory_id:
            return memory
    raise NotFound(f"agent {agent} has no memory {memory_id}",
                   f"see the ids with `loa-mem agent show {agent}`")


def duplicate_of(data: dict[str, Any], kind: str, content: str) -> dict[str, Any] | None:
    """The stored memory with the same type and the same content (case and spacing aside)."""
    for memory in memories(data):
        if (isinstance(memory, dict) and memory.get("type") == kind
                and _norm(memory.get("content")) == _norm(content)):
            return memory
    return None


def recent(data: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The last `count` memories in the order they were added (what a session start injects)."""
    found = [m for m in memories(data) if isinstance(m, dict)]
    return found[-count:] if count > 0 else []


# -- changing a sidecar --------------------------------------------------------------------------
def next_id(data: dict[str, Any]) -> str:
    """m1, m2, ...: never reused, even after the memory is pruned (`memory_seq` remembers)."""
    highest = int(data.get("memory_seq") or 0)
    for memory in memories(data):
        text = str(memory.get("id", "")) if isinstance(memory, dict) else ""
        if text[:1] == "m" and text[1:].isdigit():
            highest = max(highest, int(text[1:]))
    data["memory_seq"] = highest + 1
    return f"m{highest + 1}"


def add_memory(data: dict[str, Any], kind: str, content: str, confidence: float, *,
               now_iso: str, source_session: str, session: str | None) -> dict[str, Any]:
    memory = {"id": next_id(data), "type": kind, "content": content,
              "confidence": confidence, "source_session": source_session,
              "session": session, "created": now_iso, "unreinforced_sessions": 0}
    memories(data).append(memory)
    if kind == "decision":
        add_decision(data, content, confidence, source_session, session, str(memory["id"]))
    return memory


def add_decision(data: dict[str, Any], content: str, confidence: float, date: str,
                 session: str | None, memory_id: str | None) -> None:
    history = data.get("decision_history")
    if not isinstance(history, list):
        history = []
        data["decision_history"] = history
    history.append({"date": date, "session": session, "decision": content,
                    "confidence": confidence, "memory": memory_id})


def reinforce(memory: dict[str, Any], step: float, now_iso: str) -> float:
    """+step (at most 1.0) and the unreinforced count starts again; the new confidence."""
    memory["confidence"] = min(MAX_CONFIDENCE, round(float(memory["confidence"]) + step, 2))
    memory["unreinforced_sessions"] = 0
    memory["last_reinforced"] = now_iso
    return float(memory["confidence"])


def prune(data: dict[str, Any], s: Settings) -> list[dict[str, Any]]:
    """Drop memories under `prune_below`, then the lowest-confidence ones (the oldest first on a
    tie) until at most `max_memories` remain. The pruned, each with its reason."""
    found = memories(data)
    gone: list[dict[str, Any]] = []
    for memory in [m for m in found if _confidence(m) < s.prune_below]:
        gone.append(_pruned(memory, f"confidence under {s.prune_below:g}"))
        found.remove(memory)
    excess = len(found) - s.max_memories
    if excess > 0:
        order = sorted(range(len(found)), key=lambda n: (_confidence(found[n]), n))
        for n in sorted(order[:excess], reverse=True):
            gone.append(_pruned(found[n], f"over the cap of {s.max_memories}"))
            del found[n]
    return gone


def _confidence(memory: Any) -> float:
    try:
        return round(float(memory["confidence"]), 2) if isinstance(memory, dict) else 0.0
    except (KeyError, TypeError, ValueError):
        return 0.0


def _pruned(memory: Any, reason: str) -> dict[str, Any]:
    raw = memory if isinstance(memory, dict) else {}
    return {"id": str(raw.get("id")), "content": str(raw.get("content")),
            "confidence": _confidence(memory), "reason": reason}


def relate(data: dict[str, Any], other: str, kind: str, s: Settings) -> str | None:
    """Count one agreement, disagreement or complement with `other`; the relationship list the
    other agent was newly added to, if any (agree and disagree from the threshold on, complement
    at once)."""
    counts = data.get("relationship_counts")
    if not isinstance(counts, dict):
        counts = {}
        data["relationship_counts"] = counts
    pair = counts.get(other)
    if not isinstance(pair, dict):
        pair = {"agree": 0, "disagree": 0, "complement": 0}
        counts[other] = pair
    pair[kind] = int(pair.get(kind) or 0) + 1
    needed = 1 if kind == "complement" else s.relationship_threshold
    if pair[kind] < needed:
        return None
    relationships = data.get("relationships")
    if not isinstance(relationships, dict):
        relationships = {}
        data["relationships"] = relationships
    listed = relationships.get(RELATIONS[kind])
    if not isinstance(listed, list):
        listed = []
        relationships[RELATIONS[kind]] = listed
    if other in [str(a) for a in listed]:
        return None
    listed.append(other)
    return RELATIONS[kind]


@dataclass
class Ended:
    """What `end_session` did to one agent's sidecar."""

    agent: str
    sessions: int = 0
    added: list[dict[str, Any]] = field(default_factory=list)
    restated: list[str] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    reinforced: list[dict[str, Any]] = field(default_factory=list)
    decayed: list[dict[str, Any]] = field(default_factory=list)
    pruned: list[dict[str, Any]] = field(default_factory=list)
    relationships: list[dict[str, str]] = field(default_factory=list)
    decisions: int = 0
    missing_references: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def end_session(data: dict[str, Any], agent: str, records: list[dict[str, Any]], *,
                session: str, started: str, now_iso: str, s: Settings) -> Ended:
    """Apply every session-end rule to one participant's sidecar, in this order: count the
    session; reinforce referenced memories (+step) and age the others (-step after
    `decay_after_sessions` unreinforced sessions); add the session's best new memories (at most
    `max_new_per_session`); prune (under `prune_below`, then over `max_memories`); count the
    relationships."""
    done = Ended(agent)
    done.sessions = int(data.get("sessions_participated") or 0) + 1
    data["sessions_participated"] = done.sessions
    data["last_updated"] = now_iso
    new, referenced = _session_memories(data, records, done)
    _age(data, referenced, s, now_iso, done)
    ranked = sorted(range(len(new)), key=lambda n: (-float(new[n]["confidence"]), n))
    chosen = set(ranked[:s.max_new_per_session])
    for n, record in enumerate(new):
        if n in chosen:
            memory = add_memory(data, record["type"], record["content"],
                                float(record["confidence"]), now_iso=now_iso,
                                source_session=started, session=session)
            done.added.append({"id": memory["id"], "type": record["type"],
                               "content": record["content"],
                               "confidence": float(record["confidence"])})
        else:
            done.dropped.append({k: record[k] for k in ("type", "content", "confidence")})
            if record["type"] == "decision":  # history keeps every decision reached
                add_decision(data, record["content"], float(record["confidence"]), started,
                             session, None)
    done.decisions = sum(1 for r in new if r["type"] == "decision")
    done.pruned = prune(data, s)
    for record in records:
        if record.get("kind") == "relation":
            newly = relate(data, str(record["other"]), str(record["relation"]), s)
            if newly:
                done.relationships.append({"list": newly, "agent": str(record["other"])})
    return done


def _session_memories(data: dict[str, Any], records: list[dict[str, Any]], done: Ended
                      ) -> tuple[list[dict[str, Any]], set[str]]:
    """The session's new memories (a repeat within the session keeps its highest confidence)
    and the ids it referenced (restating a stored memory references it)."""
    new: list[dict[str, Any]] = []
    referenced: set[str] = set()
    for record in records:
        if record.get("kind") == "reference":
            referenced.add(str(record["memory"]))
        if record.get("kind") != "memory":
            continue
        stored = duplicate_of(data, record["type"], record["content"])
        if stored is not None:
            referenced.add(str(stored.get("id")))
            if str(stored.get("id")) not in done.restated:
                done.restated.append(str(stored.get("id")))
            continue
        same = [r for r in new if r["type"] == record["type"]
                and _norm(r["content"]) == _norm(record["content"])]
        if same:
            same[0]["confidence"] = max(float(same[0]["confidence"]), float(record["confidence"]))
        else:
            new.append(dict(record))
    return new, referenced


def _age(data: dict[str, Any], referenced: set[str], s: Settings, now_iso: str,
         done: Ended) -> None:
    known = set()
    for memory in memories(data):
        if not isinstance(memory, dict):
            continue
        memory_id = str(memory.get("id"))
        known.add(memory_id)
        if memory_id in referenced:
            done.reinforced.append({"id": memory_id,
                                    "confidence": reinforce(memory, s.reinforce_step, now_iso)})
            continue
        count = int(memory.get("unreinforced_sessions") or 0) + 1
        if count >= s.decay_after_sessions:
            memory["confidence"] = max(0.0, round(_confidence(memory) - s.decay_step, 2))
            done.decayed.append({"id": memory_id, "confidence": memory["confidence"]})
            count = 0
        memory["unreinforced_sessions"] = count
    done.missing_references = sorted(referenced - known)
