"""The merge driver, end to end: real branches, `git merge`, and the files it leaves."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loa_mem import yamlio
from tests.conftest import Cli, git

MEMORY = "grimoires/loa/memory"
CATEGORIES = [("fact", "0.8"), ("decision", "0.95"), ("learning", "0.8"), ("error", "0.7"),
              ("preference", "0.6")]


def entries(root: Path, name: str) -> list[dict[str, object]]:
    text = (root / MEMORY / name).read_text(encoding="utf-8")
    return [i.data for i in yamlio.load_list(text, name).items]


def all_ids(root: Path) -> list[str]:
    ids = []
    for path in sorted((root / MEMORY).rglob("*.yaml")):
        ids += [str(i.data["id"]) for i in yamlio.load_list(path.read_text(), path.name).items]
    return ids


def merge(root: Path, branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "merge", "--no-edit", branch], cwd=root, capture_output=True,
                          text=True, check=False)


def branch(root: Path, name: str) -> None:
    git(root, "checkout", "-q", "-b", name)


def back(root: Path) -> None:
    git(root, "checkout", "-q", "main")


def test_two_branches_of_100_entries_merge_into_200_valid_ones(cli: Cli, store: Path) -> None:
    def remember_many(label: str) -> None:
        for n in range(100):
            category, confidence = CATEGORIES[n % len(CATEGORIES)]
            cli.ok("remember", f"{label} note {n}: the cache key includes the locale",
                   "-c", category, "--confidence", confidence, "-t", label, "--no-commit")
        cli.ok("commit")

    branch(store, "side")
    remember_many("side")
    back(store)
    remember_many("main")
    outcome = merge(store, "side")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    ids = all_ids(store)
    assert len(ids) == 200
    assert len(set(ids)) == 200
    assert sorted(ids)[-1] == "MEM-20260201-200"
    report = cli("validate", "--json")
    assert report.code == 0, report.stdout
    assert report.json()["problems"] == []
    assert git(store, "status", "--porcelain") == ""
    recalled = cli.ok("recall", "side note", "--limit", "200", "--json").json()["results"]
    assert len([r for r in recalled if r["content"].startswith("side note")]) == 100


def test_references_to_a_renumbered_id_follow_it(cli: Cli, store: Path) -> None:
    branch(store, "side")
    cli.ok("remember", "Builds run on the CI image", "-c", "fact")
    cli.ok("supersede", "MEM-20260201-001", "Builds run on the new CI image")
    back(store)
    cli.ok("remember", "The API speaks JSON", "-c", "fact")
    assert merge(store, "side").returncode == 0
    facts = {e["content"]: e for e in entries(store, "facts.yaml")}
    old = facts["Builds run on the CI image"]
    new = facts["Builds run on the new CI image"]
    assert facts["The API speaks JSON"]["id"] == "MEM-20260201-001"
    assert old["id"] == "MEM-20260201-003"
    assert old["superseded_by"] == new["id"]
    assert new["supersedes"] == "MEM-20260201-003"
    assert cli("validate").code == 0
    log = (store / MEMORY / "events.jsonl").read_text()
    assert '"op": "renumber", "ids": ["MEM-20260201-003", "MEM-20260201-001"]' in log


def test_field_changes_on_both_sides_merge_by_rule(cli: Cli, store: Path) -> None:
    cli.ok("remember", "Retries use exponential backoff", "-c", "learning", "-t", "retries")
    branch(store, "side")
    cli.ok("feedback", "MEM-20260201-001", "--success", now="2026-02-03T09:00:00Z")
    back(store)
    cli.ok("supersede", "MEM-20260201-001", "Retries use backoff with jitter",
           now="2026-02-02T09:00:00Z")
    assert merge(store, "side").returncode == 0
    old = next(e for e in entries(store, "learnings.yaml") if e["id"] == "MEM-20260201-001")
    assert old["superseded_by"] == "MEM-20260202-001"
    assert old["effectiveness"]["successes"] == 1  # type: ignore[index]
    assert cli("validate").code == 0


def test_archive_wins_over_a_change_on_the_other_branch(cli: Cli, store: Path) -> None:
    cli.ok("remember", "Port 8080 is taken by the proxy", "-c", "fact")
    branch(store, "side")
    cli.ok("feedback", "MEM-20260201-001", "--failure")
    back(store)
    cli.ok("archive", "MEM-20260201-001", "--reason", "manual")
    assert merge(store, "side").returncode == 0
    assert entries(store, "facts.yaml") == []
    assert [e["id"] for e in entries(store, "archive/facts.yaml")] == ["MEM-20260201-001"]
    assert cli("validate").code == 0


def test_comments_from_both_branches_survive(cli: Cli, store: Path) -> None:
    cli.ok("remember", "The docs live in docs/", "-c", "fact")
    facts = store / MEMORY / "facts.yaml"
    branch(store, "side")
    facts.write_text(facts.read_text() + "# side: more facts below\n")
    git(store, "commit", "-qam", "side comment")
    cli.ok("remember", "Side fact about releases", "-c", "fact")
    back(store)
    text = facts.read_text().replace("- id:", "# main: checked on Monday\n- id:", 1)
    facts.write_text(text)
    git(store, "commit", "-qam", "main comment")
    cli.ok("remember", "Main fact about tests", "-c", "fact")
    assert merge(store, "side").returncode == 0
    merged = facts.read_text()
    assert "# main: checked on Monday\n- id: MEM-20260201-001" in merged
    assert "# side: more facts below" in merged
    assert merged.startswith("# Loa memory: facts.")
    assert len(entries(store, "facts.yaml")) == 3
    assert cli("validate").code == 0


def test_a_real_conflict_leaves_markers_and_stops_the_merge(cli: Cli, store: Path) -> None:
    cli.ok("remember", "The queue is RabbitMQ", "-c", "fact")
    facts = store / MEMORY / "facts.yaml"
    branch(store, "side")
    facts.write_text(facts.read_text().replace("ttl: permanent", "ttl: 30d\n  # side"))
    git(store, "commit", "-qam", "side edit")
    back(store)
    facts.write_text(facts.read_text().replace("ttl: permanent", "ttl: 60d"))
    git(store, "commit", "-qam", "main edit")
    outcome = merge(store, "side")
    assert outcome.returncode == 1
    assert "CONFLICT" in outcome.stdout
    text = facts.read_text()
    assert "<<<<<<< ours\n- id: MEM-20260201-001" in text
    assert "=======\n- id: MEM-20260201-001" in text
    assert ">>>>>>> side\n" in text
    assert "ttl: 60d" in text and "ttl: 30d" in text


def test_ids_in_files_only_one_branch_changed_are_repaired(cli: Cli, store: Path) -> None:
    branch(store, "side")
    cli.ok("remember", "Use SQLite for the index", "-c", "decision", "--confidence", "0.95")
    cli.ok("remember", "Keep the index outside git", "-c", "decision", "--confidence", "0.95",
           "--related", "MEM-20260201-001")
    back(store)
    cli.ok("remember", "The index lives in .git/loa-mem", "-c", "fact")
    outcome = merge(store, "side")
    assert outcome.returncode == 1
    assert "MEM-20260201-001 created on both branches" in outcome.stdout
    repaired = cli("merge-driver", "--repair", "--json")
    assert repaired.code == 0, repaired.stderr
    git(store, "commit", "-q", "--no-edit")
    decisions = entries(store, "decisions.yaml")
    assert [d["id"] for d in decisions] == ["MEM-20260201-003", "MEM-20260201-002"]
    assert decisions[1]["related_memories"] == ["MEM-20260201-003"]
    assert entries(store, "facts.yaml")[0]["id"] == "MEM-20260201-001"
    assert cli("validate").code == 0


def test_repair_without_a_merge_says_so(cli: Cli) -> None:
    outcome = cli("merge-driver", "--repair")
    assert outcome.code == 1
    assert "no merge is in progress" in outcome.stderr


def test_init_registers_the_driver_once(cli: Cli, store: Path) -> None:
    attributes = (store / ".gitattributes").read_text()
    assert f"{MEMORY}/facts.yaml merge=loa-mem" in attributes
    assert f"{MEMORY}/events.jsonl merge=loa-mem" in attributes
    driver = git(store, "config", "--get", "merge.loa-mem.driver")
    assert driver.strip().endswith("merge-driver %O %A %B %P")
    head = git(store, "rev-parse", "HEAD")
    again = cli.ok("init", "--json").json()
    assert again["created"] == []
    assert git(store, "rev-parse", "HEAD") == head
    assert (store / ".gitattributes").read_text() == attributes


def test_init_adds_the_driver_to_an_older_store(cli: Cli, store: Path) -> None:
    (store / ".gitattributes").write_text("*.png binary\n")
    git(store, "commit", "-qam", "attributes of our own")
    git(store, "config", "--unset", "merge.loa-mem.driver")
    created = cli.ok("init", "--json").json()["created"]
    assert created == [".gitattributes"]
    text = (store / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n# loa-mem:")
    assert git(store, "config", "--get", "merge.loa-mem.driver")
    assert git(store, "status", "--porcelain") == ""


@pytest.mark.parametrize("content", ["not: [valid", "- just a string\n"])
def test_a_file_that_cannot_merge_by_id_falls_back_to_lines(cli: Cli, store: Path,
                                                           content: str) -> None:
    base, ours, theirs = (store / n for n in ("base.tmp", "ours.tmp", "theirs.tmp"))
    base.write_text("a\n")
    ours.write_text(content)
    theirs.write_text("a\nb\n")
    outcome = cli("merge-driver", str(base), str(ours), str(theirs), f"{MEMORY}/facts.yaml")
    assert outcome.code == 1
    assert "merged line by line" in outcome.stdout
    assert "<<<<<<<" in ours.read_text()
