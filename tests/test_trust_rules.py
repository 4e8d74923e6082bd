"""The trust memory's rules (spec section 8, seed 002) at a fixed time, with hand-computed values.

Each expected number is worked out in the comment beside it."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from loa_mem.core import clock
from loa_mem.trust import advocate as a
from loa_mem.trust import regret as r
from loa_mem.trust import rules as t
from loa_mem.trust import similarity

NOW = clock.parse("2026-02-01T10:30:00Z")
S = t.Settings()


def ago(days: float) -> str:
    return clock.iso(NOW - timedelta(days=days))


def dissent(days: float, impact: bool, depth: float) -> dict[str, Any]:
    return {"round_id": None, "timestamp": ago(days), "dissent_text": "x", "impact": impact,
            "depth_score": depth}


def override(days: float, regret: bool) -> dict[str, Any]:
    return {"round_id": "r", "timestamp": ago(days), "regret": regret}


def record(dissents: list[dict[str, Any]] | None = None,
           overrides: list[dict[str, Any]] | None = None, **stats: Any) -> dict[str, Any]:
    made = t.new_record(clock.iso(NOW), S)
    made["dissent_history"] = list(dissents or [])
    made["override_history"] = list(overrides or [])
    made["long_term_stats"].update(stats)
    return made


# -- depth --------------------------------------------------------------------------------
WORDS = " ".join(f"w{n}" for n in range(60))


@pytest.mark.parametrize(("text", "cited", "previous", "expected"), [
    # 25 words / 50 = .5; no citations; first dissent: novelty 0 (the seed's rule)
    (" ".join(["word"] * 25), [], [], (0.5, 0.0, 0.0, 0.5)),
    # 60 words: length capped at 1; 3 citations: .6 capped at .5
    (WORDS, ["Accuracy", "Completeness", "Clarity"], [], (1.0, 0.5, 0.0, 1.5)),
    # 2 citations: .4; the same citation twice counts once: .2
    ("a b", ["Accuracy", "Completeness"], [], (0.04, 0.4, 0.0, 0.44)),
    ("a b", ["Accuracy", "Accuracy "], [], (0.04, 0.2, 0.0, 0.24)),
    # tokens {alpha, beta, epsilon, zeta} vs {alpha, beta, gamma, delta}: cosine 2/4 -> novelty .5;
    # length 4/50 = .08
    ("alpha beta epsilon zeta", [], ["alpha beta gamma delta"], (0.08, 0.0, 0.5, 0.58)),
    # the highest similarity counts: 3/4 with the second past dissent -> novelty .25
    ("alpha beta epsilon zeta", [], ["alpha beta gamma delta", "alpha beta epsilon eta"],
     (0.08, 0.0, 0.25, 0.33)),
    # function words are not evidence of repetition: {cat, mat} vs {dog, rug} -> novelty 1
    ("the cat is on the mat", [], ["the dog is on the rug"], (0.12, 0.0, 1.0, 1.12)),
    # 1 + .5 + 1 = 2.5, capped at 2
    (WORDS, ["A", "B", "C"], ["nothing in common"], (1.0, 0.5, 1.0, 2.0)),
    # a repeated dissent: novelty 0
    ("alpha beta", [], ["Beta, ALPHA!"], (0.04, 0.0, 0.0, 0.04)),
])
def test_dissent_depth(text: str, cited: list[str], previous: list[str],
                       expected: tuple[float, float, float, float]) -> None:
    depth = t.dissent_depth(text, cited, previous)
    assert (depth.length, depth.citation_bonus, depth.novelty, depth.depth) == expected


def test_cosine_is_over_term_frequencies() -> None:
    # {red: 2, green: 1} . {red: 1, blue: 1} = 2; norms sqrt(5) * sqrt(2) -> 2 / sqrt(10)
    assert similarity.text_cosine("red red green", "red blue") == pytest.approx(0.632456, abs=1e-6)
    assert similarity.text_cosine("", "red") == 0.0


# -- score --------------------------------------------------------------------------------
# A part without data counts at the start score .6 (the prior): no overrides -> .3 * .6 = .18;
# no dissents -> .4 * .6 + .3 * .6 = .24 + .18 = .42.
@pytest.mark.parametrize(("made", "expected"), [
    # nothing yet: .4 * .6 + .3 * .6 + .3 * .6 = .24 + .18 + .18 = .6, the start score
    (record(), (0.6, None, None, None)),
    # impact 1/2, mean depth (1.4 + .6) / 2 = 1; no overrides:
    # .4 * .5 + .3 * 1/2 + .3 * .6 = .2 + .15 + .18 = .53
    (record([dissent(1, True, 1.4), dissent(2, False, 0.6)]), (0.53, 0.5, 1.0, None)),
    # plus 4 overrides, 1 regretted: .2 + .15 + .3 * (1 - .25) = .2 + .15 + .225 = .575
    (record([dissent(1, True, 1.4), dissent(2, False, 0.6)],
            [override(1, True)] + [override(1, False)] * 3), (0.575, 0.5, 1.0, 0.25)),
    # overrides only, 1 of 2 regretted: .4 * .6 + .3 * .6 + .3 * (1 - .5) = .24 + .18 + .15 = .57
    (record([], [override(1, True), override(2, False)]), (0.57, None, None, 0.5)),
    # perfect dissents, no overrides: .4 * 1 + .3 * 2/2 + .3 * .6 = .4 + .3 + .18 = .88
    (record([dissent(1, True, 2.0)]), (0.88, 1.0, 2.0, None)),
])
def test_score_formula(made: dict[str, Any],
                       expected: tuple[float, float | None, float | None, float | None]) -> None:
    b = t.breakdown(made, NOW, S)
    assert (b.score, b.impact_ratio, b.mean_depth, b.regret_ratio) == expected


@pytest.mark.parametrize(("settings", "kept", "regretted", "first_dissent"), [
    # the prior is the start score .6. One override kept: .4 * .6 + .3 * .6 + .3 * (1 - 0)
    # = .24 + .18 + .3 = .72; regretted: .24 + .18 + .3 * (1 - 1) = .42 (renormalising over the
    # regret part alone gave 1 and 0). A first impactful dissent of depth .4, no overrides:
    # .4 * 1 + .3 * .4/2 + .3 * .6 = .4 + .06 + .18 = .64 (renormalised: .6571)
    (S, 0.72, 0.42, 0.64),
    # a configured start score .5: kept .4 * .5 + .3 * .5 + .3 = .2 + .15 + .3 = .65; regretted
    # .2 + .15 + 0 = .35; the dissent .4 + .06 + .3 * .5 = .61
    (t.Settings(start_score=0.5), 0.65, 0.35, 0.61),
])
def test_a_part_without_data_counts_at_the_start_score(settings: t.Settings, kept: float,
                                                       regretted: float,
                                                       first_dissent: float) -> None:
    made = t.new_record(clock.iso(NOW), settings)
    made["override_history"] = [override(1, False)]
    found = t.breakdown(made, NOW, settings)
    assert (found.score, found.prior, found.to_json()["prior"]) == (
        kept, settings.start_score, settings.start_score)
    made["override_history"] = [override(1, True)]
    assert t.breakdown(made, NOW, settings).score == regretted
    made["override_history"], made["dissent_history"] = [], [dissent(1, True, 0.4)]
    assert t.breakdown(made, NOW, settings).score == first_dissent


def test_the_window_is_used_when_it_holds_enough_events() -> None:
    recent = [dissent(d, True, 2.0) for d in (1, 10, 30, 60, 90)]  # 90 days old is inside
    old = [dissent(200, False, 0.0)] * 3
    b = t.breakdown(record(old + recent), NOW, S)
    # 5 in the window: impact 1, depth 2; no overrides: .4 * 1 + .3 * 2/2 + .3 * .6 = .88
    assert (b.score, b.dissent_scope, b.dissents) == (0.88, "window", 5)


def test_all_history_is_used_when_the_window_holds_too_little() -> None:
    recent = [dissent(d, True, 2.0) for d in (1, 10, 30, 91)]  # 91 days: outside
    old = [dissent(200, False, 0.0)] * 3
    b = t.breakdown(record(old + recent), NOW, S)
    # 3 in the window < 5: all 7 -> impact 4/7, depth 8/7; no overrides:
    # .4 * 4/7 + .3 * (8/7)/2 + .3 * .6 = .7 * 4/7 + .18 = .4 + .18 = .58
    assert (b.score, b.dissent_scope, b.dissents) == (0.58, "all", 7)
    assert b.impact_ratio == 0.5714


def test_all_history_includes_the_folded_counters() -> None:
    made = record([dissent(1, True, 1.0)] * 2, [override(1, False)],
                  folded_dissents=10, folded_impactful=5, folded_depth_sum=10.0,
                  folded_overrides=3, folded_regretted=2)
    b = t.breakdown(made, NOW, S)
    # dissents: 12, impactful 7 -> .5833, depth 12/12 = 1; overrides 4, regretted 2 -> .5
    # .4 * 7/12 + .3 * .5 + .3 * .5 = .23333 + .15 + .15 = .5333
    assert (b.impact_ratio, b.mean_depth, b.regret_ratio, b.score) == (0.5833, 1.0, 0.5, 0.5333)


def test_overrides_have_their_own_window() -> None:
    made = record([], [override(1, True)] * 5 + [override(100, False)] * 5)
    assert t.breakdown(made, NOW, S).regret_ratio == 1.0
    made = record([], [override(1, True)] * 4 + [override(100, False)] * 4)
    assert t.breakdown(made, NOW, S).regret_ratio == 0.5


# -- events, probation, history, folding --------------------------------------------------
def test_probation_ends_after_five_distinct_rounds() -> None:
    made = t.new_record(clock.iso(NOW), S)
    for n, round_id in enumerate(["r1", "r2", "r2", "r3", None]):
        t.add_dissent(made, text=f"point {n}", citations=[], impact=True, round_id=round_id,
                      now=NOW, settings=S)
    # r1, r2 (twice counts once), r3; a dissent without a round counts none: 3 rounds
    assert (made["rounds_participated"], made["probation"]) == (3, True)
    for round_id in ("r4", "r5"):
        r.add_override(made, round_id=round_id, agent=r.Version.of("a", "x y"),
                       human=r.Version.of("b", "z"), closeness=0.0, now=NOW, settings=S)
    assert (made["rounds_participated"], made["probation"]) == (5, False)
    assert made["probation_until"] == "2026-02-01T10:30:00Z"


def test_every_event_appends_the_score_and_its_reason() -> None:
    made = t.new_record(clock.iso(NOW), S)
    t.add_dissent(made, text=" ".join(["w"] * 50), citations=["A"], impact=True, round_id="r1",
                  now=NOW, settings=S)
    t.add_dissent(made, text="short", citations=[], impact=False, round_id="r2",
                  now=NOW + timedelta(hours=1), settings=S)
    history = made["trust_score_history"]
    # no overrides either time: regret part at the prior, .3 * .6 = .18
    # first: impact 1, depth 1 + .2 + 0 = 1.2 -> .4 * 1 + .3 * 1.2/2 + .18 = .4 + .18 + .18 = .76
    # second: depth 1/50 + 0 + novelty 1 ({short} vs {w}) = 1.02; impact 1/2, depth 2.22/2 = 1.11
    #   -> .4 * .5 + .3 * 1.11/2 + .18 = .2 + .1665 + .18 = .5465
    assert [(h["score"], h["reason"]) for h in history] == [
        (0.6, "initial"), (0.76, "dissent_impact_true"), (0.5465, "dissent_impact_false")]
    assert history[2]["round_id"] == "r2"
    assert made["trust_score"] == 0.5465


def test_folding_keeps_the_last_events_and_the_all_history_ratios() -> None:
    small, large = t.Settings(raw_event_limit=3), t.Settings(raw_event_limit=100)
    folded, kept = t.new_record(clock.iso(NOW), small), t.new_record(clock.iso(NOW), large)
    for n in range(7):
        for made, settings in ((folded, small), (kept, large)):
            t.add_dissent(made, text=f"topic{n} " * (n + 1), citations=["A"] * (n % 2),
                          impact=n % 3 == 0, round_id=f"r{n}", now=NOW - timedelta(days=200),
                          settings=settings)
    assert len(folded["dissent_history"]) == 3
    assert len(folded["trust_score_history"]) == 3
    stats = folded["long_term_stats"]
    assert (stats["folded_dissents"], stats["folded_impactful"], stats["total_dissents"]) == (
        4, 2, 7)
    assert stats["folded_history"] == 5  # 8 scores (initial + 7), 3 kept
    assert t.breakdown(folded, NOW, small) == t.breakdown(kept, NOW, large)


# -- regret -------------------------------------------------------------------------------
AGENT = "Use REST for the public API and keep the existing tooling and clients."
HUMAN = "Use GraphQL for the public API and generate typed clients from the schema."


def test_an_override_is_due_only_after_its_deadline() -> None:
    made = t.new_record(clock.iso(NOW), S)
    o = r.add_override(made, round_id="r1", agent=r.Version.of("a", AGENT),
                       human=r.Version.of("h", HUMAN), closeness=0.3, now=NOW, settings=S)
    assert o["auto_check_deadline"] == "2026-02-02T10:30:00Z"
    assert not r.due(o, NOW + timedelta(hours=24))
    assert r.due(o, NOW + timedelta(hours=24, seconds=1))


@pytest.mark.parametrize(("final", "status", "how"), [
    (AGENT.replace(".", ".  \r\n") + "\r\n", "reverted", "same as the agent output"),
    (HUMAN + "\n", "kept", "same as the human decision"),
    (AGENT + " Document it.", "reverted", "nearer the agent output"),
    (HUMAN + " Document it.", "replaced", "a third version, not the human decision"),
])
def test_revert_verdicts_after_the_deadline(final: str, status: str, how: str) -> None:
    made = t.new_record(clock.iso(NOW), S)
    o = r.add_override(made, round_id="r1", agent=r.Version.of("a", AGENT),
                       human=r.Version.of("h", HUMAN), closeness=0.3, now=NOW, settings=S)
    found = r.verdict(o, r.Version.of("f", final), NOW + timedelta(days=2))
    assert (found.status, found.how, found.regret) == (status, how, status != "kept")


def test_a_regret_lowers_the_score_and_is_recorded() -> None:
    made = t.new_record(clock.iso(NOW), S)
    o = r.add_override(made, round_id="r1", agent=r.Version.of("a", AGENT),
                       human=r.Version.of("h", HUMAN), closeness=0.3, now=NOW, settings=S)
    # no dissents (prior .6), 1 override, none regretted: .4 * .6 + .3 * .6 + .3 * 1 = .72
    assert made["trust_score"] == 0.72
    later = NOW + timedelta(days=2)
    found, changed = r.settle(made, o, r.Version.of("f", AGENT), later, S)
    assert (found.regret, changed, o["regret"], o["reverted_by"]) == (True, True, True,
                                                                       "system")
    # regret 1/1: .24 + .18 + .3 * 0 = .42
    assert made["trust_score"] == 0.42
    assert made["trust_score_history"][-1]["reason"] == "regret_inferred"
    assert r.settle(made, o, r.Version.of("f", AGENT), later, S)[1] is False


# -- devil's advocate ---------------------------------------------------------------------
def cand(name: str, score: float, probation: bool = False) -> a.Candidate:
    return a.Candidate(name, score, probation, 3 if probation else 9)


def test_odds_exclude_probation_and_low_trust_but_not_exactly_the_threshold() -> None:
    chances = a.odds([cand("a", 0.6), cand("b", 0.2), cand("c", 0.19), cand("d", 0.9, True)], S)
    assert chances.probabilities == pytest.approx({"a": 0.75, "b": 0.25})
    assert set(chances.excluded) == {"c", "d"}
    assert not chances.fallback


def test_odds_fall_back_to_every_candidate() -> None:
    chances = a.odds([cand("a", 0.1), cand("b", 0.3, True)], S)
    assert chances.fallback
    assert chances.probabilities == pytest.approx({"a": 0.25, "b": 0.75})
    assert a.odds([cand("a", 0.0), cand("b", 0.0)], S).probabilities == {"a": 0.5, "b": 0.5}


def test_draws_follow_the_weights_within_two_points() -> None:
    candidates = [cand("a", 0.9), cand("b", 0.6), cand("c", 0.3), cand("d", 0.1),
                  cand("e", 0.8, True)]
    rng = random.Random(12345)
    counts = {"a": 0, "b": 0, "c": 0}
    for _ in range(10_000):
        counts[a.pick_advocate(candidates, S, rng).chosen] += 1
    # weights .9 : .6 : .3 over 1.8 -> 50 %, 33.3 %, 16.7 %; d (< .2) and e (probation) never
    expected = {"a": 0.5, "b": 1 / 3, "c": 1 / 6}
    for name, share in expected.items():
        assert abs(counts[name] / 10_000 - share) < 0.02, (name, counts)


def test_a_seed_makes_the_draw_reproducible() -> None:
    candidates = [cand("a", 0.5), cand("b", 0.5), cand("c", 0.5)]
    first = [a.pick_advocate(candidates, S, random.Random(n)).chosen for n in range(20)]
    again = [a.pick_advocate(candidates, S, random.Random(n)).chosen for n in range(20)]
    assert first == again
    assert len(set(first)) > 1
