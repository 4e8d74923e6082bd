"""import and export: formats, round trips, and the all-or-nothing rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loa_mem.memory import rules as model
from tests import support
from tests.conftest import Cli, git

CLAUDE_MD = """\
# Project notes

Some prose that is not a memory.

## Decisions
- We deploy with blue-green releases
- Postgres is the only database
  because the team knows it well

## Code style
* Prefer small functions
  - under fifty lines
  - one job each

```sh
- not a bullet: inside a code block
```

## Gotchas
1. The test database must be reset before each run
"""


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def fill(cli: Cli) -> dict[str, str]:
    """Four entries: a fact, an archived decision, the fact that supersedes the first, and an
    error related to it; their ids by those names."""
    fact = support.remember(cli, "The API speaks JSON over HTTP", "fact", "-t", "api")
    decision = support.remember(cli, "Use SQLite for the index", "decision", "--confidence",
                                "0.95")
    newer = cli.ok("supersede", fact, "The API speaks JSON and msgpack", "-t", "api",
                   "--json").json()["id"]
    cli.ok("feedback", decision, "--success")
    error = support.remember(cli, "Flaky test: the clock mock leaks", "error", "--related", newer)
    cli.ok("archive", decision, "--reason", "manual")
    return {"fact": fact, "decision": decision, "newer": newer, "error": error}


def test_jsonl_round_trip_is_lossless(cli: Cli, tmp_path: Path) -> None:
    ids = fill(cli)
    exported = cli.ok("export").stdout
    assert len(exported.splitlines()) == 4
    other = tmp_path / "other"
    Cli(other).ok("init", "--root", str(other))
    target = Cli(other)
    (tmp_path / "all.jsonl").write_text(exported)
    before = head(other)
    result = target.ok("import", str(tmp_path / "all.jsonl"), "--json").json()
    assert result["imported"] == 4 and result["renumbered"] == {}
    assert sorted(result["ids"]) == sorted(ids.values())
    assert git(other, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert target.ok("export").stdout == exported
    assert target("validate").code == 0
    assert target.ok("show", ids["decision"], "--json").json()["state"] == "archived"


def test_a_second_import_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    fill(cli)
    dump = tmp_path / "all.jsonl"
    dump.write_text(cli.ok("export").stdout)
    outcome = cli("import", str(dump))
    assert outcome.code == 1
    assert "already in the store" in outcome.stderr


def test_ids_taken_in_the_target_are_renumbered_with_their_links(cli: Cli, tmp_path: Path
                                                                  ) -> None:
    ids = fill(cli)
    dump = tmp_path / "all.jsonl"
    dump.write_text(cli.ok("export").stdout)
    other = tmp_path / "other"
    target = Cli(other)
    target.ok("init", "--root", str(other))
    # Fresh ids no longer meet by chance: the target holds, written by hand, an entry that
    # already uses the id of the first fact of the dump.
    facts = other / support.MEMORY / "facts.yaml"
    facts.write_text(facts.read_text(encoding="utf-8") + (
        f"- id: {ids['fact']}\n  category: fact\n  content: Something else entirely\n"
        "  confidence: 0.8\n  source: {session_id: s, timestamp: 2026-02-01T09:00:00Z}\n"
        "  ttl: permanent\n  expires_at: null\n"), encoding="utf-8")
    git(other, "commit", "-q", "-m", "hand-written fact", "--", str(facts))
    result = target.ok("import", str(dump), "--json").json()
    assert list(result["renumbered"]) == [ids["fact"]]
    moved = support.assert_new_id(result["renumbered"][ids["fact"]])
    assert moved != ids["fact"]
    assert target.ok("show", ids["fact"], "--json").json()["entry"]["content"] == (
        "Something else entirely")
    chain = target.ok("show", moved, "--json").json()["chain"]
    assert chain == [moved, ids["newer"]]
    assert support.entry(other, ids["newer"])["supersedes"] == moved
    assert target("validate").code == 0


def test_legacy_ids_are_kept_on_import_and_new_entries_get_new_ones(cli: Cli, tmp_path: Path
                                                                     ) -> None:
    ids = fill(cli)
    legacy = {memory_id: f"MEM-20260201-{n:03d}" for n, memory_id in
              enumerate(sorted(ids.values(), key=model.id_order), start=1)}
    exported = cli.ok("export").stdout
    for memory_id, old in legacy.items():
        exported = exported.replace(memory_id, old)
    dump = tmp_path / "legacy.jsonl"
    dump.write_text(exported)
    other = tmp_path / "other"
    target = Cli(other)
    target.ok("init", "--root", str(other))
    result = target.ok("import", str(dump), "--json").json()
    assert result["renumbered"] == {}
    assert sorted(result["ids"]) == sorted(legacy.values())
    newer = legacy[ids["newer"]]
    assert target.ok("show", newer, "--json").json()["chain"] == [legacy[ids["fact"]], newer]
    added = support.assert_new_id(support.remember(target, "A fact after the import", "fact"))
    assert sorted(support.all_ids(other)) == sorted([*legacy.values(), added])
    assert target("validate").code == 0


@pytest.mark.parametrize("fmt", ["jsonl", "markdown"])
def test_one_bad_entry_refuses_the_whole_import(cli: Cli, tmp_path: Path, fmt: str) -> None:
    secret = "the deploy key is ghp_" + "a" * 36
    if fmt == "jsonl":
        cli.ok("remember", "A good fact", "-c", "fact")
        good = cli.ok("export").stdout
        bad = json.loads(good)
        bad.update(id="MEM-20260201-009", content=secret)
        text = good.replace("A good fact", "Another good fact") + json.dumps(bad) + "\n"
    else:
        text = f"## Facts\n- A good fact\n- {secret}\n- Another good fact\n"
    source = tmp_path / f"in.{'jsonl' if fmt == 'jsonl' else 'md'}"
    source.write_text(text)
    before = head(cli.root)
    outcome = cli("import", str(source))
    assert outcome.code == 1
    assert "GitHub token" in outcome.stderr and "ghp_" not in outcome.stderr
    assert head(cli.root) == before
    assert git(cli.root, "status", "--porcelain") == ""
    skipped = cli.ok("import", str(source), "--skip-invalid", "--json").json()
    assert skipped["imported"] == (1 if fmt == "jsonl" else 2)
    assert len(skipped["skipped"]) == 1


def test_claude_code_memory_files_become_entries(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "CLAUDE.md"
    source.write_text(CLAUDE_MD)
    result = cli.ok("import", str(source), "--json").json()
    assert result["format"] == "claude"
    found = {r["content"]: r for r in cli.ok("recall", "--limit", "20", "--json").json()[
        "results"]}
    assert set(found) == {
        "We deploy with blue-green releases",
        "Postgres is the only database because the team knows it well",
        "Prefer small functions; under fifty lines; one job each",
        "The test database must be reset before each run",
    }
    assert found["We deploy with blue-green releases"]["category"] == "decision"
    assert found["Prefer small functions; under fifty lines; one job each"][
        "category"] == "preference"
    assert found["The test database must be reset before each run"]["category"] == "error"
    assert "claude-code" in found["We deploy with blue-green releases"]["tags"]
    assert cli("validate").code == 0


def test_markdown_export_reads_back(cli: Cli, tmp_path: Path) -> None:
    fill(cli)
    markdown = cli.ok("export", "-f", "markdown").stdout
    assert "## Facts" in markdown and "## Errors" in markdown
    assert "## Decisions" not in markdown
    other = tmp_path / "other"
    target = Cli(other)
    target.ok("init", "--root", str(other))
    (tmp_path / "memories.md").write_text(markdown)
    target.ok("import", str(tmp_path / "memories.md"))
    results = target.ok("recall", "--json").json()["results"]
    assert sorted((r["category"], r["content"], r["tags"]) for r in results) == [
        ("error", "Flaky test: the clock mock leaks", []),
        ("fact", "The API speaks JSON and msgpack", ["api"]),
    ]


def test_many_entries_in_one_import_get_distinct_ids(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "many.md"
    source.write_text("## Learnings\n" + "".join(f"- Lesson number {n}\n" for n in range(250)))
    result = cli.ok("import", str(source), "--json").json()
    assert len(set(result["ids"])) == 250
    for memory_id in result["ids"]:
        support.assert_new_id(memory_id)
    assert sorted(support.all_ids(cli.root)) == sorted(result["ids"])
    assert cli("validate").code == 0


def test_export_to_a_file(cli: Cli, tmp_path: Path) -> None:
    fill(cli)
    target = tmp_path / "MEMORY.md"
    result = cli.ok("export", "-f", "claude", "-o", str(target), "--json").json()
    assert result["count"] == 2
    assert target.read_text().startswith("# Project memory\n")
