"""The trust memory's rules (spec section 8, seed 002), on the plain `trust` mapping of a sidecar.

No IO here: every function takes the record, the time and the settings, so each rule is tested
at a fixed time with hand-computed numbers. What must always hold:
- score = .4 impact ratio + .3 (mean depth / 2) + .3 (1 - regret ratio), always with these
  weights: a component without data (no dissents: impact and depth; no overrides: regret) counts
  at the start score, the new agent's prior, so one event moves the score by at most its
  components' weights (one kept override: .4 * .6 + .3 * .6 + .3 * 1 = .72, not 1) and with no
  data at all the score is the start score. Depth is 0-2, so it is halved to keep the score in 0-1.
- each ratio reads the raw events of the last `window_days`, or all history (raw events plus the
  folded counters) when the window holds fewer than `window_min_events` of them;
- `dissent_history` and `override_history` keep the last `raw_event_limit` events each; older ones
  are added to `long_term_stats` counters, so all-history ratios stay exact;
- every change appends {timestamp, score, reason} to `trust_score_history` (also capped);
- an agent is on probation while it has taken part in fewer than `probation_rounds` rounds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loa_mem.core import clock
from loa_mem.trust import similarity

WEIGHTS = {"impact": 0.4, "depth": 0.3, "regret": 0.3}
DEPTH_CAP = 2.0


@dataclass(frozen=True)
class Settings:
    window_days: int = 90
    window_min_events: int = 5
    probation_rounds: int = 5
    start_score: float = 0.6
    exclude_below: float = 0.2
    auto_check_hours: float = 24
    raw_event_limit: int = 100

    @classmethod
    def from_config(cls, section: dict[str, Any]) -> Settings:
        known = {k: section[k] for k in cls.__dataclass_fields__ if section.get(k) is not None}
        return cls(**known)


# -- depth --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Depth:
    words: int
    length: float
    citations: int
    citation_bonus: float
    novelty: float
    depth: float

    def parts(self) -> dict[str, float]:
        return {"length": self.length, "citations": self.citation_bonus, "novelty": self.novelty}


def distinct_citations(citations: list[str]) -> list[str]:
    """Citations as given, without repeats (case-insensitive): citing one rubric twice is not
    two citations."""
    seen: dict[str, str] = {}
    for cited in citations:
        name = cited.strip()
        if name and name.casefold() not in seen:
            seen[name.casefold()] = name
    return list(seen.values())


def dissent_depth(text: str, citations: list[str], previous: list[str]) -> Depth:
    """Seed 002 section 4.1: length (words / 50, at most 1) + citations (.2 each, at most .5) +
    novelty (1 - the highest cosine similarity to a past dissent; 0 with no past dissents, as in
    the seed, so that a fresh name earns nothing for being fresh), at most 2."""
    words = len(text.split())
    length = min(words / 50, 1.0)
    cited = len(distinct_citations(citations))
    bonus = min(round(cited * 0.2, 10), 0.5)
    novelty = 0.0
    if previous:
        novelty = 1 - max(similarity.text_cosine(text, past) for past in previous)
    novelty = round(max(novelty, 0.0), 4)
    depth = round(min(length + bonus + novelty, DEPTH_CAP), 4)
    return Depth(words, round(length, 4), cited, bonus, novelty, depth)


# -- the record ---------------------------------------------------------------------------
def new_record(now_iso: str, settings: Settings) -> dict[str, Any]:
    return {
        "trust_score": settings.start_score,
        "probation": True,
        "rounds_participated": 0,
        "dissent_history": [],
        "override_history": [],
        "trust_score_history": [{"timestamp": now_iso, "score": settings.start_score,
                                 "reason": "initial"}],
        "long_term_stats": empty_stats(),
    }


def empty_stats() -> dict[str, Any]:
    return {"avg_dissent_depth_last_90d": None, "dissent_impact_ratio_last_90d": None,
            "regret_rate_last_90d": None, "total_dissents": 0, "total_overrides": 0,
            "folded_dissents": 0, "folded_impactful": 0, "folded_depth_sum": 0.0,
            "folded_overrides": 0, "folded_regretted": 0, "folded_history": 0,
            "folded_through": None}


def _stats(record: dict[str, Any]) -> dict[str, Any]:
    stats: dict[str, Any] = record.setdefault("long_term_stats", empty_stats())
    for key, value in empty_stats().items():
        stats.setdefault(key, value)
    return stats


def _known_rounds(record: dict[str, Any]) -> set[str]:
    events = [*(record.get("dissent_history") or []), *(record.get("override_history") or [])]
    return {str(e["round_id"]) for e in events if e.get("round_id") is not None}


def _count_round(record: dict[str, Any], round_id: str | None, settings: Settings) -> None:
    """A round counts once however many events it holds; a dissent without a round is a round
    of its own."""
    if round_id is None or round_id not in _known_rounds(record):
        record["rounds_participated"] = int(record.get("rounds_participated") or 0) + 1
    record["probation"] = record["rounds_participated"] < settings.probation_rounds


def add_dissent(record: dict[str, Any], *, text: str, citations: list[str], impact: bool,
                round_id: str | None, now: datetime, settings: Settings) -> dict[str, Any]:
    previous = [str(d["dissent_text"]) for d in record.get("dissent_history") or []]
    depth = dissent_depth(text, citations, previous)
    _count_round(record, round_id, settings)
    dissent = {"round_id": round_id, "timestamp": clock.iso(now), "dissent_text": text,
               "rubric_citations": distinct_citations(citations), "impact": impact,
               "depth_score": depth.depth, "depth_parts": depth.parts()}
    record.setdefault("dissent_history", []).append(dissent)
    _stats(record)["total_dissents"] += 1
    fold(record, settings)
    rescore(record, now, "dissent_impact_true" if impact else "dissent_impact_false", round_id,
            settings)
    return dissent


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
                 closeness: float, now: datetime, settings: Settings) -> dict[str, Any]:
    _count_round(record, round_id, settings)
    deadline = now + timedelta(hours=settings.auto_check_hours)
    override = {"round_id": round_id, "timestamp": clock.iso(now),
                "agent_output": agent.to_json(), "human_decision": human.to_json(),
                "similarity": round(closeness, 4), "regret": False,
                "auto_check_deadline": clock.iso(deadline), "reverted_by": None,
                "checked_at": None, "final": None}
    record.setdefault("override_history", []).append(override)
    _stats(record)["total_overrides"] += 1
    fold(record, settings)
    rescore(record, now, "override", round_id, settings)
    return override


# -- regret -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    reverted: bool
    how: str
    similarity_to_agent: float
    similarity_to_human: float


def verdict(override: dict[str, Any], final: Version) -> Verdict:
    """Reverted means the final version is the agent's output again, or nearer to it than to
    the human decision: an exact match by hash decides first, else the fingerprints' cosine.
    A tie keeps the override (a later edit of the human decision is not a revert)."""
    agent, human = override["agent_output"], override["human_decision"]
    to_agent = round(similarity.fingerprint_cosine(final.fingerprint, agent["fingerprint"]), 4)
    to_human = round(similarity.fingerprint_cosine(final.fingerprint, human["fingerprint"]), 4)
    if final.sha256 == human["sha256"]:
        return Verdict(False, "same as the human decision", to_agent, to_human)
    if final.sha256 == agent["sha256"]:
        return Verdict(True, "same as the agent output", to_agent, to_human)
    if to_agent > to_human:
        return Verdict(True, "nearer the agent output", to_agent, to_human)
    return Verdict(False, "nearer the human decision" if to_human > to_agent else "as near both",
                   to_agent, to_human)


def due(override: dict[str, Any], now: datetime) -> bool:
    """Regret is inferred only after the deadline (seed 002 section 6: now > deadline)."""
    return now > clock.parse_field(override["auto_check_deadline"], "auto_check_deadline")


def settle(record: dict[str, Any], override: dict[str, Any], final: Version, now: datetime,
           settings: Settings) -> tuple[Verdict, bool]:
    """Apply a verdict to one due override; returns it and whether anything changed."""
    found = verdict(override, final)
    before = (override.get("regret"), (override.get("final") or {}).get("sha256"))
    override["regret"] = found.reverted
    override["reverted_by"] = "system" if found.reverted else None
    override["checked_at"] = clock.iso(now)
    override["final"] = {"path": final.path, "sha256": final.sha256,
                         "similarity_to_agent": found.similarity_to_agent,
                         "similarity_to_human": found.similarity_to_human, "verdict": found.how}
    changed = before != (found.reverted, final.sha256)
    if changed:
        rescore(record, now, "regret_inferred" if found.reverted else "override_kept",
                str(override["round_id"]), settings)
    return found, changed


# -- folding and scoring ------------------------------------------------------------------
def fold(record: dict[str, Any], settings: Settings) -> None:
    """Keep the last `raw_event_limit` raw events of each kind; add the older ones to the
    long-term counters."""
    stats, limit = _stats(record), settings.raw_event_limit
    dissents = record.setdefault("dissent_history", [])
    for old in dissents[:max(0, len(dissents) - limit)]:
        stats["folded_dissents"] += 1
        stats["folded_impactful"] += 1 if old.get("impact") else 0
        stats["folded_depth_sum"] = round(stats["folded_depth_sum"] + float(old["depth_score"]), 4)
        stats["folded_through"] = max(str(stats["folded_through"] or ""), str(old["timestamp"]))
    del dissents[:max(0, len(dissents) - limit)]
    overrides = record.setdefault("override_history", [])
    for old in overrides[:max(0, len(overrides) - limit)]:
        stats["folded_overrides"] += 1
        stats["folded_regretted"] += 1 if old.get("regret") else 0
        stats["folded_through"] = max(str(stats["folded_through"] or ""), str(old["timestamp"]))
    del overrides[:max(0, len(overrides) - limit)]
    history = record.setdefault("trust_score_history", [])
    stats["folded_history"] += max(0, len(history) - limit)
    del history[:max(0, len(history) - limit)]


@dataclass(frozen=True)
class Breakdown:
    score: float
    impact_ratio: float | None
    mean_depth: float | None
    regret_ratio: float | None
    dissents: int
    overrides: int
    dissent_scope: str
    override_scope: str
    prior: float  # what a component without data counts at: the start score

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "impact_ratio": self.impact_ratio,
                "mean_depth": self.mean_depth, "regret_ratio": self.regret_ratio,
                "dissents": self.dissents, "overrides": self.overrides,
                "dissent_scope": self.dissent_scope, "override_scope": self.override_scope,
                "weights": WEIGHTS, "prior": self.prior}


def _recent(events: list[dict[str, Any]], now: datetime, days: int) -> list[dict[str, Any]]:
    since = now - timedelta(days=days)
    return [e for e in events if clock.parse_field(e["timestamp"], "timestamp") >= since]


def _dissent_terms(record: dict[str, Any], now: datetime, settings: Settings
                   ) -> tuple[float | None, float | None, int, str]:
    raw = record.get("dissent_history") or []
    window = _recent(raw, now, settings.window_days)
    if len(window) >= settings.window_min_events:
        n, impactful = len(window), sum(1 for d in window if d.get("impact"))
        depth_sum = sum(float(d["depth_score"]) for d in window)
        scope = "window"
    else:
        stats = _stats(record)
        n = len(raw) + int(stats["folded_dissents"])
        impactful = sum(1 for d in raw if d.get("impact")) + int(stats["folded_impactful"])
        depth_sum = sum(float(d["depth_score"]) for d in raw) + float(stats["folded_depth_sum"])
        scope = "all"
    if n == 0:
        return None, None, 0, scope
    return round(impactful / n, 4), round(depth_sum / n, 4), n, scope


def _regret_term(record: dict[str, Any], now: datetime, settings: Settings
                 ) -> tuple[float | None, int, str]:
    raw = record.get("override_history") or []
    window = _recent(raw, now, settings.window_days)
    if len(window) >= settings.window_min_events:
        n, regretted, scope = len(window), sum(1 for o in window if o.get("regret")), "window"
    else:
        stats = _stats(record)
        n = len(raw) + int(stats["folded_overrides"])
        regretted = sum(1 for o in raw if o.get("regret")) + int(stats["folded_regretted"])
        scope = "all"
    return (round(regretted / n, 4) if n else None), n, scope


def breakdown(record: dict[str, Any], now: datetime, settings: Settings) -> Breakdown:
    """The score and its parts; a part without data counts at the start score (the prior)."""
    impact, depth, dissents, dissent_scope = _dissent_terms(record, now, settings)
    regret, overrides, override_scope = _regret_term(record, now, settings)
    prior = settings.start_score
    parts = {"impact": prior if impact is None else impact,
             "depth": prior if depth is None else depth / DEPTH_CAP,
             "regret": prior if regret is None else 1 - regret}
    score = sum(WEIGHTS[name] * value for name, value in parts.items())
    return Breakdown(round(score, 4), impact, depth, regret, dissents, overrides, dissent_scope,
                     override_scope, prior)


def _window_stats(record: dict[str, Any], now: datetime, settings: Settings) -> None:
    stats = _stats(record)
    dissents = _recent(record.get("dissent_history") or [], now, settings.window_days)
    overrides = _recent(record.get("override_history") or [], now, settings.window_days)
    n, m = len(dissents), len(overrides)
    stats["avg_dissent_depth_last_90d"] = (
        round(sum(float(d["depth_score"]) for d in dissents) / n, 4) if n else None)
    stats["dissent_impact_ratio_last_90d"] = (
        round(sum(1 for d in dissents if d.get("impact")) / n, 4) if n else None)
    stats["regret_rate_last_90d"] = (
        round(sum(1 for o in overrides if o.get("regret")) / m, 4) if m else None)


def rescore(record: dict[str, Any], now: datetime, reason: str, round_id: str | None,
            settings: Settings) -> float:
    score = breakdown(record, now, settings).score
    record["trust_score"] = score
    _window_stats(record, now, settings)
    entry: dict[str, Any] = {"timestamp": clock.iso(now), "score": score, "reason": reason}
    if round_id is not None:
        entry["round_id"] = round_id
    record.setdefault("trust_score_history", []).append(entry)
    fold(record, settings)
    return score


def shown(score: float) -> str:
    """A trust score as text: always 4 decimals, the precision it is stored at, so a small move
    is never hidden and a score just under the exclusion threshold never reads as equal to it."""
    return f"{score:.4f}"


def moved(before: float, after: float) -> str:
    return f"{shown(before)} -> {shown(after)}"


# -- devil's advocate ---------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    name: str
    score: float
    probation: bool
    rounds: int


def excluded_because(candidate: Candidate, settings: Settings) -> str | None:
    if candidate.probation:
        return f"on probation ({candidate.rounds} of {settings.probation_rounds} rounds)"
    if candidate.score < settings.exclude_below:
        return (f"trust {shown(candidate.score)} is below "
                f"{shown(settings.exclude_below)}")
    return None


@dataclass(frozen=True)
class Pick:
    chosen: str
    probabilities: dict[str, float]
    excluded: dict[str, str]
    fallback: bool


def odds(candidates: list[Candidate], settings: Settings) -> Pick:
    """Who may be drawn, with what probability (chosen is left empty)."""
    excluded = {c.name: r for c in candidates if (r := excluded_because(c, settings))}
    viable = [c for c in candidates if c.name not in excluded]
    fallback = not viable
    if fallback:
        viable = list(candidates)
    total = sum(c.score for c in viable)
    # All-zero weights (a fallback to agents that all score 0) draw uniformly.
    weights = [c.score / total if total > 0 else 1 / len(viable) for c in viable]
    return Pick("", {c.name: w for c, w in zip(viable, weights, strict=True)}, excluded,
                fallback)


def pick_advocate(candidates: list[Candidate], settings: Settings, rng: random.Random) -> Pick:
    """Seed 002 section 5.1: weighted by trust among eligible agents, else among all."""
    chances = odds(candidates, settings)
    names = list(chances.probabilities)
    chosen = rng.choices(names, weights=list(chances.probabilities.values()), k=1)[0]
    return Pick(chosen, chances.probabilities, chances.excluded, chances.fallback)
