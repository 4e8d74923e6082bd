"""The trust memory's rules: depth, rounds and probation, folding and the score, on the plain
`trust` mapping of a sidecar.

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
- an agent is on probation while it has taken part in fewer than `probation_rounds` rounds:
  distinct round ids of its trust events plus the sessions it took part in (its sidecar's
  `sessions_participated`); an event without a round counts no round, so dissents alone never
  end probation. `probation_until` is the time it ended (null while it lasts).

Overrides and their regret live in `loa_mem.trust.regret`, the devil's advocate in
`loa_mem.trust.advocate`.
"""

from __future__ import annotations

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
    """Citations as given, without repeats of one source: citing one rubric twice is not two
    citations. Case is kept, not folded: `API` and `api` may name different sources."""
    return list(dict.fromkeys(name for name in (c.strip() for c in citations) if name))


def dissent_depth(text: str, citations: list[str], previous: list[str]) -> Depth:
    """Seed 002 section 4.1: length (words / 50, at most 1) + citations (.2 each, at most .5) +
    novelty (1 - the highest cosine similarity to a past dissent; 0 with no past dissents, as in
    the seed, so that a fresh name earns nothing for being fresh, and 0 for a text without
    content words, such as "no no no", which says nothing new however often it is said),
    at most 2."""
    words = len(text.split())
    length = min(words / 50, 1.0)
    cited = len(distinct_citations(citations))
    bonus = min(round(cited * 0.2, 10), 0.5)
    novelty = 0.0
    if previous and similarity.tokens(text):
        novelty = 1 - max(similarity.text_cosine(text, past) for past in previous)
    novelty = round(max(novelty, 0.0), 4)
    depth = round(min(length + bonus + novelty, DEPTH_CAP), 4)
    return Depth(words, round(length, 4), cited, bonus, novelty, depth)


# -- the record ---------------------------------------------------------------------------
def new_record(now_iso: str, settings: Settings) -> dict[str, Any]:
    return {
        "trust_score": settings.start_score,
        "probation": True,
        "probation_until": None,
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
            "folded_overrides": 0, "folded_regretted": 0, "folded_held": 0, "folded_history": 0,
            "folded_through": None}


def stats_of(record: dict[str, Any]) -> dict[str, Any]:
    stats: dict[str, Any] = record.setdefault("long_term_stats", empty_stats())
    for key, value in empty_stats().items():
        stats.setdefault(key, value)
    return stats


def _known_rounds(record: dict[str, Any]) -> set[str]:
    events = [*(record.get("dissent_history") or []), *(record.get("override_history") or [])]
    return {str(e["round_id"]) for e in events if e.get("round_id") is not None}


def rounds_taken(record: dict[str, Any], sessions: int) -> int:
    """Rounds the agent took part in: its trust rounds and its sessions."""
    return int(record.get("rounds_participated") or 0) + sessions


def update_probation(record: dict[str, Any], sessions: int, now: datetime,
                     settings: Settings) -> None:
    on = rounds_taken(record, sessions) < settings.probation_rounds
    record["probation"] = on
    if on:
        record["probation_until"] = None
    elif not record.get("probation_until"):
        record["probation_until"] = clock.iso(now)


def count_round(record: dict[str, Any], round_id: str | None, sessions: int, now: datetime,
                settings: Settings) -> None:
    """A round counts once however many events it holds; an event without a round counts none."""
    if round_id is not None and round_id not in _known_rounds(record):
        record["rounds_participated"] = int(record.get("rounds_participated") or 0) + 1
    update_probation(record, sessions, now, settings)


@dataclass(frozen=True)
class About:
    """What the seed records beside an event: the agent's model and role (latest given wins),
    the dissent's context and whether its feedback was incorporated. None: not given."""
    task: str | None = None
    artifact_type: str | None = None
    model: str | None = None
    role: str | None = None
    feedback_incorporated: bool | None = None
    sessions: int = 0

    def context(self) -> dict[str, str]:
        return {k: v for k, v in (("task", self.task), ("artifact_type", self.artifact_type))
                if v is not None}

    def apply_agent(self, record: dict[str, Any]) -> None:
        for key, value in (("model", self.model), ("primary_role", self.role)):
            if value is not None:
                record[key] = value


def add_dissent(record: dict[str, Any], *, text: str, citations: list[str], impact: bool,
                round_id: str | None, now: datetime, settings: Settings,
                about: About | None = None) -> dict[str, Any]:
    about = about or About()
    previous = [str(d["dissent_text"]) for d in record.get("dissent_history") or []]
    depth = dissent_depth(text, citations, previous)
    count_round(record, round_id, about.sessions, now, settings)
    about.apply_agent(record)
    dissent: dict[str, Any] = {"round_id": round_id, "timestamp": clock.iso(now)}
    if about.context():
        dissent["context"] = about.context()
    dissent.update({"dissent_text": text, "rubric_citations": distinct_citations(citations),
                    "impact": impact, "depth_score": depth.depth, "depth_parts": depth.parts()})
    if about.feedback_incorporated is not None:
        dissent["feedback_incorporated"] = about.feedback_incorporated
    record.setdefault("dissent_history", []).append(dissent)
    stats_of(record)["total_dissents"] += 1
    fold(record, settings)
    rescore(record, now, "dissent_impact_true" if impact else "dissent_impact_false", round_id,
            settings)
    return dissent


# -- folding and scoring ------------------------------------------------------------------
def fold(record: dict[str, Any], settings: Settings) -> None:
    """Keep the last `raw_event_limit` raw events of each kind; add the older ones to the
    long-term counters."""
    stats, limit = stats_of(record), settings.raw_event_limit
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
        stats["folded_held"] += 1 if old.get("checked_at") and not old.get("regret") else 0
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
        stats = stats_of(record)
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
        stats = stats_of(record)
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
    stats = stats_of(record)
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
