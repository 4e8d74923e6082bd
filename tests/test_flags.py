"""One flag language: a confidence is 0..1 or a percentage, a ttl is days (30 or 30d) or
permanent, --reason takes free words, -f is --format, --agent says who and --by-agent filters."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loa_mem.core import flagvalues
from tests import support, terminal_support
from tests.conftest import Cli


@given(st.integers(min_value=0, max_value=100))
def test_a_percentage_is_the_same_confidence_as_its_fraction(n: int) -> None:
    assert flagvalues.confidence(f"{n}%") == pytest.approx(flagvalues.confidence(str(n / 100)))


@given(st.integers(min_value=1, max_value=99999))
def test_days_with_or_without_d_are_one_ttl(n: int) -> None:
    assert flagvalues.ttl(str(n)) == flagvalues.ttl(f"{n}d") == f"{n}d"
    assert flagvalues.ttl_days(str(n)) == n


def test_remember_takes_a_percentage_and_bare_days(cli: Cli, store: Path) -> None:
    memory_id = cli.ok("remember", "Releases are cut on Mondays.", "-c", "decision",
                       "--confidence", "95%", "--ttl", "30", "--json").json()["id"]
    entry = support.entry(store, memory_id)

    assert entry["confidence"] == 0.95
    assert entry["ttl"] == "30d"


def test_a_confidence_that_is_no_number_is_a_usage_mistake(cli: Cli, store: Path) -> None:
    before = support.snapshot(store)
    outcome = cli("remember", "Releases are cut on Mondays.", "-c", "fact", "--confidence",
                  "sk-live-verysecret")

    assert outcome.code == 2
    assert "85%" in outcome.stderr and "verysecret" not in outcome.stderr
    assert support.snapshot(store) == before


def test_agent_memories_take_a_percentage_too(cli: Cli, store: Path) -> None:
    data = cli.ok("agent", "remember", "qa", "Prefers table tests.", "--type", "preference",
                  "--confidence", "90%", "--json").json()
    assert "0.9" in str(data)


def test_session_records_take_the_same_confidence_and_ttl(cli: Cli) -> None:
    new = cli.ok("pref", "session", "record", "tone", "brief", "--session", "s1",
                 "--confidence", "0.9", "--ttl", "10d", "--json").json()["record"]
    old = cli.ok("pref", "session", "record", "tone", "brief", "--session", "s2",
                 "--confidence", "90", "--ttl", "10", "--json").json()["record"]

    assert new["confidence"] == old["confidence"] == 90
    assert new["expires_at"] == old["expires_at"] == "2026-02-11T10:30:00Z"
    kept = cli.ok("pref", "session", "record", "tone", "brief", "--session", "s3",
                  "--ttl", "permanent", "--json").json()["record"]
    assert kept["persistent"] is True and kept["expires_at"] is None


def test_archive_takes_a_reason_in_free_words(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "The staging host is called tern.", "fact")
    outcome = cli.ok("archive", memory_id, "--reason", "the host was renamed to heron",
                     "--json").json()

    assert support.entry(store, memory_id)["archive_reason"] == "manual"
    assert outcome["reason"] == "the host was renamed to heron"
    assert support.events(store)[-1]["reason"] == "the host was renamed to heron"
    assert "the host was renamed to heron" in support.message(store)


def test_an_archive_reason_that_names_a_kind_records_that_kind(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Retrying flaky tests fixes them.", "learning")
    cli.ok("archive", memory_id, "--reason", "ineffective")

    assert support.entry(store, memory_id)["archive_reason"] == "ineffective"


def test_every_format_option_has_the_short_f() -> None:
    for path, command in terminal_support.commands():
        names = terminal_support.options(command)
        if "--format" in names:
            assert "-f" in names, path


def test_export_filters_with_by_agent_and_still_reads_the_old_spelling(cli: Cli) -> None:
    cli.ok("remember", "Architect prefers ADRs.", "-c", "fact", "--agent", "architect")
    cli.ok("remember", "Tester prefers table tests.", "-c", "fact", "--agent", "tester")
    new = cli.ok("export", "--by-agent", "architect", "-f", "markdown").stdout
    old = cli.ok("export", "--agent", "architect", "-f", "markdown").stdout

    assert new == old
    assert "ADRs" in new and "table tests" not in new
    assert "--by-agent" in cli.ok("export", "--help").stdout
    assert "--agent " not in cli.ok("export", "--help").stdout


def test_validate_takes_f_for_format(cli: Cli) -> None:
    assert cli.ok("validate", "-f", "json").json()["ok"] is True
