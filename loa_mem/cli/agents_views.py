"""Human output of the agent and session commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loa_mem.cli.render import Block, Table

if TYPE_CHECKING:
    from loa_mem.agents.commands import AgentList, AgentShown, Changed
    from loa_mem.agents.sessions import Ended, OpenSessions, Started


def _c(value: Any) -> str:
    return str(round(float(value), 2))


def _relations(relationships: dict[str, Any]) -> str:
    parts = [f"{k}: {', '.join(str(a) for a in v)}" for k, v in relationships.items()
             if isinstance(v, list) and v]
    return "; ".join(parts) or "-"


def agent_list(result: AgentList) -> list[Block]:
    if not result.agents:
        return ["no agents yet (`loa-mem agent remember A TEXT --type T` or a session creates one)"]
    rows = [[a["agent"], a["sessions"], a["memories"], a["last_updated"],
             _relations(a["relationships"])] for a in result.agents]
    return [Table(["agent", "sessions", "memories", "last updated", "relationships"], rows)]


def agent_show(result: AgentShown) -> list[Block]:
    data = result.sidecar
    out: list[Block] = [
        f"{result.agent}  ({result.path})",
        f"sessions: {data.get('sessions_participated', 0)}  last updated: "
        f"{data.get('last_updated')}  relationships: {_relations(data.get('relationships') or {})}",
    ]
    memories = [m for m in data.get("memories") or [] if isinstance(m, dict)]
    out.append(Table(["id", "type", "confidence", "unreinforced", "content"],
                     [[m.get("id"), m.get("type"), m.get("confidence"),
                       m.get("unreinforced_sessions"), m.get("content")] for m in memories],
                     title="memories") if memories else "memories: none")
    history = [d for d in data.get("decision_history") or [] if isinstance(d, dict)]
    if history:
        out.append(Table(["date", "session", "memory", "decision"],
                         [[d.get("date"), d.get("session"), d.get("memory"), d.get("decision")]
                          for d in history], title="decision history"))
    if data.get("trust"):
        out.append(f"trust: see `loa-mem trust show {result.agent}`")
    return out


def changed(result: Changed) -> list[Block]:
    d = result.details
    if result.pending:
        what = {"remember": lambda: f"memory [{d['type']}] ({_c(d['confidence'])})",
                "reinforce": lambda: f"reference to {d['id']}",
                "relate": lambda: _relation(d)}[result.action]()
        out: list[Block] = [f"{result.agent}: {what} recorded in session {result.session} "
                            f"(applied by `loa-mem session end --session {result.session}`)"]
        if result.action == "remember" and d["recorded_this_session"] > d["kept_at_end"]:
            out.append(f"{d['recorded_this_session']} memories recorded for {result.agent} in "
                       f"session {result.session}; session end keeps at most "
                       f"{d['kept_at_end']} new ones, the most confident (the earliest on a tie)")
        return out
    if result.action == "remember":
        if not d["created"]:
            return [f"{result.agent} already remembers this as {d['id']}; nothing written"]
        out = [f"{result.agent}: remembered {d['id']} [{d['type']}] ({_c(d['confidence'])})"]
        out += [f"pruned {p['id']} ({_c(p['confidence'])}): {p['reason']}" for p in d["pruned"]]
        return out
    if result.action == "reinforce":
        return [f"{result.agent}: {d['id']} confidence {_c(d['confidence_before'])} -> "
                f"{_c(d['confidence'])}"]
    listed = f"; now in {d['listed']}" if d["listed"] else ""
    return [f"{result.agent}: {_relation(d)} counted ({d['count']}){listed}"]


def _relation(d: dict[str, Any]) -> str:
    verb = {"agree": "agreed with", "disagree": "disagreed with",
            "complement": "complemented"}.get(str(d["relation"]), str(d["relation"]))
    return f"{verb} {d['other']}"


def started(result: Started) -> list[Block]:
    return [result.text.rstrip("\n")]


def _agent_lines(o: dict[str, Any]) -> list[str]:
    lines = [f"{o['agent']}: session {o['sessions']}, {len(o['added'])} new"]
    lines += [f"  + {a['id']} [{a['type']}] ({_c(a['confidence'])}) {a['content']}"
              for a in o["added"]]
    lines += [f"  not kept (over {len(o['added'])} new this session): [{x['type']}] "
              f"({_c(x['confidence'])}) {x['content']}" for x in o["dropped"]]
    lines += [f"  restated {i} (counts as a reference)" for i in o["restated"]]
    lines += [f"  reinforced {r['id']} -> {_c(r['confidence'])}" for r in o["reinforced"]]
    lines += [f"  decayed {r['id']} -> {_c(r['confidence'])} (5 sessions unreinforced)"
              for r in o["decayed"]]
    lines += [f"  pruned {p['id']} ({_c(p['confidence'])}, {p['reason']}): {p['content']}"
              for p in o["pruned"]]
    lines += [f"  now {r['list']}: {r['agent']}" for r in o["relationships"]]
    lines += [f"  unknown reference {i} (ignored)" for i in o["missing_references"]]
    return lines


def ended(result: Ended) -> list[Block]:
    out: list[Block] = [f"session {result.session} ended"]
    for o in result.agents:
        out += _agent_lines(o)
    out.append(f"state index: {result.state_index}"
               + (f"; commit {result.commit[:8]}" if result.commit else "; not committed"))
    return out


def open_sessions(result: OpenSessions) -> list[Block]:
    if not result.sessions:
        return ["no open sessions"]
    rows = [[s["session"], s["started"], s["agents"], s["recorded"]["memory"],
             s["recorded"]["reference"], s["recorded"]["relation"]] for s in result.sessions]
    return [Table(["session", "started", "agents", "memories", "references", "relations"], rows)]
