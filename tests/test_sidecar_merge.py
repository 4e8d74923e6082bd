"""The rules of merging one agent's sidecar changed on two branches (pure, no git)."""

from __future__ import annotations

from typing import Any

from loa_mem.agents.merge import merge_sidecar


def _memory(memory_id: str, content: str, confidence: float = 0.8) -> dict[str, Any]:
    return {"id": memory_id, "type": "preference", "content": content, "confidence": confidence,
            "session": "S-1", "created": "2026-02-01T10:30:00Z", "unreinforced_sessions": 0}


BASE: dict[str, Any] = {"agent": "architect", "sessions_participated": 1, "memory_seq": 1,
                        "memories": [_memory("m1", "reads the ADRs first")],
                        "relationships": {"agrees_with": [], "disagrees_with": []}}


def test_memories_both_branches_made_keep_distinct_ids() -> None:
    ours = {**BASE, "memory_seq": 2, "sessions_participated": 2,
            "memories": [*BASE["memories"], _memory("m2", "ours: small modules")]}
    theirs = {**BASE, "memory_seq": 2, "sessions_participated": 2,
              "memories": [*BASE["memories"], _memory("m2", "theirs: big modules")]}
    merged = merge_sidecar(BASE, ours, theirs)

    assert [(m["id"], m["content"]) for m in merged["memories"]] == [
        ("m1", "reads the ADRs first"), ("m2", "ours: small modules"),
        ("m3", "theirs: big modules")]
    assert merged["sessions_participated"] == 3
    assert merged["memory_seq"] >= 3


def test_a_pruned_memory_stays_pruned_and_confidence_moves_add_up() -> None:
    ours = {**BASE, "memories": []}
    theirs = {**BASE, "memories": [_memory("m1", "reads the ADRs first", 0.9)]}
    assert merge_sidecar(BASE, ours, theirs)["memories"] == []

    up = {**BASE, "memories": [_memory("m1", "reads the ADRs first", 0.9)]}
    down = {**BASE, "memories": [_memory("m1", "reads the ADRs first", 0.7)]}
    both_up = {**BASE, "memories": [_memory("m1", "reads the ADRs first", 0.95)]}
    assert merge_sidecar(BASE, up, down)["memories"][0]["confidence"] == 0.8
    assert merge_sidecar(BASE, both_up, up)["memories"][0]["confidence"] == 1.0


def test_relationships_merge_as_unions_and_the_trust_score_is_the_latest() -> None:
    base = {**BASE, "trust": {"trust_score": 0.6, "trust_score_history": [
        {"timestamp": "2026-02-01T00:00:00Z", "score": 0.6}]}}
    ours = {**base, "relationships": {"agrees_with": ["critic"], "disagrees_with": []},
            "trust": {"trust_score": 0.7, "trust_score_history": [
                *base["trust"]["trust_score_history"],
                {"timestamp": "2026-02-03T00:00:00Z", "score": 0.7}]}}
    theirs = {**base, "relationships": {"agrees_with": ["tester"], "disagrees_with": []},
              "trust": {"trust_score": 0.65, "trust_score_history": [
                  *base["trust"]["trust_score_history"],
                  {"timestamp": "2026-02-02T00:00:00Z", "score": 0.65}]}}
    merged = merge_sidecar(base, ours, theirs)

    assert merged["relationships"]["agrees_with"] == ["critic", "tester"]
    assert [h["score"] for h in merged["trust"]["trust_score_history"]] == [0.6, 0.65, 0.7]
    assert merged["trust"]["trust_score"] == 0.7
