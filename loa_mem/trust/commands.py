"""trust dissent | override | check-reverts | score | report | pick-advocate (spec section 8).

The rules live in `loa_mem.trust.rules`, `.regret` and `.advocate` (no IO); this module reads
and writes the `trust` block of an agent's sidecar, only through `loa_mem.agents.sidecars`, one
commit and one events-log line per change.
Scores are recomputed at read time: the 90-day window moves with the clock, so the score an
agent has now may differ from the one recorded at its last event.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from loa_mem.core import clock, yamledit
from loa_mem.core.errors import InvalidFile, NotFound, Refused
from loa_mem.trust import advocate, regret, rules

MAX_TEXT = 10_000
MAX_ROUND = 200


def settings(store: Any) -> rules.Settings:
    return rules.Settings.from_config(store.config.section("trust"))


def plain(value: Any) -> Any:
    """A plain copy of a loaded block (round-trip types, timestamps as ISO strings)."""
    return yamledit.plain(value, _iso)


def _iso(value: datetime) -> str:
    return clock.iso(clock.parse_field(value, "timestamp"))


def schema_problems(block: Any) -> list[tuple[str, str]]:
    from loa_mem.core import schemacheck

    return [(f"trust.{p.dotted}" if p.dotted else "trust", p.message)
            for p in schemacheck.problems("trust.schema.json", block)]


def trust_line(top: Path, rel: str) -> int:
    """The line of the sidecar's `trust:` key (1 when there is none)."""
    try:
        lines = (top / rel).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((n + 1 for n, line in enumerate(lines) if line.startswith("trust:")), 1)


def record_of(store: Any, agent: str, data: dict[str, Any] | None, now: datetime
            ) -> dict[str, Any]:
    from loa_mem.agents import sidecars

    block = (data or {}).get("trust")
    if not block:
        return rules.new_record(clock.iso(now), settings(store))
    record = plain(block)
    found = schema_problems(record)
    if found:
        where, message = found[0]
        rel = sidecars.sidecar_rel(store, agent)
        raise InvalidFile(rel, trust_line(Path(store.top), rel), 1, f"{where}: {message}",
                          "fix the trust block (see `loa-mem validate`); nothing was written")
    return dict(record)


def load(store: Any, agent: str) -> tuple[dict[str, Any], bool]:
    from loa_mem.agents import sidecars

    data = sidecars.load_sidecar(store, agent)
    if data is None:
        return sidecars.new_sidecar(agent, clock.now_iso()), True
    return data, False


# -- reading ------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentTrust:
    agent: str
    exists: bool
    score: float
    recorded_score: float
    probation: bool
    rounds: int
    dissents: int
    overrides: int
    breakdown: rules.Breakdown
    history: list[dict[str, Any]] = field(default_factory=list)
    window_days: int = 90
    usefulness: regret.Usefulness = field(default_factory=lambda: regret.Usefulness(0, 0))
    model: str | None = None
    role: str | None = None

    def to_json(self) -> dict[str, Any]:
        u = self.usefulness
        return {"agent": self.agent, "exists": self.exists, "score": self.score,
                "recorded_score": self.recorded_score, "probation": self.probation,
                "rounds_participated": self.rounds, "dissents": self.dissents,
                "overrides": self.overrides, "breakdown": self.breakdown.to_json(),
                "escalation_usefulness": {"held": u.held, "regretted": u.regretted,
                                          "ratio": u.ratio},
                "model": self.model, "primary_role": self.role,
                "window_days": self.window_days, "history": self.history}


def sessions_of(data: dict[str, Any] | None) -> int:
    """The sessions the agent took part in: they count as rounds for probation."""
    try:
        return max(0, int((data or {}).get("sessions_participated") or 0))
    except (TypeError, ValueError):
        return 0


def _standing(store: Any, agent: str, data: dict[str, Any] | None, now: datetime,
              exists: bool) -> AgentTrust:
    s = settings(store)
    record = record_of(store, agent, data, now)
    stats = record.get("long_term_stats") or {}
    found = rules.breakdown(record, now, s)
    rounds = rules.rounds_taken(record, sessions_of(data))
    return AgentTrust(agent, exists, found.score, float(record["trust_score"]),
                      rounds < s.probation_rounds, rounds, int(stats.get("total_dissents") or 0),
                      int(stats.get("total_overrides") or 0), found,
                      list(record.get("trust_score_history") or []), s.window_days,
                      regret.escalation_usefulness(record), record.get("model"),
                      record.get("primary_role"))


def standing(store: Any, agent: str) -> AgentTrust:
    """An agent's trust now; an agent without a sidecar is a new agent (nothing is written)."""
    from loa_mem.agents import sidecars

    agent = sidecars.check_agent_name(agent)
    data = sidecars.load_sidecar(store, agent)
    return _standing(store, agent, data, clock.now(), data is not None)


@dataclass(frozen=True)
class Report:
    agents: list[AgentTrust]
    settings: rules.Settings

    @property
    def usefulness(self) -> regret.Usefulness:
        """Escalation usefulness over every agent's checked overrides."""
        return regret.Usefulness(sum(a.usefulness.held for a in self.agents),
                                 sum(a.usefulness.regretted for a in self.agents))

    def to_json(self) -> dict[str, Any]:
        u = self.usefulness
        return {"agents": [{k: v for k, v in a.to_json().items() if k != "history"}
                           for a in self.agents],
                "escalation_usefulness": {"held": u.held, "regretted": u.regretted,
                                          "ratio": u.ratio},
                "settings": self.settings.__dict__}


def report(store: Any) -> Report:
    from loa_mem.agents import sidecars

    now = clock.now()
    found = [_standing(store, name, sidecars.load_sidecar(store, name), now, True)
             for name in sidecars.agent_names(store)]
    return Report(found, settings(store))


# -- devil's advocate ---------------------------------------------------------------------
@dataclass(frozen=True)
class Advocate:
    chosen: str
    seed: int | None
    fallback: bool
    candidates: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "seed": self.seed, "fallback": self.fallback,
                "candidates": self.candidates}


def pick_advocate(store: Any, names: list[str], seed: int | None) -> Advocate:
    """Seed 002 section 5.1; read-only. The same seed and the same records draw the same agent."""
    names = list(dict.fromkeys(names))
    if not names:
        raise Refused("no candidates", "name the agents to choose from")
    s = settings(store)
    standings = [standing(store, name) for name in names]
    candidates = [advocate.Candidate(a.agent, a.score, a.probation, a.rounds) for a in standings]
    rng = random.Random(seed) if seed is not None else random.Random()
    picked = advocate.pick_advocate(candidates, s, rng)
    rows = [{"agent": a.agent, "score": a.score, "probation": a.probation,
             "rounds_participated": a.rounds,
             "eligible": a.agent not in picked.excluded,
             "excluded_because": picked.excluded.get(a.agent),
             "probability": round(picked.probabilities.get(a.agent, 0.0), 4)}
            for a in standings]
    return Advocate(picked.chosen, seed, picked.fallback, rows)


# -- input checks -------------------------------------------------------------------------
def check_round(round_id: str | None, required: bool) -> str | None:
    if round_id is None:
        if required:
            raise Refused("a round is required", "pass --round ROUND")
        return None
    value = round_id.strip()
    if not value or len(value) > MAX_ROUND or any(c in value for c in "\r\n\t"):
        raise Refused("--round is not a usable round id",
                      f"use one line of 1-{MAX_ROUND} characters, e.g. run_20260122/round_2")
    from loa_mem.core.sensitive import refuse_sensitive

    refuse_sensitive(value, "--round")
    return value


def check_text(text: str, what: str) -> str:
    from loa_mem.core.sensitive import refuse_sensitive

    value = text.strip()
    if not value:
        raise Refused(f"{what} is empty", "say what the dissent is about")
    if len(value) > MAX_TEXT:
        raise Refused(f"{what} has {len(value)} characters, more than {MAX_TEXT}",
                      "shorten it; cite the rubric instead of quoting it")
    refuse_sensitive(value, what)
    return value


def read_text_file(given: str, what: str) -> str:
    try:
        return Path(given).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"{what}: no file {given}", "pass the path of an existing file") from None
    except IsADirectoryError:
        raise Refused(f"{what}: {given} is a directory", "pass a file") from None
    except UnicodeDecodeError:
        raise Refused(f"{what}: {given} is not UTF-8 text", "pass a text file") from None


def shown_path(store: Any, given: str) -> str:
    """The path as recorded: relative to the store when the file is inside it."""
    try:
        return Path(given).resolve().relative_to(Path(store.top).resolve()).as_posix()
    except ValueError:
        return given


def check_citations(citations: list[str]) -> list[str]:
    from loa_mem.core.sensitive import refuse_sensitive

    for cited in citations:
        if not cited.strip() or len(cited) > 100:
            raise Refused("a rubric citation (--cite) must be 1-100 characters",
                          "cite a rubric criterion by name, e.g. --cite Accuracy")
        refuse_sensitive(cited, "a rubric citation (--cite)")
    return citations


def check_about(about: rules.About) -> rules.About:
    """The event's labels (task, artifact type, model, role): one line each, 1-200 characters."""
    from loa_mem.core.sensitive import refuse_sensitive

    for option, value in (("--task", about.task), ("--artifact-type", about.artifact_type),
                          ("--model", about.model), ("--role", about.role)):
        if value is None:
            continue
        if not value.strip() or len(value) > MAX_ROUND or any(c in value for c in "\r\n\t"):
            raise Refused(f"{option} is not usable", f"give one line of 1-{MAX_ROUND} characters")
        refuse_sensitive(value, option)
    return about
