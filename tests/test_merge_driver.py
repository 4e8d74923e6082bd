"""The merge driver, end to end: real branches, `git merge`, and the files it leaves."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loa_mem.core import yamlio
from loa_mem.memory import rules as model
from tests import support
from tests.conftest import FIXED_NOW, Cli, git

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


def renumbers(root: Path) -> list[list[str]]:
    """The ids of every renumber event in the events log."""
    return [e["ids"] for e in support.events(root) if e["op"] == "renumber"]


def write_legacy(root: Path, *items: tuple[str, str, str, str]) -> None:
    """Write by hand, and commit, entries with legacy per-day ids (category, id, content, extra
    YAML lines) and their remember events, as an older loa-mem that numbered ids per day did.
    New ids are random and no longer meet on two branches, so this is how a test builds the
    legacy collision that the merge driver still renumbers. The events name the branch as their
    actor, as two clones writing them would differ."""
    actor = "user:" + git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    texts: dict[str, str] = {}
    lines = []
    for category, memory_id, content, extra in items:
        confidence = dict(CATEGORIES)[category]
        texts[category] = texts.get(category, "") + (
            f"- id: {memory_id}\n  category: {category}\n  content: {json.dumps(content)}\n"
            f"  confidence: {confidence}\n"
            f"  source: {{session_id: s-old, timestamp: {FIXED_NOW}}}\n"
            f"  ttl: permanent\n  expires_at: null\n{extra}")
        lines.append(json.dumps({"op": "remember", "ids": [memory_id], "time": FIXED_NOW,
                                 "actor": actor, "reason": None, "category": category}))
    for category, text in texts.items():
        path = support.grimoire(root, category)
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    log = root / MEMORY / "events.jsonl"
    log.write_text(log.read_text(encoding="utf-8") + "".join(f"{line}\n" for line in lines),
                   encoding="utf-8")
    git(root, "add", MEMORY)
    git(root, "commit", "-q", "-m", f"{len(items)} entries with legacy ids")


def merge(root: Path, branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "merge", "--no-edit", branch], cwd=root, capture_output=True,
                          text=True, check=False)


def branch(root: Path, name: str) -> None:
    git(root, "checkout", "-q", "-b", name)


def back(root: Path) -> None:
    git(root, "checkout", "-q", "main")


def test_two_branches_of_100_entries_merge_into_200_valid_ones(cli: Cli, store: Path) -> None:
    def remember_many(label: str) -> list[str]:
        made = []
        for n in range(100):
            category, confidence = CATEGORIES[n % len(CATEGORIES)]
            made.append(support.remember(
                cli, f"{label} note {n}: the cache key includes the locale", category,
                "--confidence", confidence, "-t", label, "--no-commit"))
        cli.ok("commit")
        return made

    branch(store, "side")
    side = remember_many("side")
    back(store)
    main = remember_many("main")
    outcome = merge(store, "side")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    ids = all_ids(store)
    assert len(ids) == 200
    assert len(set(ids)) == 200
    # Ids minted on two branches no longer collide: nothing is renumbered, each entry is there
    # once under the id its branch gave it.
    assert sorted(ids) == sorted(side + main)
    for memory_id in ids:
        support.assert_new_id(memory_id)
    assert renumbers(store) == []
    report = cli("validate", "--json")
    assert report.code == 0, report.stdout
    assert report.json()["problems"] == []
    assert git(store, "status", "--porcelain") == ""
    recalled = cli.ok("recall", "side note", "--limit", "200", "--json").json()["results"]
    assert len([r for r in recalled if r["content"].startswith("side note")]) == 100


def test_two_branches_of_100_legacy_entries_renumber_into_200_valid_ones(cli: Cli,
                                                                         store: Path) -> None:
    def legacy_many(label: str) -> None:
        write_legacy(store, *((CATEGORIES[n % len(CATEGORIES)][0], f"MEM-20260201-{n + 1:03d}",
                               f"{label} note {n}: the cache key includes the locale",
                               f"  tags: [{label}]\n") for n in range(100)))

    branch(store, "side")
    legacy_many("side")
    back(store)
    legacy_many("main")
    outcome = merge(store, "side")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    ids = all_ids(store)
    assert len(ids) == 200
    assert len(set(ids)) == 200
    # Legacy collisions are renumbered within the legacy form: the next free sequences.
    assert sorted(ids, key=model.id_order) == [f"MEM-20260201-{n:03d}" for n in range(1, 201)]
    assert len(renumbers(store)) == 100
    report = cli("validate", "--json")
    assert report.code == 0, report.stdout
    assert report.json()["problems"] == []
    assert git(store, "status", "--porcelain") == ""
    recalled = cli.ok("recall", "side note", "--limit", "200", "--json").json()["results"]
    assert len([r for r in recalled if r["content"].startswith("side note")]) == 100


def test_references_to_a_renumbered_id_follow_it(cli: Cli, store: Path) -> None:
    branch(store, "side")
    write_legacy(store, ("fact", "MEM-20260201-001", "Builds run on the CI image", ""))
    newer = cli.ok("supersede", "MEM-20260201-001", "Builds run on the new CI image",
                   "--json").json()["id"]
    back(store)
    write_legacy(store, ("fact", "MEM-20260201-001", "The API speaks JSON", ""))
    assert merge(store, "side").returncode == 0
    facts = {e["content"]: e for e in entries(store, "facts.yaml")}
    old = facts["Builds run on the CI image"]
    new = facts["Builds run on the new CI image"]
    assert facts["The API speaks JSON"]["id"] == "MEM-20260201-001"
    assert old["id"] == "MEM-20260201-002"
    assert new["id"] == newer
    assert old["superseded_by"] == new["id"]
    assert new["supersedes"] == "MEM-20260201-002"
    assert cli("validate").code == 0
    assert renumbers(store) == [["MEM-20260201-002", "MEM-20260201-001"]]


def test_branches_that_remember_normally_never_renumber(cli: Cli, store: Path) -> None:
    branch(store, "side")
    old = support.remember(cli, "Builds run on the CI image", "fact")
    new = cli.ok("supersede", old, "Builds run on the new CI image", "--json").json()["id"]
    back(store)
    other = support.remember(cli, "The API speaks JSON", "fact")
    assert merge(store, "side").returncode == 0
    facts = {e["content"]: e for e in entries(store, "facts.yaml")}
    assert facts["The API speaks JSON"]["id"] == other
    assert facts["Builds run on the CI image"]["id"] == old
    assert facts["Builds run on the CI image"]["superseded_by"] == new
    assert facts["Builds run on the new CI image"]["supersedes"] == old
    assert sorted(all_ids(store)) == sorted([old, new, other])
    assert renumbers(store) == []
    assert cli("validate").code == 0


def test_field_changes_on_both_sides_merge_by_rule(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "Retries use exponential backoff", "learning", "-t", "retries")
    branch(store, "side")
    cli.ok("feedback", first, "--success", now="2026-02-03T09:00:00Z")
    back(store)
    newer = cli.ok("supersede", first, "Retries use backoff with jitter", "--json",
                   now="2026-02-02T09:00:00Z").json()["id"]
    support.assert_new_id(newer, "20260202")
    assert merge(store, "side").returncode == 0
    old = next(e for e in entries(store, "learnings.yaml") if e["id"] == first)
    assert old["superseded_by"] == newer
    assert old["effectiveness"]["successes"] == 1  # type: ignore[index]
    assert cli("validate").code == 0


def test_archive_wins_over_a_change_on_the_other_branch(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "Port 8080 is taken by the proxy", "fact")
    branch(store, "side")
    cli.ok("feedback", first, "--failure")
    back(store)
    cli.ok("archive", first, "--reason", "manual")
    assert merge(store, "side").returncode == 0
    assert entries(store, "facts.yaml") == []
    assert [e["id"] for e in entries(store, "archive/facts.yaml")] == [first]
    assert cli("validate").code == 0


def test_comments_from_both_branches_survive(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "The docs live in docs/", "fact")
    facts = store / MEMORY / "facts.yaml"
    branch(store, "side")
    facts.write_text(facts.read_text() + "# side: more facts below\n")
    git(store, "commit", "-qam", "side comment")
    side = support.remember(cli, "Side fact about releases", "fact")
    back(store)
    text = facts.read_text().replace("- id:", "# main: checked on Monday\n- id:", 1)
    facts.write_text(text)
    git(store, "commit", "-qam", "main comment")
    main = support.remember(cli, "Main fact about tests", "fact")
    assert merge(store, "side").returncode == 0
    merged = facts.read_text()
    assert f"# main: checked on Monday\n- id: {first}" in merged
    assert "# side: more facts below" in merged
    assert merged.startswith("# Loa memory: facts.")
    assert sorted(e["id"] for e in entries(store, "facts.yaml")) == sorted([first, side, main])
    assert cli("validate").code == 0


def test_a_real_conflict_leaves_markers_and_stops_the_merge(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "The queue is RabbitMQ", "fact")
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
    assert f"<<<<<<< ours\n- id: {first}" in text
    assert f"=======\n- id: {first}" in text
    assert ">>>>>>> side\n" in text
    assert "ttl: 60d" in text and "ttl: 30d" in text


def test_ids_in_files_only_one_branch_changed_are_repaired(cli: Cli, store: Path) -> None:
    branch(store, "side")
    write_legacy(store, ("decision", "MEM-20260201-001", "Use SQLite for the index", ""),
                 ("decision", "MEM-20260201-002", "Keep the index outside git",
                  "  related_memories: [MEM-20260201-001]\n"))
    back(store)
    write_legacy(store, ("fact", "MEM-20260201-001", "The index lives in .git/loa-mem", ""))
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


def test_repair_with_nothing_to_repair_says_so(cli: Cli) -> None:
    for args in (("merge-driver", "--repair"), ("repair",)):
        outcome = cli(*args)
        assert outcome.code == 1
        assert "nothing to repair" in outcome.stderr


def test_init_registers_the_driver_once(cli: Cli, store: Path) -> None:
    attributes = (store / ".gitattributes").read_text()
    assert f"{MEMORY}/facts.yaml merge=loa-mem" in attributes
    assert f"{MEMORY}/events.jsonl merge=loa-mem-log" in attributes
    driver = git(store, "config", "--get", "merge.loa-mem.driver")
    assert "exec loa-mem merge-driver %O %A %B %P" in driver  # by name, never a venv's path
    assert "else git merge-file" in driver
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


def test_merge_driver_given_a_missing_file_says_so_and_writes_nothing(cli: Cli,
                                                                      store: Path) -> None:
    (store / "ours.tmp").write_text("- id: MEM-20260201-001\n")
    outcome = cli("merge-driver", "base.tmp", str(store / "ours.tmp"), "theirs.tmp")
    assert outcome.code == 2
    assert "base.tmp is not a file" in outcome.stderr
    assert "loa-mem repair" in outcome.stderr
    assert (store / "ours.tmp").read_text() == "- id: MEM-20260201-001\n"
    assert not (store / "base.tmp").exists()
