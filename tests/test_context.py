"""`loa-mem context`: the session-start block, its budget, and its freshness.

Most checks run loa-mem as a real process, because the hook's fast path lives in the process
entry point (before typer); the in-process CLI must print the same block.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from loa_mem.core import cachefile, clock, tokens
from tests import support
from tests.conftest import FIXED_NOW, Cli, run_loa_mem


def context(root: Path, *args: str) -> str:
    done = run_loa_mem(root, "context", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def mixed(cli: Cli) -> dict[str, str]:
    """Entries whose scores are easy to compute by hand at FIXED_NOW (w = 0.2):
    score = 0.8 * confidence + 0.2 * 0.5 ** (age_days / 30)."""
    ids = {
        "d1": support.remember(cli, "Use PostgreSQL for the main store.", "decision",
                               "--confidence", "0.95", "-t", "database"),  # .76 + .2 = .96
        "d2": support.remember(cli, "Keep the API versioned under /v1.", "decision",
                               "--confidence", "0.9", now="2026-01-02T10:30:00Z"),  # .72+.1
        "f1": support.remember(cli, "The CI runs on two cores.", "fact"),  # .64 + .2 = .84
        # 25 days old with a 30-day ttl: expires 2026-02-06T10:30:00Z, inside the 7-day warning
        "e1": support.remember(cli, "Flaky parser test when run in parallel.", "error",
                               "--confidence", "0.7", now="2026-01-07T10:30:00Z"),
        "e2": support.remember(cli, "An old error, expired on 2025-12-31.", "error",
                               now="2025-12-01T10:30:00Z"),
        "l1": support.remember(cli, "Batch SQLite inserts in one transaction.", "learning"),
    }
    return ids


def test_block_lists_warnings_and_top_memories_by_category(store: Path,
                                                           mixed: dict[str, str]) -> None:
    assert context(store) == (
        "# Project memory (loa-mem)\n"
        f"{FIXED_NOW} · 5 active memories · showing the most relevant; "
        "`loa-mem recall QUERY` finds more.\n"
        "\n## Expiring soon\n"
        f"- {mixed['e1']} expires 2026-02-06T10:30:00Z: Flaky parser test when run in parallel.\n"
        "- 1 expired entry waits for `loa-mem archive --expired`\n"
        "\n## Memories\n"
        "\n### Facts\n"
        f"- {mixed['f1']}: The CI runs on two cores. (0.8)\n"
        "\n### Decisions\n"
        f"- {mixed['d1']}: Use PostgreSQL for the main store. (0.95; database)\n"
        f"- {mixed['d2']}: Keep the API versioned under /v1. (0.9)\n"
        "\n### Learnings\n"
        f"- {mixed['l1']}: Batch SQLite inserts in one transaction. (0.8)\n"
        "\n### Errors\n"
        f"- {mixed['e1']}: Flaky parser test when run in parallel. (0.7)\n")


def test_fast_and_slow_paths_and_the_in_process_cli_print_the_same(
        cli: Cli, store: Path, mixed: dict[str, str]) -> None:
    first = context(store)  # builds the side cache (slow path)
    again = context(store)  # reads the caches as they are (fast path)
    assert first == again == cli.ok("context").stdout


def test_the_hook_imports_no_heavy_library_while_the_caches_are_fresh(
        store: Path, mixed: dict[str, str]) -> None:
    context(store)
    done = run_loa_mem(store, "context", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loa_mem" in imported
    assert not imported & {"typer", "click", "rich", "yaml", "ruamel", "git", "jsonschema",
                           "dataclasses", "argparse"}


def test_budget_cuts_the_lowest_scores_and_says_so(store: Path, mixed: dict[str, str]) -> None:
    text = context(store, "--budget", "150")
    assert tokens.estimate(text) <= 150
    assert mixed["d1"] in text and mixed["e1"] in text  # the expiry warning outranks memories
    assert mixed["e2"] not in text
    cut_line = text.splitlines()[-1]
    assert cut_line.startswith("_Cut to fit 150 tokens: left out ")
    kept = sum(1 for line in text.splitlines() if line.startswith("- MEM-") and ": " in line
               and "expires" not in line)
    assert f"left out {5 - kept} memories" in cut_line


@pytest.mark.parametrize("budget", ["99", "0", "many"])
def test_a_budget_under_the_floor_is_a_usage_error(store: Path, budget: str) -> None:
    done = run_loa_mem(store, "context", "--budget", budget)
    assert done.returncode == 2
    assert "--budget" in done.stderr and done.stdout == ""


def test_query_ranks_by_relevance(store: Path, mixed: dict[str, str]) -> None:
    data = json.loads(context(store, "--query", "sqlite transaction", "--format", "json"))
    memories = [i for s in data["sections"] if s["name"].startswith("memories:")
                for i in s["items"]]
    assert memories[0]["id"] == mixed["l1"]
    assert "about 'sqlite transaction'" in data["text"]


def test_json_shape(store: Path, mixed: dict[str, str]) -> None:
    data = json.loads(context(store, "--json"))
    assert set(data) == {"root", "budget_tokens", "tokens", "sections", "cut", "text", "warnings"}
    assert data["budget_tokens"] == 2000 and data["cut"] == {}
    assert data["tokens"] == tokens.estimate(data["text"])
    assert [s["name"] for s in data["sections"]] == [
        "expiring", "memories:fact", "memories:decision", "memories:learning", "memories:error"]
    assert data["sections"][2]["items"][0] == {
        "id": mixed["d1"], "category": "decision", "summary": "Use PostgreSQL for the main store.",
        "confidence": 0.95, "score": 0.96, "tags": ["database"]}


def test_warnings_follow_check_on_session_start(store: Path, mixed: dict[str, str]) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "check_on_session_start: true", "check_on_session_start: false"), encoding="utf-8")
    assert "Expiring soon" not in context(store)


def test_a_hand_edit_of_a_grimoire_file_shows_at_once(store: Path, mixed: dict[str, str]) -> None:
    context(store)
    with open(support.grimoire(store, "fact"), "a", encoding="utf-8") as handle:
        handle.write("- id: MEM-20260201-900\n  category: fact\n  content: Written by hand.\n"
                     "  summary: Written by hand.\n  confidence: 0.99\n  source:\n"
                     "    session_id: manual\n    timestamp: 2026-02-01T10:00:00Z\n"
                     "  ttl: permanent\n  expires_at: null\n  tags: []\n")
    assert "- MEM-20260201-900: Written by hand. (0.99)" in context(store)


def test_pinned_files_and_the_hot_working_set(store: Path, mixed: dict[str, str]) -> None:
    context(store)
    (store / "docs").mkdir()
    (store / "docs/design.md").write_text("# Design\n", encoding="utf-8")
    (store / "docs/design.md.meta.yml").write_text(
        "title: Design\nsummary: How the parts fit.\npin: true\n", encoding="utf-8")
    (store / "docs/old.md.meta.yml").write_text("title: Old\npin: false\n", encoding="utf-8")
    hot = store / "grimoires/loa/working-set/hot.yml"
    hot.parent.mkdir(parents=True)
    hot.write_text("protocol: MEMORY-MGMT/0.1\nupdated: '2026-02-01T10:00:00Z'\nkeep:\n"
                   "  - {path: src/a.py, why: Debugging the parser, since: x, touches: 3}\n"
                   "  - {path: src/b.py, why: Core contract, since: x, touches: 15}\n",
                   encoding="utf-8")
    text = context(store)  # hot.yml is new to the cache: rebuilt; the sidecar is found too
    assert "\n## Pinned\n- `docs/design.md`: Design — How the parts fit.\n" in text
    assert "old.md" not in text
    assert text.endswith("\n## Hot working set\n"
                         "- `src/b.py`: Core contract (15 touches)\n"
                         "- `src/a.py`: Debugging the parser (3 touches)\n")
    hot.write_text("protocol: MEMORY-MGMT/0.1\nkeep: []\n", encoding="utf-8")
    assert "Hot working set" not in context(store)


def test_agent_sidecar_memories_or_a_first_session(store: Path, mixed: dict[str, str]) -> None:
    sidecar = store / "grimoires/loa/agents/architect.yaml"
    sidecar.parent.mkdir(parents=True)
    memories = "".join(f"  - {{type: observation, content: Note {n}, confidence: 0.8}}\n"
                       for n in range(12))
    sidecar.write_text(f"agent: architect\nmemories:\n{memories}relationships:\n"
                       "  agrees_with: [reviewer]\n  disagrees_with: []\n", encoding="utf-8")
    assert ("Agents with sidecar memories: architect (`loa-mem context --agent NAME` adds theirs)"
            in context(store))
    text = context(store, "--agent", "architect", "--agent", "newcomer")
    assert "\n## Agent architect\n- [observation] Note 2 (confidence 0.8)\n" in text
    assert "Note 1 " not in text and "- [observation] Note 11 (confidence 0.8)\n" in text
    assert "- relationships: agrees_with: reviewer\n" in text
    assert "\n## Agent newcomer\n- first session for this agent; no prior memories\n" in text


def test_outside_a_repository_it_says_what_to_do(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path, "context")
    assert done.returncode == 1
    assert done.stderr.startswith("loa-mem: ") and "loa-mem init" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_context(store: Path) -> None:
    done = run_loa_mem(store, "--help")
    assert "context" in done.stdout and "hooks" in done.stdout
    assert "--budget TOKENS" in run_loa_mem(store, "context", "--help").stdout


def test_the_working_set_commands_feed_the_block(cli: Cli, store: Path,
                                                 mixed: dict[str, str]) -> None:
    (store / "src").mkdir()
    (store / "src/parser.py").write_text("x = 1\n", encoding="utf-8")
    (store / "docs").mkdir()
    (store / "docs/arch.md").write_text("# Architecture\n", encoding="utf-8")
    context(store)
    cli.ok("advise", "--hot", "src/parser.py", "--why", "Debugging the parser")
    cli.ok("pin", "docs/arch.md")
    cli.ok("meta", "docs/arch.md", "--set", "summary=How the parts fit")
    text = context(store)
    assert "\n## Pinned\n- `docs/arch.md`: arch — How the parts fit\n" in text  # title: the stem
    assert text.endswith("\n## Hot working set\n"
                         "- `src/parser.py`: Debugging the parser (1 touch)\n")


def _generated(root: Path, per_category: int) -> None:
    """`per_category` entries in each category, written as text (as a big store would be),
    with spread-out confidences, ages and effectiveness tiers."""
    floors = {"fact": 0.8, "decision": 0.9, "learning": 0.7, "error": 0.6, "preference": 0.5}
    for c, (category, floor) in enumerate(floors.items()):
        items = []
        for n in range(per_category):
            day = 1 + (n * 7 + c) % 28
            confidence = round(floor + (1 - floor) * ((n * 37 + c) % 10) / 10, 2)
            applications, successes = (n % 4) + 1, (n * 3) % ((n % 4) + 2)
            items.append(
                f"- id: MEM-202601{day:02d}-{100 + n}\n  category: {category}\n"
                f"  content: Generated {category} {n} about the cache.\n"
                f"  summary: Generated {category} {n}\n  confidence: {confidence}\n"
                f"  source:\n    session_id: gen\n"
                f"    timestamp: 2026-01-{day:02d}T{n % 24:02d}:00:00Z\n"
                f"  ttl: permanent\n  expires_at: null\n  tags: []\n"
                f"  effectiveness: {{applications: {applications}, "
                f"successes: {min(successes, applications)}, score: "
                f"{round(100 * min(successes, applications) / applications)}}}\n")
        with open(support.grimoire(root, category), "a", encoding="utf-8") as handle:
            handle.write("".join(items))


@pytest.mark.parametrize(("later", "shortlist_holds"), [
    ("2026-02-01T10:30:01Z", True), ("2026-02-01T18:00:00Z", True),
    ("2026-02-02T10:30:00Z", True), ("2026-02-04T10:30:00Z", True),
    ("2026-03-01T00:00:00Z", False)])
def test_the_cached_shortlist_ranks_as_the_whole_store_does(store: Path, later: str,
                                                            shortlist_holds: bool) -> None:
    _generated(store, 80)
    context(store)  # ranks every entry at FIXED_NOW and keeps each category's top 50
    cache = store / ".git/loa-mem/context.cache"
    shortlist = cachefile.read(str(cache))["side"]["shortlist"]
    assert len(shortlist["ids"]) == 5 * 50  # each category's top 50 of 80
    later_ts = clock.parse(later).timestamp()
    assert (shortlist["until"] is None or later_ts <= shortlist["until"]) == shortlist_holds
    at_later = {**os.environ, "LOA_MEM_NOW": later}
    from_shortlist = run_loa_mem(store, "context", "--json", env=at_later).stdout
    cache.unlink()
    from_everything = run_loa_mem(store, "context", "--json", env=at_later).stdout
    assert json.loads(from_shortlist)["sections"] == json.loads(from_everything)["sections"]


@pytest.mark.parametrize("agent", ["../../../outside/evil", "sk-" + "x" * 80, "-dash", "café",
                                   ""])
def test_an_agent_name_that_cannot_be_a_sidecar_is_a_usage_error_on_every_path(
        store: Path, agent: str) -> None:
    """A name becomes a file name: one outside the agents folder, or a pasted token, is
    refused by the hook's process, the in-process command and the MCP tool alike, unrepeated."""
    Cli(store).ok("remember", "The cache keeps entries for ten minutes.", "-c", "fact")
    run_loa_mem(store, "context")  # fresh caches: the hook's own fast path answers next
    hook = run_loa_mem(store, "context", f"--agent={agent}")
    in_process = Cli(store)("context", "--agent", agent)
    for code, stderr in ((hook.returncode, hook.stderr), (in_process.code, in_process.stderr)):
        assert code == 2, stderr
        assert "an agent name is 1-64 letters, digits, '-' or '_'" in stderr
        assert not agent or agent not in stderr
    assert Cli(store).ok("context", "--agent", "reviewer-2_b").stdout.count("## Agent") == 1
