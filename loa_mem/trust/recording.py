"""trust dissent | override | check-reverts: the commands that record trust events.

Each takes the store lock, changes only the `trust` block of the sidecars concerned (a missing
sidecar is created: a new agent, on probation), and makes one commit with one events-log line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import NotFound, NothingToDo, Refused
from loa_mem.trust import commands as reads
from loa_mem.trust import regret, rules, similarity


def _arrow(before: float, after: float) -> str:
    return f"trust {rules.moved(before, after)}"


@dataclass(frozen=True)
class Dissented:
    agent: str
    round_id: str | None
    impact: bool
    depth: rules.Depth
    score_before: float
    score: float
    probation: bool
    rounds: int
    created: bool
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        d = self.depth
        return {"agent": self.agent, "round_id": self.round_id, "impact": self.impact,
                "depth": {"score": d.depth, "words": d.words, "length": d.length,
                          "citations": d.citations, "citation_bonus": d.citation_bonus,
                          "novelty": d.novelty},
                "score_before": self.score_before, "score": self.score,
                "probation": self.probation, "rounds_participated": self.rounds,
                "created_sidecar": self.created, "commit": self.commit}


def dissent(store: Any, agent: str, text: str, citations: list[str], impact: bool,
            round_id: str | None, actor: str, commit: bool = True,
            about: rules.About | None = None) -> Dissented:
    from loa_mem.agents import sidecars

    agent = sidecars.check_agent_name(agent)
    text = reads.check_text(text, "the dissent text")
    cited = reads.check_citations(citations)
    round_id = reads.check_round(round_id, required=False)
    about = reads.check_about(about or rules.About())
    s = reads.settings(store)
    with store.write("trust", actor, commit) as txn:
        now = clock.now()
        data, created = reads.load(store, agent)
        record = reads.record_of(store, agent, data, now)
        before = float(record["trust_score"])
        made = rules.add_dissent(record, text=text, citations=cited, impact=impact,
                                 round_id=round_id, now=now, settings=s,
                                 about=replace(about, sessions=reads.sessions_of(data)))
        data["trust"] = record
        sidecars.put_sidecar(txn, store, agent, data)
        after = float(record["trust_score"])
        txn.event("trust-dissent", [], None, agent=agent, round_id=round_id, impact=impact,
                  depth=made["depth_score"], score=after)
        where = f" in {round_id}" if round_id else ""
        txn.what = (f"dissent by {agent}{where} (depth {made['depth_score']:g}; "
                    f"{_arrow(before, after)})")
    parts = made["depth_parts"]
    depth = rules.Depth(len(text.split()), parts["length"], len(made["rubric_citations"]),
                        parts["citations"], parts["novelty"], made["depth_score"])
    return Dissented(agent, round_id, impact, depth, before, after, bool(record["probation"]),
                     int(record["rounds_participated"]), created, txn.commit_sha)


@dataclass(frozen=True)
class Overridden:
    agent: str
    round_id: str
    agent_output: regret.Version
    human_decision: regret.Version
    similarity: float
    deadline: str
    score_before: float
    score: float
    created: bool
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        def version(v: regret.Version) -> dict[str, Any]:
            return {"path": v.path, "sha256": v.sha256, "words": v.words}

        return {"agent": self.agent, "round_id": self.round_id,
                "agent_output": version(self.agent_output),
                "human_decision": version(self.human_decision),
                "similarity": self.similarity, "auto_check_deadline": self.deadline,
                "score_before": self.score_before, "score": self.score,
                "created_sidecar": self.created, "commit": self.commit}


def override(store: Any, agent: str, round_id: str, agent_output: str, human_decision: str,
             actor: str, commit: bool = True, about: rules.About | None = None) -> Overridden:
    from loa_mem.agents import sidecars

    agent = sidecars.check_agent_name(agent)
    checked_round = str(reads.check_round(round_id, required=True))
    about = reads.check_about(about or rules.About())
    mine, theirs = reads.read_text_file(agent_output, "--agent-output"), reads.read_text_file(
        human_decision, "--human-decision")
    if similarity.content_hash(mine) == similarity.content_hash(theirs):
        raise Refused("the human decision is the agent output: nothing was overridden",
                      "pass the file the human changed")
    closeness = similarity.text_cosine(mine, theirs)
    ours = regret.Version.of(reads.shown_path(store, agent_output), mine)
    human = regret.Version.of(reads.shown_path(store, human_decision), theirs)
    s = reads.settings(store)
    with store.write("trust", actor, commit) as txn:
        now = clock.now()
        data, created = reads.load(store, agent)
        record = reads.record_of(store, agent, data, now)
        for past in record.get("override_history") or []:
            if (past["round_id"], past["agent_output"]["sha256"],
                    past["human_decision"]["sha256"]) == (checked_round, ours.sha256,
                                                          human.sha256):
                raise NothingToDo(f"this override of {agent} in {checked_round} is already "
                                  "recorded", "nothing to change")
        before = float(record["trust_score"])
        made = regret.add_override(record, round_id=checked_round, agent=ours, human=human,
                                   closeness=closeness, now=now, settings=s,
                                   about=replace(about, sessions=reads.sessions_of(data)))
        data["trust"] = record
        sidecars.put_sidecar(txn, store, agent, data)
        after = float(record["trust_score"])
        txn.event("trust-override", [], None, agent=agent, round_id=checked_round,
                  similarity=made["similarity"], deadline=made["auto_check_deadline"],
                  score=after)
        txn.what = f"override of {agent} in {checked_round} ({_arrow(before, after)})"
    return Overridden(agent, checked_round, ours, human, float(made["similarity"]),
                      str(made["auto_check_deadline"]), before, after, created, txn.commit_sha)


@dataclass(frozen=True)
class Check:
    agent: str
    status: str  # reverted | replaced | kept | pending
    how: str
    deadline: str
    similarity_to_agent: float | None
    similarity_to_human: float | None
    score_before: float
    score: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Checked:
    round_id: str
    final: regret.Version
    checks: list[Check]
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return {"round_id": self.round_id,
                "final": {"path": self.final.path, "sha256": self.final.sha256},
                "checks": [c.to_json() for c in self.checks], "commit": self.commit}


def _check_one(record: dict[str, Any], agent: str, past: dict[str, Any],
               final: regret.Version, now: Any, s: rules.Settings) -> tuple[Check, bool]:
    before = float(record["trust_score"])
    found, changed = regret.settle(record, past, final, now, s)
    pending = found.status == "pending"
    return Check(agent, found.status, found.how, str(past["auto_check_deadline"]),
                 None if pending else found.similarity_to_agent,
                 None if pending else found.similarity_to_human, before,
                 float(record["trust_score"])), changed


def check_reverts(store: Any, round_id: str, final_path: str, actor: str,
                  commit: bool = True) -> Checked:
    """Compare the round's final version with every override recorded in that round: a return
    to the agent's output is a regret at once; after the deadline, anything but the human
    decision is (see `loa_mem.trust.regret`)."""
    from loa_mem.agents import sidecars

    checked_round = str(reads.check_round(round_id, required=True))
    final = regret.Version.of(reads.shown_path(store, final_path),
                             reads.read_text_file(final_path, "--final"))
    s = reads.settings(store)
    checks: list[Check] = []
    with store.write("trust", actor, commit) as txn:
        now = clock.now()
        for agent in sidecars.agent_names(store):
            data = sidecars.load_sidecar(store, agent)
            if data is None or not data.get("trust"):
                continue
            record = reads.record_of(store, agent, data, now)
            changed = False
            for past in record.get("override_history") or []:
                if past["round_id"] == checked_round:
                    check, moved = _check_one(record, agent, past, final, now, s)
                    checks.append(check)
                    changed = changed or moved
            if changed:
                data["trust"] = record
                sidecars.put_sidecar(txn, store, agent, data)
        if not checks:
            raise NotFound(f"no override was recorded in round {checked_round}",
                           "record one with `loa-mem trust override`")
        if txn.files:
            txn.event("trust-check-reverts", [], None, round_id=checked_round,
                      final=final.sha256,
                      results={c.agent: c.status for c in checks})
            txn.what = (f"check-reverts {checked_round}: "
                        + ", ".join(f"{c.agent} {c.status}" for c in checks))
    return Checked(checked_round, final, checks, txn.commit_sha)
