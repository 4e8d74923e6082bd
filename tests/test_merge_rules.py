"""The field rules of a merge of one entry changed on both branches (pure, no git)."""

from __future__ import annotations

from typing import Any

import pytest

from loa_mem.merge import Plan, merge_fields, merge_texts

BASE: dict[str, Any] = {"id": "MEM-20260201-001", "category": "fact", "content": "x",
                        "confidence": 0.8, "tags": ["a", "b"]}


@pytest.mark.parametrize(("ours", "theirs", "later", "expected"), [
    ({"confidence": 0.9}, {"confidence": 0.85}, "theirs", {"confidence": 0.85}),
    ({"confidence": 0.9}, {"confidence": 0.85}, "ours", {"confidence": 0.9}),
    ({"superseded_by": "MEM-20260201-002"}, {"confidence": 0.95}, "theirs",
     {"superseded_by": "MEM-20260201-002", "confidence": 0.95}),
    ({"tags": ["a", "c"]}, {"tags": ["b", "d"]}, "theirs", {"tags": ["c", "d"]}),
    ({"effectiveness": {"applications": 2, "last_applied": "2026-02-03T00:00:00Z"}},
     {"effectiveness": {"applications": 1, "last_applied": "2026-02-02T00:00:00Z"}}, "theirs",
     {"effectiveness": {"applications": 2, "last_applied": "2026-02-03T00:00:00Z"}}),
    ({"archived": True, "archived_at": "2026-02-05T00:00:00Z", "archive_reason": "manual"},
     {"archived": True, "archived_at": "2026-02-04T00:00:00Z", "archive_reason": "expired"},
     "ours", {"archived": True, "archived_at": "2026-02-04T00:00:00Z",
              "archive_reason": "expired"}),
])
def test_rules_settle_fields_changed_on_both_sides(ours: dict[str, Any], theirs: dict[str, Any],
                                                    later: str,
                                                    expected: dict[str, Any]) -> None:
    merged = merge_fields(BASE, {**BASE, **ours}, {**BASE, **theirs}, later)
    assert merged == {**BASE, **expected}


@pytest.mark.parametrize(("ours", "theirs"), [
    ({"content": "y"}, {"content": "z"}),
    ({"superseded_by": "MEM-20260201-002"}, {"superseded_by": "MEM-20260201-003"}),
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
