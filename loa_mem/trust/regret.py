"""Overrides and their regret (seed 002 section 6), pure rules on the plain `trust` mapping.

An override keeps each version's sha256 and fingerprint, never its text: an artifact can hold
personal or confidential data and a sidecar is committed and shared, and a hundred documents per
agent would weigh on every clone; a hash and a fingerprint are all that regret needs.

Regret, as the seed has it:
- at once, whatever the deadline: the final version went back to the agent's output (the same
  text, or nearer to it than to the human decision) — status `reverted`;
- after `auto_check_hours`: the final version is not the human decision — the agent's output or a
  third version alike (status `replaced`); the human decision itself keeps the override (`kept`);
- before the deadline, anything else is `pending`: nothing is marked yet.
Escalation usefulness is the share of checked overrides that held: held / (held + regretted).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loa_mem.core import clock
from loa_mem.trust import rules, similarity


@dataclass(frozen=True)
class Version:
    """What a sidecar keeps of a file: never its text (see similarity)."""
    path: str
    sha256: str
    words: int
    fingerprint: str

    @classmethod
    def of(cls, path: str, text: str) -> Version:
        return cls(path, similarity.content_hash(text), len(text.split()),
                   similarity.fingerprint(text))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "words": self.words,
                "fingerprint": self.fingerprint}


def add_override(record: dict[str, Any], *, round_id: str, agent: Version, human: Version,
                 closeness: float, now: datetime, settings: rules.Settings,
                 about: rules.About | None = None) -> dict[str, Any]:
    about = about or rules.About()
    rules.count_round(record, round_id, about.sessions, now, settings)
    about.apply_agent(record)
    deadline = now + timedelta(hours=settings.auto_check_hours)
    override: dict[str, Any] = {"round_id": round_id, "timestamp": clock.iso(now)}
    if about.context():
        override["context"] = about.context()
    override.update({"agent_output": agent.to_json(), "human_decision": human.to_json(),
                     "similarity": round(closeness, 4), "regret": False,
                     "auto_check_deadline": clock.iso(deadline), "reverted_by": None,
                     "checked_at": None, "final": None})
    record.setdefault("override_history", []).append(override)
    rules.stats_of(record)["total_overrides"] += 1
    rules.fold(record, settings)
    rules.rescore(record, now, "override", round_id, settings)
    return override


@dataclass(frozen=True)
class Verdict:
    status: str  # reverted | replaced | kept | pending
    how: str
    similarity_to_agent: float
    similarity_to_human: float

    @property
    def regret(self) -> bool:
        return self.status in ("reverted", "replaced")


def due(override: dict[str, Any], now: datetime) -> bool:
    """The deadline has passed (seed 002 section 6: now > deadline)."""
    return now > clock.parse_field(override["auto_check_deadline"], "auto_check_deadline")


def verdict(override: dict[str, Any], final: Version, now: datetime) -> Verdict:
    agent, human = override["agent_output"], override["human_decision"]
    to_agent = round(similarity.fingerprint_cosine(final.fingerprint, agent["fingerprint"]), 4)
    to_human = round(similarity.fingerprint_cosine(final.fingerprint, human["fingerprint"]), 4)

    def said(status: str, how: str) -> Verdict:
        return Verdict(status, how, to_agent, to_human)

    if final.sha256 == agent["sha256"]:
        return said("reverted", "same as the agent output")
    if final.sha256 != human["sha256"] and to_agent > to_human:
        return said("reverted", "nearer the agent output")
    deadline = str(override["auto_check_deadline"])
    if not due(override, now):
        return said("pending", f"not before {deadline}")
    if final.sha256 == human["sha256"]:
        return said("kept", "same as the human decision")
    return said("replaced", "a third version, not the human decision")


def settle(record: dict[str, Any], override: dict[str, Any], final: Version, now: datetime,
           settings: rules.Settings) -> tuple[Verdict, bool]:
    """Apply the verdict to one override; returns it and whether anything changed."""
    found = verdict(override, final, now)
    if found.status == "pending":
        return found, False
    before = (override.get("regret"), (override.get("final") or {}).get("sha256"))
    override["regret"] = found.regret
    override["reverted_by"] = "system" if found.regret else None
    override["checked_at"] = clock.iso(now)
    override["final"] = {"path": final.path, "sha256": final.sha256,
                         "similarity_to_agent": found.similarity_to_agent,
                         "similarity_to_human": found.similarity_to_human, "verdict": found.how}
    changed = before != (found.regret, final.sha256)
    if changed:
        rules.rescore(record, now, "regret_inferred" if found.regret else "override_kept",
                      str(override["round_id"]), settings)
    return found, changed


@dataclass(frozen=True)
class Usefulness:
    held: int
    regretted: int

    @property
    def ratio(self) -> float | None:
        checked = self.held + self.regretted
        return round(self.held / checked, 4) if checked else None


def escalation_usefulness(record: dict[str, Any]) -> Usefulness:
    """Of the overrides checked so far (all history), how many held and how many were regretted;
    an override not checked yet counts in neither."""
    stats = rules.stats_of(record)
    raw = record.get("override_history") or []
    checked = [o for o in raw if o.get("checked_at")]
    regretted = sum(1 for o in checked if o.get("regret")) + int(stats["folded_regretted"])
    held = sum(1 for o in checked if not o.get("regret")) + int(stats["folded_held"])
    return Usefulness(held, regretted)
