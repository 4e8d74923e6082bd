"""Working as a team: branches, clones and every way git moves commits between them.

Two branches each run one kind of operation, then one is brought into the other by merge,
rebase, cherry-pick, squash merge or `git am -3`. Afterwards the store validates, every entry
is there exactly once, and every link still points at the entry (found by its content) it
pointed at when it was made. Clones of one bare remote never run `loa-mem init`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loa_mem.core import yamlio
from tests import support
from tests.conftest import Cli, clones_of, git

Step = Callable[[Cli, str], None]


def _remember(cli: Cli, text: str, category: str = "fact", *extra: str) -> str:
    confidence = ["--confidence", "0.95"] if category == "decision" else []
    data = cli.ok("remember", text, "-c", category, *confidence, *extra, "--json").json()
    return str(data["id"])


def _by_content(root: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for category in support.FILES:
        for archived in (False, True):
            for entry in support.entries(root, category, archived):
                found.setdefault(str(entry["content"]), []).append(entry)
    return found


def _one(root: Path, content: str) -> dict[str, Any]:
    copies = _by_content(root).get(content, [])
    assert len(copies) == 1, f"{content!r} is there {len(copies)} times"
    return copies[0]


def _validate_ok(cli: Cli) -> None:
    report = cli("validate", "--json").json()
    assert report["ok"], report["problems"]
    assert not [p for p in report["problems"] if p["rule"] in ("chain", "related", "unique-id")]


# -- what each branch does ------------------------------------------------------------------
def _op_remember(cli: Cli, side: str) -> None:
    _remember(cli, f"{side.upper()}: use Redis for caching.")
    _remember(cli, f"{side.upper()}: the API gateway is Envoy.", "decision")


def _op_supersede(cli: Cli, side: str) -> None:
    old = _remember(cli, f"{side.upper()}: use Kafka 3.5 for events.", "decision")
    cli.ok("supersede", old, f"{side.upper()}: use Kafka 3.7 for events.", "--confidence",
           "0.95")


def _op_related(cli: Cli, side: str) -> None:
    first = _remember(cli, f"{side.upper()}: deploys run from the release branch.")
    _remember(cli, f"{side.upper()}: a deploy needs a green release build.", "fact",
              "--related", first)


def _op_archive(cli: Cli, side: str) -> None:
    mine = _remember(cli, f"{side.upper()}: the staging cluster is in eu-west-1.")
    cli.ok("archive", mine)
    cli.ok("archive", _shared_id(cli, "Shared: the build runs on Linux."))


def _op_forget(cli: Cli, side: str) -> None:
    _remember(cli, f"{side.upper()}: keep this one.")
    gone = _remember(cli, f"{side.upper()}: forget this one.")
    cli.ok("forget", gone, "--reason", "wrong")


def _op_feedback(cli: Cli, side: str) -> None:
    shared = _shared_id(cli, "Shared: retries back off exponentially.")
    cli.ok("feedback", shared, "--success" if side == "a" else "--failure")


def _op_agents(cli: Cli, side: str) -> None:
    agent = "architect" if side == "a" else "reviewer"
    session = f"S-{side}"
    cli.ok("session", "start", "--agent", agent, "--session", session)
    cli.ok("agent", "remember", agent, f"{side}: prefers small modules", "-T", "preference",
           "--session", session)
    cli.ok("session", "end", "--session", session)
    _remember(cli, f"{side.upper()}: the agents met today.")


def _op_same_agent(cli: Cli, side: str) -> None:
    session = f"S-{side}"
    cli.ok("session", "start", "--agent", "architect", "--session", session)
    cli.ok("agent", "remember", "architect", f"{side}: prefers small modules", "-T", "preference",
           "--session", session)
    cli.ok("agent", "remember", "architect", f"{side}: chose the queue", "-T", "decision",
           "--session", session)
    cli.ok("session", "end", "--session", session)


OPS: dict[str, Callable[[Cli, str], None]] = {
    "remember": _op_remember, "supersede": _op_supersede, "related": _op_related,
    "archive": _op_archive, "forget": _op_forget, "feedback": _op_feedback,
    "agents": _op_agents, "same-agent": _op_same_agent,
}


def _shared_id(cli: Cli, content: str) -> str:
    for entry in cli.ok("export", "-f", "jsonl", "--all").stdout.splitlines():
        data = json.loads(entry)
        if data["content"] == content:
            return str(data["id"])
    raise AssertionError(f"no shared entry {content!r}")


# -- how branch b comes into branch a ---------------------------------------------------------
def _merge(root: Path) -> None:
    git(root, "checkout", "-q", "a")
    git(root, "merge", "-q", "--no-edit", "b")


def _rebase(root: Path) -> None:
    git(root, "checkout", "-q", "b")
    git(root, "rebase", "-q", "a")


def _cherry_pick(root: Path) -> None:
    git(root, "checkout", "-q", "a")
    git(root, "cherry-pick", "--keep-redundant-commits", "base..b")


def _squash(root: Path) -> None:
    git(root, "checkout", "-q", "a")
    git(root, "merge", "-q", "--squash", "b")
    git(root, "commit", "-q", "-m", "squash b")


def _am(root: Path) -> None:
    patches = git(root, "format-patch", "--stdout", "base..b")
    git(root, "checkout", "-q", "a")
    subprocess.run(["git", "am", "-q", "-3"], cwd=root, input=patches, text=True, check=True,
                   capture_output=True)


WAYS = {"merge": _merge, "rebase": _rebase, "cherry-pick": _cherry_pick, "squash": _squash,
        "am": _am}


def _shared_base(cli: Cli, root: Path, op: str = "") -> None:
    if op == "same-agent":
        cli.ok("session", "start", "--agent", "architect", "--session", "S-base")
        cli.ok("agent", "remember", "architect", "base: reads the ADRs first", "-T", "context",
               "--session", "S-base")
        cli.ok("session", "end", "--session", "S-base")
    _remember(cli, "Shared: the build runs on Linux.")
    _remember(cli, "Shared: retries back off exponentially.", "learning")
    git(root, "branch", "base")
    git(root, "branch", "a")
    git(root, "branch", "b")


def _check_links(root: Path, op: str) -> None:
    for side in ("A", "B"):
        if op == "supersede":
            old = _one(root, f"{side}: use Kafka 3.5 for events.")
            new = _one(root, f"{side}: use Kafka 3.7 for events.")
            assert old["superseded_by"] == new["id"] and new["supersedes"] == old["id"]
        if op == "related":
            first = _one(root, f"{side}: deploys run from the release branch.")
            second = _one(root, f"{side}: a deploy needs a green release build.")
            assert second["related_memories"] == [first["id"]]
        if op == "forget":
            assert f"{side}: forget this one." not in _by_content(root)
            _one(root, f"{side}: keep this one.")
    if op == "remember":
        for side in ("A", "B"):
            _one(root, f"{side}: use Redis for caching.")
            _one(root, f"{side}: the API gateway is Envoy.")
    if op == "archive":
        assert _one(root, "Shared: the build runs on Linux.")["archived"] is True
    if op == "feedback":
        effect = _one(root, "Shared: retries back off exponentially.")["effectiveness"]
        assert (effect["applications"], effect["successes"], effect["failures"]) == (2, 1, 1)


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("op", list(OPS))
def test_two_branches_come_together_with_every_link_intact(cli: Cli, store: Path, op: str,
                                                           way: str) -> None:
    _shared_base(cli, store, op)
    for side in ("a", "b"):
        git(store, "checkout", "-q", side)
        OPS[op](cli, side)
    WAYS[way](store)

    assert git(store, "status", "--porcelain") == ""
    _validate_ok(cli)
    ids = support.all_ids(store)
    assert len(ids) == len(set(ids))
    _check_links(store, op)
    if op == "agents":
        assert (store / "grimoires/loa/agents/architect.yaml").exists()
        assert (store / "grimoires/loa/agents/reviewer.yaml").exists()
    if op == "same-agent":
        sidecar = yamlio.load((store / "grimoires/loa/agents/architect.yaml").read_text(),
                              "architect")
        memories = {m["content"]: m["id"] for m in sidecar["memories"]}
        assert sorted(memories) == ["a: chose the queue", "a: prefers small modules",
                                    "b: chose the queue", "b: prefers small modules",
                                    "base: reads the ADRs first"]
        assert len(set(memories.values())) == 5
        assert sidecar["sessions_participated"] == 3
        decided = {d["decision"]: d["memory"] for d in sidecar["decision_history"]}
        assert decided == {k: v for k, v in memories.items() if "queue" in k}


def test_three_clones_pull_rebase_and_push_in_rounds(tmp_path: Path, store: Path) -> None:
    clones = clones_of(store, tmp_path)
    remembered = []
    for round_number in range(3):
        for clone in clones:
            text = f"{clone.name} learned lesson {round_number}."
            _remember(Cli(clone), text, "learning")
            remembered.append(text)
            git(clone, "pull", "-q", "--rebase")
            git(clone, "push", "-q")
    for clone in clones:
        git(clone, "pull", "-q", "--rebase")
        found = _by_content(clone)
        for text in remembered:
            assert len(found.get(text, [])) == 1, (clone.name, text)
        _validate_ok(Cli(clone))
        assert git(clone, "status", "--porcelain") == ""
        assert git(clone, "config", "--get", "merge.loa-mem.driver").startswith("if loa-mem")
        assert "merge=loa-mem" in (clone / ".git/info/attributes").read_text()


def test_a_failure_captured_in_two_clones_counts_both_after_pull_rebase(tmp_path: Path,
                                                                      store: Path) -> None:
    hook_input = json.dumps({"session_id": "s-1", "hook_event_name": "PostToolUseFailure",
                             "tool_name": "Bash", "tool_input": {"command": "make"},
                             "error": "Exit code 2\nmake: *** [all] Error 2"})
    [memory_id] = Cli(store).ok("capture", "tool-result", "--json",
                                stdin=hook_input).json()["added"]
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    Cli(ana).ok("capture", "tool-result", stdin=hook_input, now="2026-02-01T11:00:00Z")
    Cli(ben).ok("capture", "tool-result", stdin=hook_input, now="2026-02-01T12:00:00Z")
    git(ana, "push", "-q")
    git(ben, "pull", "-q", "--rebase")

    capture = support.entry(ben, memory_id)["capture"]
    assert (capture["occurrences"], capture["last_seen"]) == (3, "2026-02-01T12:00:00Z")
    _validate_ok(Cli(ben))
    assert git(ben, "status", "--porcelain") == ""


def test_a_clone_sets_itself_up_without_a_commit(tmp_path: Path, store: Path) -> None:
    git(tmp_path, "clone", "-q", str(store), "fresh")
    fresh = tmp_path / "fresh"
    head = support.head(fresh)
    Cli(fresh).ok("recall")

    assert support.head(fresh) == head
    assert git(fresh, "status", "--porcelain") == ""
    driver = git(fresh, "config", "--get", "merge.loa-mem.driver")
    assert "loa-mem merge-driver %O %A %B %P" in driver and "/loa-mem" not in driver
    assert "events.jsonl merge=loa-mem-log" in (fresh / ".git/info/attributes").read_text()


def test_without_loa_mem_on_path_git_leaves_markers_and_repair_merges_by_id(
        cli: Cli, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _shared_base(cli, store)
    for side in ("a", "b"):
        git(store, "checkout", "-q", side)
        _op_remember(cli, side)
    git(store, "checkout", "-q", "a")
    bare_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                if not (Path(p) / "loa-mem").exists())
    env = {**os.environ, "PATH": bare_path}
    assert shutil.which("loa-mem", path=bare_path) is None
    merged = subprocess.run(["git", "merge", "--no-edit", "b"], cwd=store, env=env,
                            capture_output=True, text=True, check=False)

    assert merged.returncode != 0  # a conflict, never a silent "keep ours"
    facts = (store / support.MEMORY / "facts.yaml").read_text()
    assert "<<<<<<<" in facts and "B: use Redis for caching." in facts
    refused = cli("recall", "Redis")
    assert refused.code == 1 and "conflict markers" in refused.stderr
    assert "loa-mem repair" in refused.stderr
    cli.ok("repair")
    git(store, "commit", "-q", "--no-edit")

    _validate_ok(cli)
    for side in ("A", "B"):
        _one(store, f"{side}: use Redis for caching.")
        _one(store, f"{side}: the API gateway is Envoy.")


def test_repair_after_markers_were_committed(cli: Cli, store: Path) -> None:
    _remember(cli, "Shared: the build runs on Linux.")
    facts = store / support.MEMORY / "facts.yaml"
    text = facts.read_text()
    ours = ("- id: MEM-20260201-001\n  category: fact\n  content: Ours kept this.\n"
            "  confidence: 0.8\n  source: {session_id: s, timestamp: '2026-02-01T10:30:00Z'}\n"
            "  ttl: permanent\n  expires_at:\n  tags: []\n")
    theirs = ours.replace("Ours kept this.", "Theirs kept that.")
    facts.write_text(text + "<<<<<<< HEAD\n" + ours + "=======\n" + theirs + ">>>>>>> b\n")
    git(store, "commit", "-qam", "a merge committed with markers")

    report = cli.ok("repair", "--json").json()

    assert report["ok"] and report["commit"] == support.head(store)
    _validate_ok(cli)
    kept = {_one(store, "Ours kept this.")["id"], _one(store, "Theirs kept that.")["id"]}
    assert len(kept) == 2 and "MEM-20260201-001" in kept


def test_repair_fixes_duplicate_ids_and_one_way_links_outside_a_merge(cli: Cli,
                                                                      store: Path) -> None:
    first = _remember(cli, "Use Postgres for the main database.", "decision")
    second = _remember(cli, "Use Postgres 16 for the main database.", "decision")
    decisions = store / support.MEMORY / "decisions.yaml"
    # a hand edit that set only one end of the link, and an entry copied into the archive
    decisions.write_text(decisions.read_text().replace(
        f"id: {second}\n", f"id: {second}\n  supersedes: {first}\n", 1))
    git(store, "commit", "-qam", "hand edit")
    problems = cli("validate", "--json").json()["problems"]
    assert any(p["rule"] == "chain" and p["id"] == second for p in problems)

    cli.ok("repair")

    _validate_ok(cli)
    assert support.entry(store, first)["superseded_by"] == second
    assert first not in cli.ok("recall", "Postgres", "--json").stdout


def test_validate_reports_a_supersede_cycle_and_a_fork(cli: Cli, store: Path) -> None:
    one = _remember(cli, "Cache for 5 minutes.")
    two = _remember(cli, "Cache for 10 minutes.")
    _remember(cli, "Cache for 15 minutes.")
    facts = store / support.MEMORY / "facts.yaml"
    text = facts.read_text()
    text = text.replace(f"id: {one}\n", f"id: {one}\n  supersedes: {two}\n"
                        f"  superseded_by: {two}\n", 1)
    text = text.replace(f"id: {two}\n", f"id: {two}\n  supersedes: {one}\n"
                        f"  superseded_by: {one}\n", 1)
    facts.write_text(text)
    cycle = cli("validate", "--json").json()
    assert not cycle["ok"]
    assert any("circle" in p["message"] for p in cycle["problems"])

    git(store, "checkout", "--", ".")
    base = _remember(cli, "Deploy on Fridays.")
    git(store, "branch", "other")
    cli.ok("supersede", base, "Deploy on Thursdays.")
    git(store, "checkout", "-q", "other")
    cli.ok("supersede", base, "Deploy on Wednesdays.")
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--no-edit", "other")
    fork = cli("validate", "--json").json()
    [problem] = [p for p in fork["problems"] if p["rule"] == "chain"]
    assert "superseded twice" in problem["message"]
    assert f"loa-mem archive {problem['id']} --reason superseded" in problem["message"]
    cli.ok("archive", problem["id"], "--reason", "superseded")
    _validate_ok(cli)
