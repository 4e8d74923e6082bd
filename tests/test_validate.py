"""validate (spec sections 2 and 6, issue 2 item 7): every problem in every file, each with file
and line; text, json and github formats; exit 1 on any error, 0 with warnings only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"

# Appended after the two header lines init writes, so the first entry starts on line 3.
BROKEN = """\
- id: MEM-20260101-001
  category: fact
  content: Fine entry.
  confidence: 0.9
  source: {session_id: s1, timestamp: 2026-01-01T09:00:00Z}
  ttl: permanent
  expires_at: null
- id: MEM-2026-01
  category: fact
  content: Bad id and a low confidence.
  confidence: 0.5
  source: {session_id: s1, timestamp: 2026-01-01T09:00:00Z}
  ttl: permanent
  expires_at: null
- id: MEM-20260101-003
  category: fact
  content: Ask jane.doe@example.com.
  confidence: 0.9
  source: {session_id: s1, timestamp: 2026-01-01T09:00:00Z}
  ttl: 30d
  expires_at: 2026-02-01T09:00:00Z
  colour: blue
- id: MEM-20260101-001
  category: learning
  content: Duplicate id, wrong file, archived outside the archive.
  confidence: 0.9
  source: {session_id: s1, timestamp: 2026-01-01T09:00:00Z}
  ttl: 90d
  expires_at: 2026-04-01T09:00:00Z
  archived: true
- id: MEM-20260101-005
  category: fact
  content: Superseded by nothing real.
  confidence: 0.9
  source: {timestamp: 2026-01-01T09:00:00Z}
  ttl: permanent
  expires_at: 2027-01-01T09:00:00Z
  superseded_by: MEM-20260101-099
  tags: [Bad Tag]
"""

EXPECTED = [  # line, rule, id
    (3, "unique-id", "MEM-20260101-001"),
    (10, "schema", "MEM-2026-01"),
    (13, "floor", "MEM-2026-01"),
    (19, "secret", "MEM-20260101-003"),
    (23, "expiry", "MEM-20260101-003"),
    (24, "schema", "MEM-20260101-003"),
    (25, "unique-id", "MEM-20260101-001"),
    (26, "category-file", "MEM-20260101-001"),
    (32, "archive", "MEM-20260101-001"),  # archived outside the archive
    (32, "archive", "MEM-20260101-001"),  # archived without a reason
    (37, "schema", "MEM-20260101-005"),   # source.session_id missing
    (39, "expiry", "MEM-20260101-005"),
    (40, "chain", "MEM-20260101-005"),
    (41, "schema", "MEM-20260101-005"),   # tags
]


def _append(store: Path, rel: str, text: str) -> None:
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(old + text, encoding="utf-8")


def _entry(memory_id: str, category: str = "fact", extra: str = "") -> str:
    return (f"- id: {memory_id}\n  category: {category}\n  content: Entry {memory_id}.\n"
            "  confidence: 0.9\n  source: {session_id: s1, timestamp: 2026-01-01T09:00:00Z}\n"
            f"  ttl: permanent\n  expires_at: null\n{extra}")


def test_a_clean_store_validates(cli: Cli) -> None:
    support.remember(cli, "A fact.", "fact")
    support.remember(cli, "A learning.", "learning", "-t", "ci")
    outcome = cli.ok("validate")

    assert outcome.stdout.startswith("ok: 2 entries, 0 error(s)")


def test_a_hand_broken_file_reports_every_problem(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    before = support.snapshot(store)
    outcome = cli("validate", "--json")

    assert outcome.code == 1
    data = outcome.json()
    assert data["ok"] is False
    assert [(p["line"], p["rule"], p["id"]) for p in data["problems"]] == EXPECTED
    assert {p["path"] for p in data["problems"]} == {FACTS}
    assert {p["severity"] for p in data["problems"]} == {"error"}
    messages = [p["message"] for p in data["problems"]]
    assert "expires_at should be 2026-01-31T09:00:00Z for ttl 30d" in messages
    assert "expires_at should be null for ttl permanent" in messages
    assert any("unknown key 'colour'" in m for m in messages)
    assert any("floor of 0.8" in m for m in messages)
    assert not any("jane.doe" in m for m in messages)
    assert support.snapshot(store) == before  # validate never writes


def test_text_format_names_file_and_line(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    outcome = cli("validate")

    lines = outcome.stdout.splitlines()
    assert outcome.code == 1
    assert len(lines) == len(EXPECTED) + 1
    assert lines[1] == (f"{FACTS}:10: error: [schema] MEM-2026-01: id: does not have the "
                        "expected form")
    assert lines[-1].startswith("FAILED: 5 entries, 14 error(s)")


def test_github_format_annotates_each_problem(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    outcome = cli("validate", "--format", "github")

    annotations = [line for line in outcome.stdout.splitlines() if line.startswith("::")]
    assert outcome.code == 1
    assert len(annotations) == len(EXPECTED)
    assert annotations[2].startswith(f"::error file={FACTS},line=13,")
    assert annotations[2].endswith("::MEM-2026-01: confidence 0.5 is under the fact floor of 0.8")


def test_unknown_format_is_refused(cli: Cli) -> None:
    outcome = cli("validate", "--format", "xml")

    assert outcome.code in (1, 2)
    assert "text, json or github" in outcome.stderr


def test_a_file_that_does_not_parse_is_one_problem_with_its_line(cli: Cli, store: Path) -> None:
    support.remember(cli, "A learning.", "learning")
    _append(store, FACTS, "- id: MEM-20260101-001\n  content: [1, 2\n")
    data = cli("validate", "--json").json()

    [problem] = data["problems"]
    assert (problem["path"], problem["line"], problem["rule"]) == (FACTS, 5, "yaml")
    assert data["ok"] is False


def test_chains_must_agree_both_ways(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001", extra="  superseded_by: MEM-20260101-002\n")
            + _entry("MEM-20260101-002"))
    problems = cli("validate", "--json").json()["problems"]

    assert [(p["line"], p["rule"], p["id"]) for p in problems] == [
        (10, "chain", "MEM-20260101-001")]
    assert "MEM-20260101-002 has no supersedes" in problems[0]["message"]
    assert "loa-mem repair" in problems[0]["message"]


def test_supersedes_must_point_back_too(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001")
            + _entry("MEM-20260101-002", extra="  supersedes: MEM-20260101-001\n"))
    problems = cli("validate", "--json").json()["problems"]

    assert [(p["line"], p["rule"], p["id"]) for p in problems] == [
        (17, "chain", "MEM-20260101-002")]


def test_ids_must_be_unique_across_files(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001"))
    _append(store, f"{support.MEMORY}/decisions.yaml", _entry("MEM-20260101-001", "decision"))
    problems = cli("validate", "--json").json()["problems"]

    assert sorted((p["path"], p["line"], p["rule"]) for p in problems) == [
        (f"{support.MEMORY}/decisions.yaml", 3, "unique-id"), (FACTS, 3, "unique-id")]


def test_archive_entries_must_be_marked_archived(cli: Cli, store: Path) -> None:
    _append(store, f"{support.ARCHIVE}/facts.yaml", _entry("MEM-20260101-001"))
    data = cli("validate", "--json").json()

    assert [(p["path"], p["line"], p["rule"]) for p in data["problems"]] == [
        (f"{support.ARCHIVE}/facts.yaml", 1, "archive")]


def test_warnings_alone_exit_0(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001",
                                 extra="  related_memories: [MEM-20250101-001]\n"))
    with (store / support.MEMORY / "events.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"op": "forget", "ids": ["MEM-20250101-001"], "time": "2026-01-01T00:00:00Z", '
                  '"actor": "user:x", "reason": "wrong"}\n')
    outcome = cli("validate", "--json")

    assert outcome.code == 0
    [problem] = outcome.json()["problems"]
    assert (problem["severity"], problem["rule"], problem["line"]) == ("warning", "related", 10)
    assert "forgotten" in problem["message"]


def test_a_related_memory_that_exists_nowhere_is_an_error(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001",
                                 extra="  related_memories: [MEM-20250101-001]\n"))
    outcome = cli("validate", "--json")

    assert outcome.code == 1
    [problem] = outcome.json()["problems"]
    assert (problem["severity"], problem["rule"], problem["line"]) == ("error", "related", 10)


def test_validate_paths_limits_the_report(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    _append(store, f"{support.MEMORY}/errors.yaml", _entry("MEM-20260101-009", "error").replace(
        "confidence: 0.9", "confidence: 0.5"))
    outcome = cli("validate", f"{support.MEMORY}/errors.yaml", "--json")

    assert outcome.code == 1
    assert [(p["path"], p["line"], p["rule"]) for p in outcome.json()["problems"]] == [
        (f"{support.MEMORY}/errors.yaml", 6, "floor")]


def test_validate_runs_in_ci_as_a_real_process(store: Path) -> None:
    _append(store, FACTS, BROKEN)
    result = run_loa_mem(store, "validate", "--format", "github")

    assert result.returncode == 1
    assert result.stdout.count("::error ") == len(EXPECTED)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("key", ["expires_at", "ttl"])
def test_expires_at_must_match_ttl(cli: Cli, store: Path, key: str) -> None:
    text = _entry("MEM-20260101-001", "learning").replace("ttl: permanent", "ttl: 90d")
    if key == "ttl":  # a right expires_at with a ttl changed by hand
        text = text.replace("expires_at: null", "expires_at: 2026-04-01T09:00:00Z").replace(
            "ttl: 90d", "ttl: 30d")
    _append(store, f"{support.MEMORY}/learnings.yaml", text)
    problems = cli("validate", "--json").json()["problems"]

    assert [p["rule"] for p in problems] == ["expiry"]
    expected = "2026-01-31T09:00:00Z for ttl 30d" if key == "ttl" else (
        "2026-04-01T09:00:00Z for ttl 90d")
    assert expected in problems[0]["message"]


def test_a_big_store_reports_the_same_problems_as_a_small_one(cli: Cli, store: Path) -> None:
    """Past a few thousand entries the files are parsed and the entries checked in parallel
    processes; the broken entries, buried among 1,000 good ones in each category's file, must
    come out exactly as they do from a small store, with their lines moved by the filler."""
    filler = "".join(_entry(f"MEM-20250101-{n:04d}") for n in range(1, 3501))
    _append(store, FACTS, filler + BROKEN)
    outcome = cli("validate", "--json")

    assert outcome.code == 1
    data = outcome.json()
    assert data["entries"] == 3500 + BROKEN.count("- id:")
    shift = filler.count("\n")
    assert [(p["line"] - shift, p["rule"], p["id"]) for p in data["problems"]] == EXPECTED
