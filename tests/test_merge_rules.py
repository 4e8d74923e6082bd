"""The field rules of a merge of one entry changed on both branches (pure, no git)."""

from __future__ import annotations

from typing import Any

import pytest

from loa_mem.memory.merge import Plan, merge_fields, merge_texts

BASE: dict[str, Any] = {"id": "MEM-20260201-001", "category": "fact", "content": "x",
                        "confidence": 0.8, "tags": ["a", "b"]}


@pytest.mark.parametrize(("ours", "theirs", "later", "expected"), [
    ({"confidence": 0.9}, {"confidence": 0.85}, "theirs", {"confidence": 0.85}),
    ({"confidence": 0.9}, {"confidence": 0.85}, "ours", {"confidence": 0.9}),
    ({"superseded_by": "MEM-20260201-002"}, {"confidence": 0.95}, "theirs",
     {"superseded_by": "MEM-20260201-002", "confidence": 0.95}),
    ({"tags": ["a", "c"]}, {"tags": ["b", "d"]}, "theirs", {"tags": ["c", "d"]}),
    # counts add up: each side's applications count, whichever applied last
    ({"effectiveness": {"applications": 2, "last_applied": "2026-02-03T00:00:00Z"}},
     {"effectiveness": {"applications": 1, "last_applied": "2026-02-02T00:00:00Z"}}, "theirs",
     {"effectiveness": {"applications": 3, "last_applied": "2026-02-03T00:00:00Z"}}),
    ({"effectiveness": {"applications": 3, "successes": 2, "failures": 0, "score": 67,
                        "last_applied": "2026-02-02T00:00:00Z"}},
     {"effectiveness": {"applications": 3, "successes": 1, "failures": 1, "score": 33,
                        "last_applied": "2026-02-03T00:00:00Z"}}, "ours",
     {"effectiveness": {"applications": 5, "successes": 2, "failures": 1, "score": 40,
                        "last_applied": "2026-02-03T00:00:00Z"}}),
    # both sides superseded the entry: the smaller id stands, the other is a fork for validate
    ({"superseded_by": "MEM-20260201-003"}, {"superseded_by": "MEM-20260201-002"}, "ours",
     {"superseded_by": "MEM-20260201-002"}),
    ({"archived": True, "archived_at": "2026-02-05T00:00:00Z", "archive_reason": "manual"},
     {"archived": True, "archived_at": "2026-02-04T00:00:00Z", "archive_reason": "expired"},
     "ours", {"archived": True, "archived_at": "2026-02-04T00:00:00Z",
              "archive_reason": "expired"}),
])
def test_rules_settle_fields_changed_on_both_sides(ours: dict[str, Any], theirs: dict[str, Any],
                                                    later: str,
                                                    expected: dict[str, Any]) -> None:
    base = {**BASE, "effectiveness": {"applications": 1, "successes": 1, "failures": 0,
                                      "score": 100, "last_applied": "2026-02-01T00:00:00Z"}} if (
        "successes" in str(ours)) else BASE
    merged = merge_fields(base, {**base, **ours}, {**base, **theirs}, later)
    assert merged == {**base, **expected}


_SEEN = {"signature": "s1", "command_key": "k1", "occurrences": 2,
         "last_seen": "2026-02-02T00:00:00Z"}


@pytest.mark.parametrize(("ours", "theirs", "expected"), [
    # the same failure seen again on both sides: every occurrence counts, the later sighting
    ({**_SEEN, "occurrences": 3, "last_seen": "2026-02-03T00:00:00Z"},
     {**_SEEN, "occurrences": 4, "last_seen": "2026-02-04T00:00:00Z"},
     {**_SEEN, "occurrences": 5, "last_seen": "2026-02-04T00:00:00Z"}),
    # fixed on one side, failed again later on the other: the failure reopens it
    ({**_SEEN, "fixed_at": "2026-02-03T00:00:00Z", "fixed_session": "s-a"},
     {**_SEEN, "occurrences": 3, "last_seen": "2026-02-04T00:00:00Z"},
     {**_SEEN, "occurrences": 3, "last_seen": "2026-02-04T00:00:00Z"}),
    # failed again on one side, then fixed later on the other: it stays fixed
    ({**_SEEN, "occurrences": 3, "last_seen": "2026-02-03T00:00:00Z"},
     {**_SEEN, "fixed_at": "2026-02-05T00:00:00Z", "fixed_session": "s-b"},
     {**_SEEN, "occurrences": 3, "last_seen": "2026-02-03T00:00:00Z",
      "fixed_at": "2026-02-05T00:00:00Z", "fixed_session": "s-b"}),
])
def test_a_captured_error_changed_on_both_sides_keeps_every_sighting_and_the_latest_state(
        ours: dict[str, Any], theirs: dict[str, Any], expected: dict[str, Any]) -> None:
    base = {**BASE, "category": "error", "capture": _SEEN}
    for later in ("ours", "theirs"):
        merged = merge_fields(base, {**base, "capture": ours}, {**base, "capture": theirs}, later)
        assert merged == {**base, "capture": expected}


@pytest.mark.parametrize(("ours", "theirs"), [
    ({"content": "y"}, {"content": "z"}),
    ({"ttl": "30d"}, {"ttl": "60d"}),
])
def test_changes_no_rule_settles_are_conflicts(ours: dict[str, Any],
                                               theirs: dict[str, Any]) -> None:
    assert merge_fields(BASE, {**BASE, **ours}, {**BASE, **theirs}, "theirs") is None


def test_an_entry_removed_without_reason_and_changed_elsewhere_conflicts() -> None:
    base = "- id: MEM-20260201-001\n  content: x\n"
    theirs = "- id: MEM-20260201-001\n  content: x\n  confidence: 0.9\n"
    merged = merge_texts((base, "", theirs), Plan())
    assert merged.conflicts == ["MEM-20260201-001"]
    retired = merge_texts((base, "", theirs), Plan(retired_ours=frozenset({"MEM-20260201-001"})))
    assert (retired.conflicts, retired.text) == ([], "")
