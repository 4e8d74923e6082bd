"""Lifecycle rules of spec section 3 at a fixed LOA_MEM_NOW, with hand-computed values:
floors and default confidence, TTL and expires_at, expiry, archive, status warnings, duplicates."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import FIXED_NOW, Cli

# FIXED_NOW is 2026-02-01T10:30:00Z; February 2026 has 28 days.
DEFAULTS = [  # category, default confidence max(.8, floor), ttl, expires_at
    ("fact", 0.8, "permanent", None),
    ("decision", 0.9, "permanent", None),
    ("learning", 0.8, "90d", "2026-05-02T10:30:00Z"),
    ("error", 0.8, "30d", "2026-03-03T10:30:00Z"),
    ("preference", 0.8, "permanent", None),
]


@pytest.mark.parametrize("case", DEFAULTS, ids=[c[0] for c in DEFAULTS])
def test_category_defaults(cli: Cli, store: Path,
                           case: tuple[str, float, str, str | None]) -> None:
    category, confidence, ttl, expires = case
    memory_id = support.remember(cli, f"A {category} worth keeping.", category)
    written = support.entry(store, memory_id)

    support.assert_new_id(memory_id)
    assert written["category"] == category
    assert written["confidence"] == confidence
    assert written["ttl"] == ttl
    assert written["expires_at"] == expires
    assert written["source"] == {"session_id": "manual", "timestamp": FIXED_NOW}
    assert support.grimoire(store, category).read_text(encoding="utf-8").count(memory_id) == 1


@pytest.mark.parametrize(("category", "floor"), [
    ("fact", "0.8"), ("decision", "0.9"), ("learning", "0.7"), ("error", "0.6"),
    ("preference", "0.5")])
def test_confidence_exactly_at_the_floor_is_accepted(cli: Cli, store: Path, category: str,
                                                     floor: str) -> None:
    memory_id = support.remember(cli, "Right at the floor.", category, "--confidence", floor)

    assert support.entry(store, memory_id)["confidence"] == float(floor)


def test_entry_fields_follow_the_loa_order(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "We chose PostgreSQL. It has JSONB.", "decision",
                                 "--confidence", "0.95",
                     "-t", "database", "-t", "architecture", "--session", "abc123",
                     "--agent", "designing-architecture", "--phase", "architecture",
                     "--file", "docs/adr/001.md", "--lines", "3-14")
    text = support.grimoire(store, "decision").read_text(encoding="utf-8")
    keys = [line.split(":")[0].strip() for line in text.splitlines()
            if line.startswith(("- ", "  ")) and not line.startswith("    ")]

    assert keys == ["- id", "category", "content", "summary", "confidence", "source", "ttl",
                    "expires_at", "tags"]
    written = support.entry(store, memory_id)
    assert written["summary"] == "We chose PostgreSQL."
    assert written["tags"] == ["database", "architecture"]
    assert written["source"] == {"session_id": "abc123", "timestamp": FIXED_NOW,
                                 "agent": "designing-architecture", "phase": "architecture",
                                 "file_path": "docs/adr/001.md", "line_range": "3-14"}


# now, ttl, then the expected source.timestamp, expires_at and the day in the id
@pytest.mark.parametrize("case", [
    # An explicit ttl, the same time of day.
    (FIXED_NOW, "7d", FIXED_NOW, "2026-02-08T10:30:00Z", "20260201"),
    (FIXED_NOW, "permanent", FIXED_NOW, None, "20260201"),
    # Across the end of February in a leap year.
    ("2028-02-28T08:00:00Z", "2d", "2028-02-28T08:00:00Z", "2028-03-01T08:00:00Z", "20280228"),
    # A clock with an offset is stored in UTC; the id takes the UTC day.
    ("2026-03-28T23:15:00-05:00", "30d", "2026-03-29T04:15:00Z", "2026-04-28T04:15:00Z",
     "20260329"),
    ("2026-03-29T01:15:00+02:00", "1d", "2026-03-28T23:15:00Z", "2026-03-29T23:15:00Z",
     "20260328"),
])
def test_expires_at_is_timestamp_plus_ttl_days(cli: Cli, store: Path,
                                               case: tuple[str, str, str, str | None, str]
                                               ) -> None:
    now, ttl, stamp, expires, day = case
    memory_id = support.remember(cli, "An error and its fix.", "error", "--ttl", ttl, now=now)
    support.assert_new_id(memory_id, day)
    written = support.entry(store, memory_id)

    assert written["source"]["timestamp"] == stamp
    assert written["ttl"] == ttl
    assert written["expires_at"] == expires


def test_ids_carry_the_day_of_their_timestamp_and_never_repeat(cli: Cli, store: Path) -> None:
    ids = [support.remember(cli, f"Fact number {n}.", "fact") for n in range(3)]
    next_day = support.remember(cli, "A fact of the next day.", "fact",
                                now="2026-02-02T09:00:00Z")

    for memory_id in ids:
        support.assert_new_id(memory_id, "20260201")
    support.assert_new_id(next_day, "20260202")
    assert len(set([*ids, next_day])) == 4
    assert sorted(support.all_ids(store)) == sorted([*ids, next_day])


def test_many_ids_of_one_day_are_all_distinct(cli: Cli, store: Path) -> None:
    ids = [support.remember(cli, f"Fact number {n}.", "fact", "--no-commit") for n in range(200)]

    assert len(set(ids)) == 200
    for memory_id in ids:
        support.assert_new_id(memory_id)
    assert sorted(support.all_ids(store)) == sorted(ids)
    cli.ok("validate")


def test_a_legacy_store_with_id_999_keeps_working_and_gets_new_style_ids(cli: Cli,
                                                                         store: Path) -> None:
    legacy = "MEM-20260201-999"
    facts = support.grimoire(store, "fact")
    facts.write_text(facts.read_text(encoding="utf-8") + (
        f"- id: {legacy}\n  category: fact\n  content: The 999th.\n  confidence: 0.8\n"
        "  source: {session_id: s, timestamp: 2026-02-01T09:00:00Z}\n  ttl: permanent\n"
        "  expires_at: null\n"), encoding="utf-8")

    memory_id = support.remember(cli, "The thousandth.", "fact")

    support.assert_new_id(memory_id)
    assert sorted(support.all_ids(store)) == sorted([legacy, memory_id])
    assert cli.ok("show", legacy, "--json").json()["entry"]["content"] == "The 999th."
    assert cli.ok("show", memory_id, "--json").json()["entry"]["content"] == "The thousandth."
    cli.ok("validate")


def test_expired_entries_leave_recall(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Flaky login test: clear the cache.", "error")
    expires = "2026-03-03T10:30:00Z"

    def recalled(now: str, *flags: str) -> list[str]:
        data = cli.ok("recall", "login", *flags, "--json", now=now).json()
        return [r["id"] for r in data["results"]]

    assert recalled("2026-03-03T10:29:59Z") == [memory_id]
    assert recalled(expires) == []
    assert recalled(expires, "--include-expired") == [memory_id]
    assert cli.ok("show", memory_id, "--json", now=expires).json()["state"] == "expired"


def _three_entries(cli: Cli) -> dict[str, str]:
    return {"error": support.remember(cli, "Port 3000 clashes with the docs server.", "error"),
            "learning": support.remember(cli, "Cache the npm folder in CI.", "learning"),
            "fact": support.remember(cli, "The service is written in Go.", "fact")}


def test_archive_expired_moves_only_expired_entries(cli: Cli, store: Path) -> None:
    ids = _three_entries(cli)
    now = "2026-03-10T00:00:00Z"  # the error (30d) has expired, the learning (90d) has not
    data = cli.ok("archive", "--expired", "--json", now=now).json()

    assert data["ids"] == [ids["error"]]
    assert data["reason"] == "expired"
    assert support.entries(store, "error") == []
    [archived] = support.entries(store, "error", archive=True)
    assert archived["id"] == ids["error"]
    assert (archived["archived"], archived["archived_at"], archived["archive_reason"]) == (
        True, now, "expired")
    assert [e["id"] for e in support.entries(store, "learning")] == [ids["learning"]]
    assert support.trailers(store) == [("Loa-Op", "archive"), ("Loa-Id", ids["error"])]
    cli.ok("validate", now=now)


def test_archive_expired_dry_run_writes_nothing(cli: Cli, store: Path) -> None:
    ids = _three_entries(cli)
    before, commits = support.snapshot(store), support.commit_count(store)
    data = cli.ok("archive", "--expired", "--dry-run", "--json",
                  now="2026-06-01T00:00:00Z").json()

    assert data["dry_run"] is True
    assert data["ids"] == sorted([ids["error"], ids["learning"]])
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_archive_expired_with_nothing_expired_is_not_an_error(cli: Cli, store: Path) -> None:
    # Asked to archive "whatever has expired", archiving nothing is the right answer (hooks and
    # cron jobs run it routinely); nothing is written.
    _three_entries(cli)
    commits = support.commit_count(store)
    data = cli.ok("archive", "--expired", "--json").json()

    assert data["ids"] == []
    assert support.commit_count(store) == commits


@pytest.mark.parametrize("reason", ["manual", "superseded", "ineffective", "expired"])
def test_archive_by_id_records_the_reason(cli: Cli, store: Path, reason: str) -> None:
    memory_id = support.remember(cli, "The service is written in Go.", "fact")
    args = ["--reason", reason] if reason != "manual" else []
    cli.ok("archive", memory_id, *args)
    archived = support.entry(store, memory_id)

    assert support.entries(store, "fact") == []
    assert archived["archive_reason"] == reason
    assert archived["archived_at"] == FIXED_NOW
    assert cli.ok("show", memory_id, "--json").json()["state"] == "archived"
    assert cli.ok("recall", "Go", "--json").json()["results"] == []
    hits = cli.ok("recall", "Go", "--include-archived", "--json").json()["results"]
    assert [h["id"] for h in hits] == [memory_id]


def test_archiving_an_archived_entry_is_refused(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "The service is written in Go.", "fact")
    cli.ok("archive", memory_id)
    commits = support.commit_count(store)
    outcome = cli("archive", memory_id)

    assert outcome.code == 1
    assert "already archived" in outcome.stderr
    assert support.commit_count(store) == commits


def test_restore_brings_an_archived_entry_back(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "The service is written in Go.", "fact", "-t", "go")
    original = support.entry(store, memory_id)
    cli.ok("archive", memory_id)
    cli.ok("restore", memory_id)

    assert support.entries(store, "fact", archive=True) == []
    assert support.entries(store, "fact") == [original]


@pytest.mark.parametrize(("now", "expiring"), [
    ("2026-02-23T10:30:00Z", False),  # 8 days before 2026-03-03T10:30:00Z
    ("2026-02-24T10:30:00Z", True),   # exactly 7 days
    ("2026-02-25T10:30:00Z", True),   # 6 days
    ("2026-03-03T10:30:00Z", False),  # expired: counted as expired, not as expiring
])
def test_status_warns_about_entries_expiring_soon(cli: Cli, now: str, expiring: bool) -> None:
    memory_id = support.remember(cli, "Port 3000 clashes with the docs server.", "error")
    support.remember(cli, "The service is written in Go.", "fact")
    data = cli.ok("status", "--json", now=now).json()

    listed = [e["id"] for e in data["expiring_soon"]]
    assert listed == ([memory_id] if expiring else [])
    if expiring:
        assert data["expiring_soon"][0]["expires_at"] == "2026-03-03T10:30:00Z"
        assert memory_id in cli.ok("status", now=now).stdout
    assert data["counts"]["error"]["expired"] == (1 if now >= "2026-03-03T10:30:00Z" else 0)


def test_warn_before_archive_days_comes_from_the_config(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "warn_before_archive_days: 7", "warn_before_archive_days: 10"), encoding="utf-8")
    memory_id = support.remember(cli, "Port 3000 clashes with the docs server.", "error")
    data = cli.ok("status", "--json", now="2026-02-21T10:30:00Z").json()  # 10 days left

    assert data["warn_before_archive_days"] == 10
    assert [e["id"] for e in data["expiring_soon"]] == [memory_id]


@pytest.mark.parametrize("again", [
    "We deploy with Helm charts.",
    "we deploy with helm charts",
    "  We  deploy\nwith Helm   charts. ",
    "WE DEPLOY WITH HELM CHARTS!",
])
def test_a_duplicate_returns_the_existing_id_and_writes_nothing(cli: Cli, store: Path,
                                                                again: str) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact")
    before, commits = support.snapshot(store), support.commit_count(store)
    data = cli.ok("remember", again, "-c", "fact", "--json").json()

    assert (data["id"], data["created"]) == (memory_id, False)
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits
    assert "already" in cli.ok("remember", again, "-c", "fact").stdout


def test_the_same_content_in_another_category_is_not_a_duplicate(cli: Cli) -> None:
    first = support.remember(cli, "Tabs, not spaces.", "preference")

    assert support.remember(cli, "Tabs, not spaces.", "decision") != first


def test_different_words_are_not_duplicates(cli: Cli) -> None:
    support.remember(cli, "We deploy with Helm charts.", "fact")

    support.remember(cli, "We deploy with Helm charts on Fridays.", "fact")


@pytest.mark.parametrize("retire", ["archive", "supersede", "expire"])
def test_content_of_a_retired_entry_can_be_remembered_again(cli: Cli, store: Path,
                                                             retire: str) -> None:
    content = "Port 3000 clashes with the docs server."
    first = support.remember(cli, content, "error")
    now = None
    if retire == "archive":
        cli.ok("archive", first)
    elif retire == "supersede":
        cli.ok("supersede", first, "Port 3000 clashes with the docs server and Grafana.")
    else:
        now = "2026-04-01T00:00:00Z"  # after its 30 days
    data = cli.ok("remember", content, "-c", "error", "--json", now=now).json()

    assert data["created"] is True
    assert data["id"] != first
    hits = cli.ok("recall", "docs server", "--json", now=now).json()["results"]
    assert data["id"] in [h["id"] for h in hits]
