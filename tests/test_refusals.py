"""Refused at the door (spec section 2): exit 1, one line on stderr, nothing written, no commit.
Secrets and personal data are named by kind and never echoed. Ordinary technical text that
merely looks like numbers or keys (shas, dates, ids, versions) is not refused."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli


@contextmanager
def nothing_written(root: Path) -> Iterator[None]:
    before, commits = support.snapshot(root), support.commit_count(root)
    yield
    assert support.snapshot(root) == before
    assert support.commit_count(root) == commits


def refuse(cli: Cli, root: Path, *args: str) -> str:
    with nothing_written(root):
        return support.one_line_error(cli(*args))


@pytest.mark.parametrize("content", ["", "   ", "\n\t\n", "x" * 2001],
                         ids=["empty", "spaces", "blank-lines", "2001-chars"])
def test_empty_or_oversize_content(cli: Cli, store: Path, content: str) -> None:
    message = refuse(cli, store, "remember", content, "-c", "fact")

    assert "content" in message


def test_content_of_exactly_2000_characters_is_accepted(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "y" * 2000, "fact")

    assert len(support.entry(store, memory_id)["content"]) == 2000


@pytest.mark.parametrize("category", ["facts", "Fact", "note", ""])
def test_unknown_category(cli: Cli, store: Path, category: str) -> None:
    message = refuse(cli, store, "remember", "Something true.", "-c", category)

    assert "category" in message
    assert "fact, decision, learning, error, preference" in message


@pytest.mark.parametrize(("category", "confidence", "floor"), [
    ("fact", "0.79", "0.8"), ("decision", "0.89", "0.9"), ("learning", "0.69", "0.7"),
    ("error", "0.59", "0.6"), ("preference", "0.49", "0.5")])
def test_confidence_under_the_category_floor(cli: Cli, store: Path, category: str,
                                             confidence: str, floor: str) -> None:
    message = refuse(cli, store, "remember", "Something worth keeping.", "-c", category,
                     "--confidence", confidence)

    assert f"floor of {floor}" in message


@pytest.mark.parametrize("confidence", ["1.01", "-0.1", "nan"])
def test_confidence_outside_zero_to_one(cli: Cli, store: Path, confidence: str) -> None:
    refuse(cli, store, "remember", "Something worth keeping.", "-c", "preference",
           "--confidence", confidence)


@pytest.mark.parametrize("tag", ["Database", "two words", "snake_case", "trailing-", "-leading",
                                 "double--dash", "ümlaut", "dot.ted", ""])
def test_bad_tags(cli: Cli, store: Path, tag: str) -> None:
    message = refuse(cli, store, "remember", "Something true.", "-c", "fact", "-t", "ok", "-t", tag)

    assert "kebab-case" in message


def test_a_bad_tag_gets_a_suggestion(cli: Cli, store: Path) -> None:
    message = refuse(cli, store, "remember", "Something true.", "-c", "fact", "-t", "Data Base")

    assert "'data-base'" in message


# name: (content, the kind the message names, the part it must never repeat)
SECRETS = {
    "aws-access-key": ("Deploy used AKIAQ7ZK2M4N6P8R3T5V yesterday", "AWS access key",
                       "AKIAQ7ZK2M4N6P8R3T5V"),
    "github-token": ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI", "GitHub token",
                     "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    "github-pat": ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "GitHub token",
                   "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    "gitlab-token": ("use glpat-abcdefghij0123456789 in the runner", "GitLab token",
                     "glpat-abcdefghij0123456789"),
    "slack-token": ("bot xoxb-123456789012-abcdefghijkl works", "Slack token",
                    "xoxb-123456789012-abcdefghijkl"),
    "stripe-key": ("stripe sk_live_abcdefghijklmnop12345678 is live", "Stripe key",
                   "sk_live_abcdefghijklmnop1234"),
    "google-api-key": ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key",
                       "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    "openai-key": ("the key sk-proj-abcdefghijklmnopqrstuvwx works", "API key",
                   "sk-proj-abcdefghijklmnopqrstuvwx"),
    "anthropic-key": ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "API key",
                      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"),
    "jwt": ("session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "JSON web token", "eyJhbGciOiJIUzI1NiJ9"),
    "bearer": ("send Authorization: Bearer abcdef0123456789abcdef0123", "bearer token",
               "abcdef0123456789abcdef0123"),
    "url-password": ("connect to postgres://admin:s3cr3tpass@db.internal/app", "password",
                     "s3cr3tpass"),
    "password-assignment": ("the staging password: hunter22", "password",
                            "hunter22"),
    "password-sentence": ("the staging password is hunter22", "password",
                          "hunter22"),
    "api-key-assignment": ("API_KEY=abcd1234efgh for the sandbox", "secret",
                           "abcd1234efgh"),
    "private-key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n", "private key",
                    "MIIEpAIBAAKCAQEA"),
    "openssh-key": ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key",
                    "-----BEGIN OPENSSH"),
    "email": ("ask jane.doe@example.com about the billing job", "e-mail address",
              "jane.doe@example.com"),
    "phone-us": ("the on-call phone is 415-555-0132", "phone number",
                 "415-555-0132"),
    "phone-parens": ("call (415) 555-0132 after six", "phone number",
                     "555-0132"),
    "phone-international": ("the office is +44 20 7946 0958", "phone number",
                            "7946 0958"),
    "card-visa-test": ("paid with 4111 1111 1111 1111 in staging", "card number",
                       "4111 1111"),
    "card-stripe-test": ("use 4242-4242-4242-4242 for the checkout test", "card number",
                         "4242-4242"),
    "card-mastercard": ("card 5555555555554444 was declined", "card number",
                        "5555555555554444"),
    "card-amex": ("amex 378282246310005 on file", "card number",
                  "378282246310005"),
}
SECRET_IDS = list(SECRETS)


@pytest.mark.parametrize("name", SECRET_IDS)
def test_secrets_and_personal_data_in_content(cli: Cli, store: Path, name: str) -> None:
    content, kind, secret = SECRETS[name]
    message = refuse(cli, store, "remember", "-c", "fact", "--", content)

    assert kind in message
    assert secret not in message


@pytest.mark.parametrize("name", ["aws-access-key", "email", "card-visa-test", "password-sentence"])
def test_secrets_are_refused_from_stdin_too(cli: Cli, store: Path, name: str) -> None:
    content, kind, _ = SECRETS[name]
    with nothing_written(store):
        message = support.one_line_error(cli("remember", "-", "-c", "fact", stdin=content + "\n"))

    assert kind in message


@pytest.mark.parametrize("where", [("--summary",), ("--session",), ("--file",), ("--phase",)])
def test_secrets_in_other_fields(cli: Cli, store: Path, where: tuple[str]) -> None:
    message = refuse(cli, store, "remember", "An ordinary fact.", "-c", "fact", *where,
                     "mail jane.doe@example.com")

    assert "e-mail address" in message
    assert "jane.doe" not in message


def test_a_secret_in_the_new_content_of_supersede(cli: Cli, store: Path) -> None:
    old = support.remember(cli, "The staging database is on db1.", "fact")
    message = refuse(cli, store, "supersede", old, "It is on postgres://app:pw12345@db2/app")

    assert "password" in message
    assert "pw12345" not in message


def test_a_secret_in_a_forget_reason(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "The staging database is on db1.", "fact")
    message = refuse(cli, store, "forget", memory_id, "--reason", "ask bob@example.com")

    assert "bob@" not in message


FALSE_POSITIVES = [
    "Fixed in commit 3a41611c0ffee4b8d1b2e1f0c9a8b7c6d5e4f3a2 (short 3a41611).",
    "Released on 2026-02-01 at 2026-02-01T10:30:00Z.",
    "Builds on MEM-20260201-001 and MEM-20251231-1042.",
    "Needs Python 3.11.4, Node v20.10.0 and chart 2.0.0-rc.1.",
    "PostgreSQL listens on localhost:5432 and 10.0.0.12:5432.",
    "Request id 550e8400-e29b-41d4-a716-446655440000 in the logs.",
    "Rate limiting uses a token bucket of 100 tokens.",
    "Reset the password through the admin panel, never by SQL.",
    "Set password: <from the vault> in the template.",
    "Order numbers like 1234567890123456 are not card numbers.",
    "The epoch 1767225600 is 2026-01-01.",
    "See lines 120-134 of app/settings.py and PR #1234.",
    "The sha256 digest is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
    "Timeout is 30000 ms; HTTP 429 means back off.",
]


@pytest.mark.parametrize("content", FALSE_POSITIVES, ids=range(len(FALSE_POSITIVES)))
def test_ordinary_technical_text_is_not_refused(cli: Cli, store: Path, content: str) -> None:
    memory_id = support.remember(cli, content, "fact")

    assert support.entry(store, memory_id)["content"] == content


def test_summary_over_200_characters(cli: Cli, store: Path) -> None:
    message = refuse(cli, store, "remember", "Short content.", "-c", "fact", "--summary", "s" * 201)

    assert "200" in message


def test_a_summary_of_exactly_200_characters_is_accepted(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Short content.", "fact", "--summary", "s" * 200)

    assert support.entry(store, memory_id)["summary"] == "s" * 200


def test_a_derived_summary_is_cut_to_200_characters(cli: Cli, store: Path) -> None:
    long_sentence = "word " * 300
    memory_id = support.remember(cli, long_sentence.strip() + ".", "fact")

    summary = support.entry(store, memory_id)["summary"]
    assert len(summary) <= 200
    assert summary.startswith("word word")


@pytest.mark.parametrize("ttl", ["0d", "30D", "1w", "-5d", "forever", "100000d", "d"])
def test_bad_ttl(cli: Cli, store: Path, ttl: str) -> None:
    message = refuse(cli, store, "remember", "Something learned.", "-c", "learning", "--ttl", ttl)

    assert "ttl" in message


@pytest.mark.parametrize("lines", ["a-b", "0-3", "10:20"])
def test_bad_line_range(cli: Cli, store: Path, lines: str) -> None:
    refuse(cli, store, "remember", "Something true.", "-c", "fact", "--file", "app.py",
           "--lines", lines)


def test_related_memory_must_exist(cli: Cli, store: Path) -> None:
    message = refuse(cli, store, "remember", "Something true.", "-c", "fact",
                     "--related", "MEM-20250101-001")

    assert "MEM-20250101-001" in message


def test_forget_needs_a_reason(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Something true.", "fact")
    refuse(cli, store, "forget", memory_id, "--reason", "  ")


def test_an_archive_reason_holding_a_secret_is_refused(cli: Cli, store: Path) -> None:
    """--reason takes free words (tests/test_flags.py), screened like every stored text."""
    memory_id = support.remember(cli, "Something true.", "fact")
    message = refuse(cli, store, "archive", memory_id, "--reason",
                     "rotated key AKIAQ7ZK2M4N6P8R3T5V")

    assert "the reason" in message and "AKIA" not in message


BROKEN = {
    "unterminated-quote": ('- id: MEM-20260101-001\n  content: "unterminated\n  tags: [a\n', 6, 1),
    "unclosed-flow": ("- id: MEM-20260101-001\n  content: [1, 2\n", 5, 1),
    "bad-indent": ("- id: MEM-20260101-001\n  content: a\n    confidence: 0.9\n", 5, 15),
    "tab-indent": ("- id: MEM-20260101-001\n\tcontent: a\n", 4, 1),
    "not-a-list": ("id: MEM-20260101-001\n", 3, 1),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_grimoire_that_does_not_parse_stops_every_write(cli: Cli, store: Path,
                                                          name: str) -> None:
    text, line, column = BROKEN[name]
    facts = support.grimoire(store, "fact")
    facts.write_text(facts.read_text(encoding="utf-8") + text, encoding="utf-8")
    message = refuse(cli, store, "remember", "A new fact.", "-c", "fact")

    assert f"{support.MEMORY}/facts.yaml:{line}:{column}" in message


def test_a_broken_grimoire_is_reported_by_read_commands_too(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "A fact before the damage.", "fact")
    facts = support.grimoire(store, "fact")
    facts.write_text(facts.read_text(encoding="utf-8") + "- id: [oops\n", encoding="utf-8")

    for args in (("recall",), ("status",), ("show", memory_id)):
        message = refuse(cli, store, *args)
        assert "facts.yaml:" in message, args


def test_a_refusal_does_not_mint_an_id(cli: Cli, store: Path) -> None:
    events = len(support.events(store))
    refuse(cli, store, "remember", "mail jane.doe@example.com", "-c", "fact")

    assert support.all_ids(store) == []
    assert len(support.events(store)) == events
    memory_id = support.assert_new_id(support.remember(cli, "A clean fact.", "fact"))
    assert support.all_ids(store) == [memory_id]
    assert [e["ids"] for e in support.events(store)[events:]] == [[memory_id]]
