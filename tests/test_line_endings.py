"""A grimoire with Windows line endings stays one: lines loa-mem adds or rewrites follow the
file's own ending, and what it commits is what `git add` would commit (with core.autocrlf or an
eol attribute, the working file has CRLF and the blob LF)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git

FACTS = f"{support.MEMORY}/facts.yaml"
EVENTS = f"{support.MEMORY}/events.jsonl"
HAND_ENTRY = ("- id: MEM-20260101-001\r\n  category: fact\r\n  content: Written by hand.\r\n"
              "  confidence: 0.9\r\n  source: {session_id: s, timestamp: '2026-01-01T00:00:00Z'}"
              "\r\n  ttl: permanent\r\n  expires_at:\r\n  tags: []\r\n")


def _crlf_only(data: bytes) -> bool:
    """Every line ends with CRLF (and there is at least one line)."""
    return data.count(b"\n") > 0 and data.count(b"\n") == data.count(b"\r\n")


def _committed(store: Path, path: str = FACTS) -> bytes:
    """The blob as git stores it (`git` in conftest reads text mode, which turns CRLF to LF)."""
    return subprocess.run(["git", "cat-file", "blob", f"HEAD:{path}"], cwd=store, check=True,
                          capture_output=True).stdout


def _work_with_every_edit(cli: Cli) -> list[str]:
    """remember, supersede (an edit and an append), feedback (an edit), forget (a removal)
    and archive (a move between files); the ids left in the working files."""
    first = support.remember(cli, "The API speaks GraphQL.")
    second = support.remember(cli, "Deploys happen on Tuesdays.")
    third = support.remember(cli, "The cache is Redis 7.")
    newer = cli.ok("supersede", first, "The API speaks REST.", "--json").json()["id"]
    cli.ok("feedback", second, "--success")
    cli.ok("forget", third, "--reason", "wrong")
    cli.ok("archive", first, "--reason", "old")
    return [second, newer]


def test_a_file_saved_with_crlf_keeps_crlf_through_every_edit(cli: Cli, store: Path) -> None:
    facts = store / FACTS
    facts.write_bytes(facts.read_bytes().replace(b"\n", b"\r\n"))
    git(store, "commit", "-qam", "saved on Windows")

    kept = _work_with_every_edit(cli)

    on_disk = facts.read_bytes()
    assert _crlf_only(on_disk)
    assert _committed(store) == on_disk  # no conversion configured: the bytes as they are
    assert support.porcelain(store) == ""
    cli.ok("validate")
    assert {e["id"] for e in support.entries(store, "fact")} == set(kept)
    assert cli.ok("recall", "Tuesdays", "--json").json()["results"][0]["id"] == kept[0]


def _checked_out_with_crlf(store: Path, how: str) -> None:
    """The store as a checkout that converts line endings (`how`) leaves it: CRLF on disk."""
    if how == "autocrlf":
        git(store, "config", "core.autocrlf", "true")
    else:
        (store / ".gitattributes").write_text(
            (store / ".gitattributes").read_text() + "*.yaml text eol=crlf\n")
        git(store, "commit", "-qam", "yaml files with CRLF in the working tree")
    for path in git(store, "ls-files", "*.yaml", "*.jsonl").split():
        (store / path).unlink()
    git(store, "checkout", "--", ".")
    assert _crlf_only((store / FACTS).read_bytes())


@pytest.mark.parametrize("how", ["autocrlf", "eol attribute"])
def test_a_converting_checkout_commits_lf_and_keeps_crlf_on_disk(cli: Cli, store: Path,
                                                                 how: str) -> None:
    _checked_out_with_crlf(store, how)

    kept = _work_with_every_edit(cli)

    assert _crlf_only((store / FACTS).read_bytes())
    events = (store / EVENTS).read_bytes()  # CRLF with autocrlf; LF where only *.yaml convert
    assert _crlf_only(events) if how == "autocrlf" else b"\r" not in events
    for path in (FACTS, f"{support.ARCHIVE}/facts.yaml", EVENTS):
        assert b"\r" not in _committed(store, path), path
    assert support.porcelain(store) == ""  # git sees the files as committed
    cli.ok("validate")
    assert {e["id"] for e in support.entries(store, "fact")} == set(kept)


@pytest.mark.parametrize("how", ["autocrlf", "eol attribute"])
def test_a_hand_edit_in_a_converted_file_stays_uncommitted(cli: Cli, store: Path,
                                                            how: str) -> None:
    _checked_out_with_crlf(store, how)
    existing = support.remember(cli, "The API speaks GraphQL.")
    facts = store / FACTS
    facts.write_bytes(facts.read_bytes() + HAND_ENTRY.encode())

    added = support.remember(cli, "Deploys happen on Tuesdays.")
    cli.ok("feedback", existing, "--success")

    committed = _committed(store)
    assert b"\r" not in committed
    assert added.encode() in committed and b"Written by hand." not in committed
    assert b"effectiveness" in committed
    on_disk = facts.read_bytes()
    assert _crlf_only(on_disk)
    assert added.encode() in on_disk and b"Written by hand." in on_disk
    assert "Written by hand." in git(store, "diff", "--", FACTS)
    assert git(store, "diff", "--cached") == ""
