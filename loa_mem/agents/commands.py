"""agent list | show | remember | reinforce | relate: agent sidecars (spec section 8).

The three writers record into the agent's open session (`--session ID`, or the session the
agent is in when none is named; loa_mem.agents.sessions) and `session end` applies the rules in
one commit, so the per-session cap and once-per-session counting hold whether or not
`--session` is given; with no open session they change the sidecar at once, one commit each.
Every sidecar write
also refreshes the state index (`agents.state_index`, the MDAN-STATE.json `agent_sidecars`
block).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loa_mem.agents import rules, sidecars
from loa_mem.agents.state import load_checked, save, settings
from loa_mem.core import clock
from loa_mem.core.errors import NotFound, Refused

if TYPE_CHECKING:
    from loa_mem.memory.store import Store


def _existing(store: Store, agent: str) -> dict[str, Any]:
    data = load_checked(store, agent)
    if data is None:
        raise NotFound(f"no such agent (no sidecar {sidecars.sidecar_rel(store, agent)})",
                       "see `loa-mem agent list`")
    return data


# -- reading -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentList:
    agents: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"agents": self.agents}


def list_agents(store: Store) -> AgentList:
    found = []
    for agent in sidecars.agent_names(store):
        data = sidecars.read_sidecar(store, agent) or {}
        relationships = data.get("relationships")
        found.append({"agent": agent, "sessions": int(data.get("sessions_participated") or 0),
                      "memories": len(rules.memories(data)),
                      "last_updated": data.get("last_updated"),
                      "relationships": relationships if isinstance(relationships, dict) else {},
                      "path": sidecars.sidecar_rel(store, agent)})
    return AgentList(found)


@dataclass(frozen=True)
class AgentShown:
    agent: str
    path: str
    sidecar: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "path": self.path, "sidecar": self.sidecar}


def show(store: Store, agent: str) -> AgentShown:
    agent = sidecars.check_agent_name(agent)
    data = sidecars.read_sidecar(store, agent)
    if data is None:
        raise NotFound(f"no such agent (no sidecar {sidecars.sidecar_rel(store, agent)})",
                       "see `loa-mem agent list`")
    return AgentShown(agent, sidecars.sidecar_rel(store, agent), sidecars.plain(data))


# -- writing -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Changed:
    """One agent command's outcome: done now (with a commit) or recorded into a session."""

    action: str
    agent: str
    session: str | None
    pending: bool
    details: dict[str, Any] = field(default_factory=dict)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "agent": self.agent, "session": self.session,
                "pending": self.pending, **self.details, "commit": self.commit}


def remember(store: Store, agent: str, text: str, kind: str, confidence: float | None,
             session: str | None, actor: str, commit: bool = True) -> Changed:
    from loa_mem.agents import sessions
    from loa_mem.core import sensitive

    agent = sidecars.check_agent_name(agent)
    content = rules.check_content(text)
    kind = rules.check_type(kind)
    value = rules.check_confidence(confidence, kind)
    sensitive.refuse_sensitive(content, "the memory")
    record = {"kind": "memory", "type": kind, "content": content, "confidence": value}
    s = settings(store)
    session = session if session is not None else sessions.open_session_of(store, agent)
    if session is not None:
        count = sessions.record(store, session, agent, record)
        return Changed("remember", agent, session, True,
                       {"id": None, "type": kind, "content": content, "confidence": value,
                        "recorded_this_session": count, "kept_at_end": s.max_new_per_session})
    with store.write("agent", actor, commit) as txn:
        now = clock.now_iso()
        data = load_checked(store, agent)
        created_sidecar = data is None
        data = sidecars.new_sidecar(agent, now) if data is None else data
        stored = rules.duplicate_of(data, kind, content)
        details: dict[str, Any] = {"type": kind, "content": content, "confidence": value,
                                   "created_sidecar": created_sidecar}
        if stored is not None:
            details.update(id=str(stored.get("id")), created=False, pruned=[])
            return Changed("remember", agent, None, False, details)
        memory = rules.add_memory(data, kind, content, value, now_iso=now, source_session=now,
                                  session=None)
        data["last_updated"] = now
        pruned = rules.prune(data, s)
        save(txn, store, {agent: data})
        txn.event("agent-remember", [], None, agent=agent, memory=memory["id"], type=kind)
        txn.what = f"{agent} remembers {memory['id']} ({kind})"
        details.update(id=memory["id"], created=True, pruned=pruned)
    return Changed("remember", agent, None, False, details, txn.commit_sha)


def reinforce(store: Store, agent: str, memory_id: str, session: str | None, actor: str,
              commit: bool = True) -> Changed:
    from loa_mem.agents import sessions

    agent = sidecars.check_agent_name(agent)
    s = settings(store)
    session = session if session is not None else sessions.open_session_of(store, agent)
    if session is not None:
        rules.find_memory(_existing(store, agent), memory_id, agent)
        sessions.record(store, session, agent, {"kind": "reference", "memory": memory_id})
        return Changed("reinforce", agent, session, True, {"id": memory_id})
    with store.write("agent", actor, commit) as txn:
        now = clock.now_iso()
        data = _existing(store, agent)
        memory = rules.find_memory(data, memory_id, agent)
        before = float(memory["confidence"])
        after = rules.reinforce(memory, s.reinforce_step, now)
        data["last_updated"] = now
        save(txn, store, {agent: data})
        txn.event("agent-reinforce", [], None, agent=agent, memory=memory_id, confidence=after)
        txn.what = f"{agent} reinforces {memory_id} ({before:g} -> {after:g})"
    return Changed("reinforce", agent, None, False,
                   {"id": memory_id, "confidence_before": before, "confidence": after},
                   txn.commit_sha)


def relate(store: Store, agent: str, other: str, relation: str, session: str | None,
           actor: str, commit: bool = True) -> Changed:
    from loa_mem.agents import sessions

    agent = sidecars.check_agent_name(agent)
    other = sidecars.check_agent_name(other)
    if other == agent:
        raise Refused(f"{agent} cannot relate to itself", "name another agent")
    if relation not in rules.RELATIONS:
        raise Refused("unknown relation", "use --agree, --disagree or --complement")
    session = session if session is not None else sessions.open_session_of(store, agent)
    if session is not None:
        sessions.record(store, session, agent,
                        {"kind": "relation", "other": other, "relation": relation})
        return Changed("relate", agent, session, True, {"other": other, "relation": relation})
    with store.write("agent", actor, commit) as txn:
        now = clock.now_iso()
        data = load_checked(store, agent) or sidecars.new_sidecar(agent, now)
        listed = rules.relate(data, other, relation, settings(store))
        data["last_updated"] = now
        count = int(data["relationship_counts"][other][relation])
        save(txn, store, {agent: data})
        txn.event("agent-relate", [], None, agent=agent, other=other, relation=relation,
                  count=count)
        txn.what = f"{agent} {relation}s with {other} ({count})"
    return Changed("relate", agent, None, False,
                   {"other": other, "relation": relation, "count": count, "listed": listed},
                   txn.commit_sha)
