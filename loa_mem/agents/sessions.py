"""session start | end | list: multi-agent sessions over the agent sidecars (spec section 8).

An open session is a JSON file in the git directory (`.git/loa-mem/sessions/<id>.json`), not in
the tree: it is working state of one clone, never committed, so the commands recording into a
session commit nothing, `session start` commits only the empty sidecar of an agent that has none,
and `session end` makes the session's one commit. It holds the participants and, in order, what
each recorded: memories, references to stored memories, agreements, disagreements and
complements. Writes to it hold the store lock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.agents import rules, sidecars
from loa_mem.core import clock
from loa_mem.core.errors import InvalidFile, NotFound, Refused

if TYPE_CHECKING:
    from loa_mem.memory.store import Store

# Runner ids (a Claude Code session id is a UUID) as well as our own `S-<time>`.
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def check_session_id(session: str) -> str:
    from loa_mem.core.sensitive import refuse_sensitive

    if not _SESSION.fullmatch(session) or ".." in session:
        raise Refused("the session id is not allowed",
                      "use up to 128 letters, digits, '-', '_', '.' or ':'")
    refuse_sensitive(session, "the session id")
    return session


def _dir(store: Store) -> Path:
    return store.cache_dir / "sessions"


def _path(store: Store, session: str) -> Path:
    return _dir(store) / f"{check_session_id(session)}.json"


def _read(store: Store, session: str) -> dict[str, Any]:
    path = _path(store, session)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound("no open session with that id",
                       "start it with `loa-mem session start --agent A --session ID`; "
                       "see `loa-mem session list`") from None
    except ValueError:
        raise InvalidFile(str(path), 1, 1, "open session state is not valid JSON",
                          "delete the file and start the session again") from None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        raise InvalidFile(str(path), 1, 1, "open session state is not a session",
                          "delete the file and start the session again")
    return data


def is_open(store: Store, session: str) -> bool:
    return _SESSION.fullmatch(session) is not None and _path(store, session).exists()


def _write(store: Store, data: dict[str, Any]) -> None:
    from loa_mem.core.filewrite import atomic_write

    path = _path(store, str(data["session"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def _locked(store: Store, op: str) -> Any:
    from loa_mem.core import lock

    return lock.hold(store.cache_dir / "write.lock", op, store.config.lock_timeout)


def record(store: Store, session: str, agent: str, item: dict[str, Any]) -> int:
    """Add what `agent` did to the open session; how many memories it has recorded in it."""
    with _locked(store, "session"):
        data = _read(store, session)
        if agent not in data["agents"]:
            raise Refused(f"{agent} is not in session {session}",
                          f"add it: `loa-mem session start --agent {agent} --session {session}`")
        data["records"].append({"agent": agent, "time": clock.now_iso(), **item})
        _write(store, data)
    return sum(1 for r in data["records"] if r["agent"] == agent and r["kind"] == "memory")


def open_session_of(store: Store, agent: str) -> str | None:
    """The open session `agent` takes part in; None when there is none; Refused when there are
    several (the caller must say which)."""
    found = [s["session"] for s in list_open(store).sessions if agent in s["agents"]]
    if len(found) > 1:
        raise Refused(f"{agent} is in {len(found)} open sessions ({', '.join(found)})",
                      "say which: --session ID")
    return found[0] if found else None


# -- start ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    session: str
    started: str
    joined: list[str]
    agents: list[dict[str, Any]]
    text: str
    created: list[str] = field(default_factory=list)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "started": self.started, "joined": self.joined,
                "agents": self.agents, "text": self.text, "created_sidecars": self.created,
                "commit": self.commit}


def _new_id(store: Store) -> str:
    base = "S-" + clock.now_iso().replace("-", "").replace(":", "")
    n, candidate = 1, base
    while _path(store, candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _briefing(store: Store, agent: str, recent: int) -> dict[str, Any]:
    """What the agent is told at start. `first_session` when it has no sidecar, or one with no
    session, memory or relationship yet (only the trust memory made it)."""
    from loa_mem.agents.state import read_checked

    found = read_checked(store, agent)
    data = found or {}
    raw = data.get("relationships")
    relationships = {k: [str(a) for a in (raw.get(k) or [] if isinstance(raw, dict) else [])]
                     for k in sidecars.RELATIONSHIP_KINDS}
    sessions = int(data.get("sessions_participated") or 0)
    shown = [{k: m.get(k) for k in ("id", "type", "content", "confidence")}
             for m in rules.recent(data, recent)]
    first = not (sessions or rules.memories(data) or any(relationships.values()))
    return {"agent": agent, "first_session": first, "sessions_participated": sessions,
            "memories": shown, "relationships": relationships, "new": found is None}


def start(store: Store, agents: list[str], session: str | None, actor: str = "",
          commit: bool = True) -> Started:
    """Open (or join) a session and return each agent's briefing, for injection; an agent
    without a sidecar gets an empty one (MDAN: "CREATE empty sidecar structure"), in one
    commit."""
    opened = _open(store, agents, session)
    missing = [b["agent"] for b in opened.agents if b.get("new")]
    for briefing in opened.agents:
        briefing.pop("new", None)
    if not missing:
        return opened
    return replace(opened, created=missing, commit=_create(store, opened.session, missing,
                                                           actor, commit))


def _create(store: Store, session: str, agents: list[str], actor: str, commit: bool
            ) -> str | None:
    from loa_mem.agents import state

    with store.write("session", actor, commit) as txn:
        now = clock.now_iso()
        made = {a: sidecars.new_sidecar(a, now) for a in agents
                if state.load_checked(store, a) is None}
        if made:
            state.save(txn, store, made)
            txn.event("session-start", [], None, session=session, created=list(made))
            txn.what = f"start session {session}: new sidecar for {', '.join(made)}"
    return txn.commit_sha


def _open(store: Store, agents: list[str], session: str | None) -> Started:
    if not agents:
        raise Refused("no agent given", "name each participant: --agent A [--agent B]")
    names = list(dict.fromkeys(sidecars.check_agent_name(a) for a in agents))
    recent = rules.Settings.of(store.config.section("agents")).recent_memories
    with _locked(store, "session"):
        sid = check_session_id(session) if session else _new_id(store)
        try:
            data = _read(store, sid)
        except NotFound:
            data = {"session": sid, "started": clock.now_iso(), "agents": [], "records": []}
        joined = [a for a in names if a not in data["agents"]]
        data["agents"] += joined
        # Every sidecar is read (and checked) before the session is opened or joined.
        briefings = [_briefing(store, a, recent) for a in data["agents"]]
        if joined:
            _write(store, data)
    return Started(sid, str(data["started"]), joined, briefings,
                   injection_text(sid, briefings))


def _number(value: object) -> str:
    try:
        return str(round(float(str(value)), 2))
    except ValueError:
        return str(value)


def injection_text(session: str, briefings: list[dict[str, Any]]) -> str:
    """The block an orchestrator puts into the agents' context (the protocol's wording)."""
    names = ", ".join(b["agent"] for b in briefings)
    out = [f"Agent memory for session {session} (agents: {names})"]
    for b in briefings:
        out += ["", f"## {b['agent']}"]
        if b["first_session"]:
            out.append("First session for this agent — no prior memories")
            continue
        out.append("Your memories from previous sessions:")
        out += [f"- [{m['type']}] {m['content']} (confidence: {_number(m['confidence'])}; "
                f"id {m['id']})" for m in b["memories"]] or ["- none kept"]
        out.append("Relationship notes:")
        listed = [f"{k}: {', '.join(v)}" for k, v in b["relationships"].items() if v]
        out += listed or ["none yet"]
    return "\n".join(out) + "\n"


# -- end -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ended:
    session: str
    started: str
    agents: list[dict[str, Any]]
    state_index: str
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "started": self.started, "agents": self.agents,
                "state_index": self.state_index, "commit": self.commit}


def end(store: Store, session: str, actor: str, commit: bool = True) -> Ended:
    """Apply the session-end rules to every participant's sidecar: one commit, then the open
    session is closed. Nothing is written when a sidecar does not parse."""
    from loa_mem.agents import state as agent_commands

    s = agent_commands.settings(store)
    path = _path(store, session)
    closing = path.with_suffix(".ending")
    try:
        data, outcomes, txn = _apply_end(store, session, actor, commit, s, path, closing)
    except BaseException:
        if closing.exists() and not path.exists():
            closing.rename(path)  # nothing was committed: the session stays open
        raise
    closing.unlink(missing_ok=True)
    return Ended(session, str(data["started"]), [o.to_json() for o in outcomes],
                 agent_commands.state_index_rel(store), txn.commit_sha)


def _apply_end(store: Store, session: str, actor: str, commit: bool, s: rules.Settings,
               path: Path, closing: Path) -> tuple[dict[str, Any], list[rules.Ended], Any]:
    from loa_mem.agents import state as agent_commands

    with store.write("session", actor, commit) as txn:
        data = _read(store, session)
        # Records arriving from now on find no open session instead of being lost.
        path.rename(closing)
        now = clock.now_iso()
        changed: dict[str, dict[str, Any]] = {}
        outcomes = []
        for agent in data["agents"]:
            sidecar = (agent_commands.load_checked(store, agent)
                       or sidecars.new_sidecar(agent, now))
            records = [r for r in data["records"] if r["agent"] == agent]
            outcomes.append(rules.end_session(sidecar, agent, records, session=session,
                                              started=str(data["started"]), now_iso=now, s=s))
            changed[agent] = sidecar
        agent_commands.save(txn, store, changed)
        added = sum(len(o.added) for o in outcomes)
        pruned = sum(len(o.pruned) for o in outcomes)
        txn.event("session-end", [], None, session=session, agents=list(data["agents"]),
                  added=added, pruned=pruned)
        txn.what = (f"end session {session} ({', '.join(data['agents'])}: {added} new "
                    f"{'memory' if added == 1 else 'memories'}, {pruned} pruned)")
    return data, outcomes, txn


# -- list ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpenSessions:
    sessions: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"sessions": self.sessions}


def list_open(store: Store) -> OpenSessions:
    found = []
    for path in sorted(_dir(store).glob("*.json")):
        try:
            data = _read(store, path.stem)
        except (InvalidFile, NotFound, Refused):
            continue
        counts = {kind: sum(1 for r in data["records"] if r.get("kind") == kind)
                  for kind in ("memory", "reference", "relation")}
        found.append({"session": data["session"], "started": data["started"],
                      "agents": data["agents"], "recorded": counts})
    return OpenSessions(found)
