"""Every number of the memory document (seed 004), through `loa-mem pref`, at a fixed clock.

Expected values are worked out by hand in each test: explicit 100; implicit 40, +15 per repeat,
at most 85; use +5 up to the original; confirmation 100; contradiction -30, or 0 and flagged for
an explicit preference; decay -10 after 30 days unused, -25 after 90; bands 80 and 50.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loa_mem.people import rules as prefs_rules
from tests.people_support import T0, PrefCli, at, make_pcli


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


def test_explicit_preference_is_100_persistent_and_applied(pcli: PrefCli) -> None:
    done = pcli.pref("set", "vertical", "Retail")["preference"]
    assert (done["confidence"], done["kind"], done["persistent"]) == (100, "explicit", True)
    got = pcli.get("vertical")
    assert (got["value"], got["confidence"], got["band"], got["action"]) == (
        "Retail", 100, "apply", "apply")


def test_implicit_starts_at_40_adds_15_per_repeat_and_stops_at_85(pcli: PrefCli) -> None:
    seen = [pcli.pref("observe", "kpis", '["CTR", "ROAS"]', now=at(n))["preference"]
            for n in range(6)]
    assert [p["confidence"] for p in seen] == [40, 55, 70, 85, 85, 85]
    assert [p["observation_count"] for p in seen] == [1, 2, 3, 4, 5, 6]
    assert {p["first_observed"] for p in seen} == {T0}
    assert [pcli.get("kpis", now=at(5))[k] for k in ("band", "action")] == ["apply", "apply"]


def test_a_repeat_is_the_same_value_lists_in_any_order(pcli: PrefCli) -> None:
    pcli.pref("observe", "channels", '["Paid Search", "CTV"]')
    assert pcli.pref("observe", "channels", '["CTV", "Paid Search"]')["preference"][
        "confidence"] == 55


@pytest.mark.parametrize(("observations", "band", "action"), [
    (1, "mention", "mention"), (2, "suggest", "ask to confirm"), (4, "apply", "apply")])
def test_bands_of_implicit_preferences(pcli: PrefCli, observations: int, band: str,
                                       action: str) -> None:
    for _ in range(observations):
        pcli.pref("observe", "vertical", "Retail")
    got = pcli.get("vertical")
    assert (got["band"], got["action"]) == (band, action)


@pytest.mark.parametrize(("confidence", "band"), [
    (100, "apply"), (80, "apply"), (79, "suggest"), (50, "suggest"), (49, "mention"),
    (0, "mention")])
def test_band_edges(confidence: int, band: str) -> None:
    assert prefs_rules.band(confidence) == band


@pytest.mark.parametrize(("days", "explicit", "implicit"), [
    (0, 100, 40), (29.9, 100, 40), (30, 90, 30), (89, 90, 30), (90, 75, 15), (400, 75, 15)])
def test_decay_at_read_time(pcli: PrefCli, days: float, explicit: int, implicit: int) -> None:
    pcli.pref("set", "vertical", "Retail")
    pcli.pref("observe", "budget_range", "[100000, 500000]")
    assert pcli.get("vertical", now=at(days))["confidence"] == explicit
    assert pcli.get("budget_range", now=at(days))["confidence"] == implicit


def test_decay_does_not_go_below_zero(pcli: PrefCli) -> None:
    pcli.pref("observe", "tone", "terse")
    pcli.pref("contradict", "tone", "chatty", now=at(1))  # 40 - 30 = 10
    assert pcli.get("tone", now=at(95))["confidence"] == 0  # 10 - (25 - 0)


def test_use_refreshes_by_5_up_to_the_original_level(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    levels = [pcli.pref("use", "vertical", now=at(30 + n))["preference"]["confidence"]
              for n in range(3)]
    assert levels == [95, 100, 100]  # 90 after 30 days unused, then +5, +5, ceiling 100
    pcli.pref("observe", "kpis", "ROAS")
    pcli.pref("observe", "kpis", "ROAS")  # 55: the implicit preference's original level
    levels = [pcli.pref("use", "kpis", now=at(30 + n))["preference"]["confidence"]
              for n in range(3)]
    assert levels == [50, 55, 55]  # 45 after 30 days, +5, then the ceiling of 55


def test_use_restarts_the_decay_clock(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    assert pcli.pref("use", "vertical", now=at(100))["preference"]["confidence"] == 80
    assert pcli.get("vertical", now=at(129))["confidence"] == 80
    assert pcli.get("vertical", now=at(130))["confidence"] == 70


def test_confirmation_resets_to_100_and_makes_it_explicit(pcli: PrefCli) -> None:
    pcli.pref("observe", "vertical", "Retail")
    done = pcli.pref("confirm", "vertical", now=at(40))["preference"]
    assert (done["confidence"], done["kind"], done["persistent"]) == (100, "explicit", True)


def test_contradiction_of_an_implicit_preference_costs_30(pcli: PrefCli) -> None:
    for _ in range(4):
        pcli.pref("observe", "vertical", "Retail")  # 85
    done = pcli.pref("contradict", "vertical", "Finance")["preference"]
    assert (done["confidence"], done["value"], done["flagged"]) == (55, "Retail", False)
    assert done["contradicted_by"] == "Finance"
    assert pcli.get("vertical")["action"] == "ask to confirm"


def test_contradiction_of_an_explicit_preference_resets_to_0_and_flags_it(pcli: PrefCli
                                                                           ) -> None:
    pcli.pref("set", "vertical", "Retail")
    done = pcli.pref("contradict", "vertical", "Finance")["preference"]
    assert (done["confidence"], done["flagged"]) == (0, True)
    assert pcli.get("vertical")["action"].startswith("do not use")
    refused = pcli("pref", "use", "vertical", now=T0)
    assert refused.code == 1 and "flagged for removal" in refused.stderr
    cleared = pcli.pref("clear", "--flagged", "--yes")
    assert [p["key"] for p in cleared["preferences"]] == ["vertical"]


def test_contradiction_is_not_a_use_so_decay_is_not_counted_twice(pcli: PrefCli) -> None:
    for _ in range(4):
        pcli.pref("observe", "vertical", "Retail")  # 85 at T0
    assert pcli.pref("contradict", "vertical", "Finance", now=at(40))["preference"][
        "confidence"] == 45  # 85 - 10 (40 days unused) - 30
    assert pcli.get("vertical", now=at(40))["confidence"] == 45
    assert pcli.get("vertical", now=at(100))["confidence"] == 30  # the 90-day step adds 15


def test_contradicting_with_the_current_value_is_refused(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    refused = pcli("pref", "contradict", "vertical", "Retail", now=T0)
    assert refused.code == 1 and "does not contradict" in refused.stderr


@pytest.mark.parametrize(("repeats", "value", "confidence", "note"), [
    (1, "Finance", 40, "replaced"),  # 40 - 30 = 10 < 40: the new behaviour takes the slot
    (4, "Retail", 55, "contradicted"),  # 85 - 30 = 55: the old value stays, to confirm
])
def test_observing_a_different_value_contradicts(pcli: PrefCli, repeats: int, value: str,
                                                 confidence: int, note: str) -> None:
    for _ in range(repeats):
        pcli.pref("observe", "vertical", "Retail")
    done = pcli.pref("observe", "vertical", "Finance")
    assert (done["preference"]["value"], done["preference"]["confidence"], done["note"]) == (
        value, confidence, note)


@pytest.mark.parametrize(("text", "value"), [
    ("500000", 500000), ("2.5", 2.5), ('["Paid Search", "CTV"]', ["Paid Search", "CTV"]),
    ("Retail", "Retail"), ("true", "true"), ("02134", "02134"), ("[oops", "[oops")])
def test_values_are_strings_numbers_or_lists(pcli: PrefCli, text: str, value: object) -> None:
    assert pcli.pref("set", "thing", text)["preference"]["value"] == value


@pytest.mark.parametrize(("args", "message"), [
    (("set", "Bad Key!", "x"), "the preference key is not valid"),
    (("set", "k", "[]"), "1-50 items"),
    (("set", "k", '[{"a": 1}]'), "not a string or a number"),
    (("set", "k", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "a GitHub token"),
    (("get", "missing"), "no preference with that key"),
    (("use", "missing"), "no preference with that key"),
])
def test_bad_input_is_refused_and_nothing_is_written(pcli: PrefCli, args: tuple[str, ...],
                                                     message: str) -> None:
    refused = pcli("pref", *args, now=T0)
    assert refused.code == 1 and message in refused.stderr
    assert "ghp_" not in refused.stderr
    assert not (pcli.folder() / "preferences.json").exists()


def test_session_records_expire_unless_persistent(pcli: PrefCli) -> None:
    plain = pcli.pref("session", "record", "--session", "s1", "budget", "500000")["record"]
    kept = pcli.pref("session", "record", "--session", "s1", "vertical", "Retail",
                     "--persistent")["record"]
    assert (plain["expires_at"], plain["confidence"], plain["persistent"]) == (
        at(30), 80, False)
    assert (kept["expires_at"], kept["confidence"], kept["persistent"]) == (None, 100, True)
    assert [r["key"] for r in pcli.pref("session", "load", now=at(29))["records"]] == [
        "vertical", "budget"]
    assert [r["key"] for r in pcli.pref("session", "load", now=at(30))["records"]] == [
        "vertical"]


def test_session_load_returns_the_last_5_sessions_by_confidence(pcli: PrefCli) -> None:
    for n in range(7):
        pcli.pref("session", "record", "--session", f"s{n}", "step", str(n),
                  "--confidence", str(50 + n * 7 % 40), now=at(n))
    loaded = pcli.pref("session", "load", now=at(7))
    assert loaded["sessions"] == ["s6", "s5", "s4", "s3", "s2"]
    confidences = [r["confidence"] for r in loaded["records"]]
    assert confidences == sorted(confidences, reverse=True) == [85, 78, 71, 64, 52]
