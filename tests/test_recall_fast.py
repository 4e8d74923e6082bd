"""`loa-mem recall` answered before typer is imported: the same output as the Typer command.

Each check runs loa-mem as a real process: the fast path lives in the process entry point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, run_loa_mem

_TYPER = "import sys; from loa_mem.cli.app import run; sys.exit(run(sys.argv[1:]))"


def through_typer(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The same command line through the Typer application, never the fast path."""
    return subprocess.run([sys.executable, "-c", _TYPER, "recall", *args], cwd=root,
                          capture_output=True, text=True, check=False)


@pytest.fixture
def memories(cli: Cli) -> dict[str, str]:
    return {
        "pg": support.remember(cli, "Use PostgreSQL for the database layer.", "decision",
                               "--confidence", "0.95", "-t", "database"),
        "ci": support.remember(cli, "The CI runs on two cores; keep the suite under 15 minutes.",
                               "fact", "-t", "ci"),
        "flaky": support.remember(cli, "Flaky database tests came from a shared temp folder.",
                                  "error", "--confidence", "0.7", "-t", "database", "-t", "ci"),
        "old": support.remember(cli, "The database once ran on MySQL.", "fact",
                                now="2025-06-01T10:30:00Z"),
    }


INVOCATIONS = [
    (), ("database",), ("database", "--json"), ("postgres", "--explain"),
    ("database", "--explain", "--json"), ("-c", "decision"), ("--category=fact", "--json"),
    ("-t", "database", "--limit", "1"), ("database", "--tag=ci", "-c", "error", "-c", "fact"),
    ("no such words anywhere",), ("--limit", "2", "database"),
    # not for the fast path: the Typer command answers, with its own messages
    ("--limit", "0"), ("-c", "nonsense"), ("--tag",), ("a", "b"), ("--bogus",),
    ("--min-confidence", "0.9", "--json"), ("--help",), ("database", "--mode", "lexical"),
    ("-", "--json"), ("--limit", "1000000", "database"), ("--limit", "99999999999999999999"),
]


@pytest.mark.parametrize("args", INVOCATIONS, ids=lambda a: " ".join(a) or "(no query)")
def test_the_fast_path_prints_what_the_typer_command_prints(
        store: Path, memories: dict[str, str], args: tuple[str, ...]) -> None:
    run_loa_mem(store, "recall")  # the index is fresh from here on
    fast = run_loa_mem(store, "recall", *args)
    slow = through_typer(store, *args)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode, slow.stdout, slow.stderr)


def test_results_are_the_expected_memories(store: Path, memories: dict[str, str]) -> None:
    run_loa_mem(store, "recall")
    done = run_loa_mem(store, "recall", "database", "-t", "database", "--json")
    found = [r["id"] for r in json.loads(done.stdout)["results"]]
    assert sorted(found) == sorted([memories["pg"], memories["flaky"]])


def test_recall_imports_no_heavy_library_while_the_index_is_fresh(
        store: Path, memories: dict[str, str]) -> None:
    run_loa_mem(store, "recall")
    done = run_loa_mem(store, "recall", "database", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loa_mem.cli.fast_recall" in imported
    assert not {name.split(".")[0] for name in imported} & {
        "typer", "click", "rich", "yaml", "ruamel", "git", "jsonschema"}
    assert not imported & {"loa_mem.memory.store", "loa_mem.cli.app", "loa_mem.core.yamlio",
                           "loa_mem.core.yamlfast", "loa_mem.memory.indexrows"}  # the reader


def test_an_entry_added_outside_loa_mem_is_found_at_once(
        store: Path, memories: dict[str, str]) -> None:
    run_loa_mem(store, "recall")
    decisions = support.grimoire(store, "decision")
    with decisions.open("a", encoding="utf-8") as handle:
        handle.write("- id: MEM-20260130-handedit\n  category: decision\n"
                     "  content: Deploy the database with blue-green switches.\n"
                     "  confidence: 0.95\n  source:\n    session_id: editor\n"
                     "    timestamp: 2026-01-30T10:00:00Z\n  ttl: permanent\n"
                     "  expires_at: null\n  tags: []\n")
    first = run_loa_mem(store, "recall", "blue-green", "--json")
    again = run_loa_mem(store, "recall", "blue-green", "--json")
    assert [r["id"] for r in json.loads(first.stdout)["results"]] == ["MEM-20260130-handedit"]
    assert again.stdout == first.stdout == through_typer(store, "blue-green", "--json").stdout


def test_outside_a_repository_the_error_is_the_typer_commands(tmp_path: Path) -> None:
    fast = run_loa_mem(tmp_path, "recall", "database")
    slow = through_typer(tmp_path, "database")
    assert fast.returncode == slow.returncode == 1
    assert fast.stderr == slow.stderr and fast.stdout == ""


def test_a_limit_past_any_store_is_refused_in_one_line(store: Path) -> None:
    from loa_mem.cli import fast_recall
    from loa_mem.memory.commands.read import MAX_LIMIT

    assert fast_recall._MAX_LIMIT == MAX_LIMIT
    for extra in ((), ("--track",), ("--json",)):
        done = run_loa_mem(store, "recall", "database", "--limit", "99999999999999999999", *extra)
        assert done.returncode == 2, done.stderr
        assert "invalid value for --limit: limit must be at most 1,000,000" in done.stderr
        assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
