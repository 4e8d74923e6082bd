"""The devil's advocate (seed 002 section 5): who may be drawn, with what chance. Pure rules."""

from __future__ import annotations

import random
from dataclasses import dataclass

from loa_mem.trust.rules import Settings, shown


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
