"""Every config key has an effect or is refused: the README's table names each key of
`config.schema.json`, an unknown key is an error naming it and the file, and
`memory_schema.enabled: false` switches the Loa memory commands off with a message naming the key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from loa_mem.core import schemas
from tests import support
from tests.conftest import Cli, run_loa_mem

CONFIG = ".loa.config.yaml"
README = Path(__file__).resolve().parents[1] / "README.md"


def _schema_keys(node: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, child in (node.get("properties") or {}).items():
        dotted = f"{prefix}{name}"
        if dotted == "memory_schema.categories":
            [kind] = {tuple(c["properties"]) for c in child["properties"].values()}
            keys |= {f"{dotted}.<category>.{name}" for name in kind}
        elif child.get("properties"):
            keys |= _schema_keys(child, f"{dotted}.")
        else:
            keys.add(dotted)
    return keys


def _readme_keys() -> set[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Configuration"):text.index("### Environment variables")]
    return set(re.findall(r"^\| `([a-z_<>.]+)` \|", section, flags=re.MULTILINE))


def _switch_off(store: Path, key: str = "enabled: true", value: str = "enabled: false") -> None:
    path = store / CONFIG
    text = path.read_text(encoding="utf-8")
    assert key in text
    path.write_text(text.replace(key, value, 1), encoding="utf-8")


def test_the_readme_configuration_table_lists_every_key_of_the_schema() -> None:
    schema = json.loads(schemas.text("config.schema.json"))
    in_schema, in_readme = _schema_keys(schema), _readme_keys()

    assert in_schema - in_readme == set(), "keys without a row in the README"
    assert in_readme - in_schema == set(), "README rows for keys the schema does not know"


@pytest.mark.parametrize(("old", "new", "named", "unknown"), [
    ("auto_capture: {decisions: true,", "auto_capture: {decision: true,",
     "memory_schema.auto_capture.decision", "decision"),
    ("memory_schema:\n", "memory_schema:\n  enable: true\n", "memory_schema.enable", "enable"),
    ("memory_schema:\n", "captures: {}\nmemory_schema:\n", "captures", "captures"),
])
def test_an_unknown_key_is_refused_naming_the_key_and_the_file(
        cli: Cli, store: Path, old: str, new: str, named: str, unknown: str) -> None:
    _switch_off(store, old, new)
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli("remember", "A fact.", "-c", "fact")

    assert outcome.code == 1
    [line] = outcome.stderr.strip().splitlines()
    assert f"{CONFIG}: {named}: unknown key '{unknown}'" in line
    assert (support.snapshot(store), support.commit_count(store)) == (before, commits)


@pytest.mark.parametrize("args", [
    ("remember", "Another fact.", "-c", "fact"),
    ("recall",),
    ("show", "{id}"),
    ("supersede", "{id}", "A newer fact."),
    ("forget", "{id}", "--reason", "obsolete"),
    ("archive", "{id}"),
    ("history", "{id}"),
    ("feedback", "{id}", "--success"),
    ("restore", "{id}"),
    ("export", "-f", "markdown"),
    ("capture", "decisions"),
    ("oracle", "query", "build"),
])
def test_memory_commands_refuse_when_memory_is_switched_off(cli: Cli, store: Path,
                                                            args: tuple[str, ...]) -> None:
    memory_id = support.remember(cli, "A fact about the build.", "fact")
    _switch_off(store)
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli(*(a.replace("{id}", memory_id) for a in args))

    assert outcome.code == 1
    assert outcome.stderr.startswith("loa-mem: switched-off: ")
    assert "memory_schema.enabled: false" in outcome.stderr
    assert "set memory_schema.enabled: true" in outcome.stderr
    assert (support.snapshot(store), support.commit_count(store)) == (before, commits)


def test_agents_and_the_working_set_keep_working_when_memory_is_switched_off(
        cli: Cli, store: Path) -> None:
    _switch_off(store)
    cli.ok("agent", "remember", "architect", "Prefers REST over GraphQL", "--type", "preference")
    (store / "notes.md").write_text("notes\n", encoding="utf-8")
    cli.ok("advise", "--hot", "notes.md", "--why", "being edited")


def test_status_validate_and_context_say_memory_is_switched_off(cli: Cli, store: Path) -> None:
    support.remember(cli, "A fact about the build.", "fact")
    _switch_off(store)

    status = cli.ok("status")
    assert "Loa memory is switched off (memory_schema.enabled: false)" in status.stdout
    assert cli.ok("status", "--json").json()["enabled"] is False
    report = cli.ok("validate", "--json").json()
    assert report["ok"] is True
    [warning] = report["problems"]
    assert (warning["path"], warning["line"], warning["rule"], warning["severity"]) == (
        CONFIG, 4, "switched-off", "warning")
    block = run_loa_mem(store, "context")
    assert block.returncode == 0
    assert "Loa memory is switched off" in block.stdout
    assert "A fact about the build" not in block.stdout


def test_gc_leaves_entries_alone_when_memory_is_switched_off(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "A short-lived error and its fix.", "error")
    _switch_off(store)
    cli.ok("gc", now="2027-01-01T00:00:00Z")

    assert support.entry(store, memory_id).get("archived") is None
    assert [e["id"] for e in support.entries(store, "error")] == [memory_id]


def test_status_reports_the_auto_capture_state(cli: Cli, store: Path) -> None:
    assert cli.ok("status", "--json").json()["auto_capture"] == {
        "decisions": True, "errors": True, "learnings": True}
    _switch_off(store, "errors: true", "errors: false")

    assert "auto-capture: decisions on, errors off, learnings on" in cli.ok("status").stdout


def test_recall_as_a_process_refuses_when_memory_is_switched_off(cli: Cli, store: Path) -> None:
    support.remember(cli, "A fact about the build.", "fact")
    assert run_loa_mem(store, "recall").returncode == 0  # the caches are fresh now
    _switch_off(store)
    assert run_loa_mem(store, "status").returncode == 0  # the config cache is fresh again
    done = run_loa_mem(store, "recall", "build")

    assert done.returncode == 1
    assert "switched-off" in done.stderr
    assert "A fact about the build" not in done.stdout


def test_gc_forgets_archived_entries_after_the_retention_period(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Use the staging proxy for partner calls.", "fact")
    cli.ok("archive", memory_id, now="2026-02-10T00:00:00Z")
    _switch_off(store, "warn_before_archive_days: 7",
                "warn_before_archive_days: 7\n    archive_retention_days: 30")

    cli.ok("gc", now="2026-03-01T00:00:00Z")  # archived 19 days ago: kept
    assert [e["id"] for e in support.entries(store, "fact", archive=True)] == [memory_id]
    report = cli.ok("gc", "--json", now="2026-03-15T00:00:00Z").json()
    forgotten = [a for a in report["gc_report"]["actions"] if a.get("id") == memory_id]
    assert [a["action"] for a in forgotten] == ["forgotten"]
    assert support.entries(store, "fact", archive=True) == []
    event = support.events(store)[-2]
    assert (event["op"], event["ids"]) == ("forget", [memory_id])
    assert "archive_retention_days" in event["reason"]
    cli.ok("restore", memory_id)
    assert [e["id"] for e in support.entries(store, "fact", archive=True)] == [memory_id]


def test_without_a_retention_period_archives_are_kept(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Use the staging proxy for partner calls.", "fact")
    cli.ok("archive", memory_id)
    cli.ok("gc", now="2036-01-01T00:00:00Z")

    assert [e["id"] for e in support.entries(store, "fact", archive=True)] == [memory_id]


def test_mcp_memory_tools_refuse_when_memory_is_switched_off(store: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import _error, _text, run_session

    _switch_off(store)

    async def script(session: object, call: Any) -> Any:
        return await call("remember", content="A fact.", category="fact")

    refused = run_session(store, script)
    assert _error(refused)
    assert "switched-off: Loa memory is switched off" in _text(refused)
