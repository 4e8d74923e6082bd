"""A category's file stays single until it holds 256 KiB, then new entries go to month files
(`decisions/2026-02.yaml`, then `2026-02.2.yaml`, ...). Every command reads, validates and
merges both layouts."""

from __future__ import annotations

import json
from pathlib import Path

from loa_mem.core import yamlio
from loa_mem.memory.layout import LIMIT
from tests import support
from tests.conftest import Cli, clones_of, git

MEMORY = support.MEMORY


def filler(count_bytes: int, day: str) -> str:
    """Hand-written decisions (valid entries, older ids `MEM-<day>-NNN`) of at least
    `count_bytes` bytes."""
    items = []
    size = n = 0
    while size < count_bytes:
        n += 1
        item = (f"- id: MEM-{day}-{n:03d}\n  category: decision\n"
                f"  content: Filler decision {n} about the build cache and its "
                "eviction policy, kept for the size of the file.\n  confidence: 0.95\n"
                "  source:\n    session_id: filler\n    timestamp: 2026-01-15T10:00:00Z\n"
                "  ttl: permanent\n  expires_at: null\n  tags: [filler]\n")
        items.append(item)
        size += len(item.encode())
    return "".join(items)


def fill(store: Path, rel: str, day: str) -> None:
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(filler(LIMIT, day))
    git(store, "add", rel)
    git(store, "commit", "-qm", f"fill {rel}")


def fill_events(store: Path) -> None:
    """An events log of at least 256 KiB (valid lines), committed."""
    line = json.dumps({"op": "remember", "ids": ["MEM-20260110-001"],
                       "at": "2026-01-10T10:00:00Z", "actor": "user:filler", "reason": None})
    path = store / MEMORY / "events.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write((line + "\n") * (LIMIT // len(line) + 1))
    git(store, "add", f"{MEMORY}/events.jsonl")
    git(store, "commit", "-qm", "fill the events log")


def logged(root: Path) -> list[dict[str, object]]:
    """Every event in every file of the log, in order."""
    paths = [root / MEMORY / "events.jsonl", *sorted((root / MEMORY / "events").glob("*.jsonl"))]
    return [json.loads(line) for path in paths if path.exists()
            for line in path.read_text(encoding="utf-8").splitlines() if line]


def remember_decision(cli: Cli, text: str, now: str | None = None) -> dict[str, str]:
    done = cli.ok("remember", text, "-c", "decision", "--confidence", "0.95", "--json", now=now)
    data: dict[str, str] = done.json()
    return data


def ids_in(store: Path, rel: str) -> list[str]:
    text = (store / rel).read_text(encoding="utf-8")
    return [str(e["id"]) for e in yamlio.load(text, rel) or []]


def test_below_the_limit_the_single_file_is_written(cli: Cli, store: Path) -> None:
    data = remember_decision(cli, "Keep the single file while it is small.")
    assert data["path"] == f"{MEMORY}/decisions.yaml"
    assert ids_in(store, data["path"]) == [data["id"]]
    assert not (store / MEMORY / "decisions").exists()


def test_a_full_file_continues_in_this_months_file(cli: Cli, store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    before = (store / MEMORY / "decisions.yaml").read_bytes()
    first = remember_decision(cli, "Use the month files once the single file is full.")
    second = remember_decision(cli, "A second decision joins the same month file.")
    month = f"{MEMORY}/decisions/2026-02.yaml"
    assert first["path"] == second["path"] == month
    assert ids_in(store, month) == [first["id"], second["id"]]
    assert (store / MEMORY / "decisions.yaml").read_bytes() == before
    assert support.changed_files(store) == sorted([month, f"{MEMORY}/events.jsonl"])
    shown = cli.ok("show", first["id"], "--json").json()
    assert shown["path"] == month and shown["line"] == 1
    found = [r["id"] for r in cli.ok("recall", "single full", "--json").json()["results"]]
    assert found[0] == first["id"]
    assert cli.ok("show", "MEM-20260115-001", "--json").json()["path"] == (
        f"{MEMORY}/decisions.yaml")


def test_a_full_month_file_continues_in_its_next_part_and_a_new_month_starts_fresh(
        cli: Cli, store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    fill(store, f"{MEMORY}/decisions/2026-02.yaml", "20260116")
    second_part = remember_decision(cli, "The second part of February.")
    march = remember_decision(cli, "March has its own file.", now="2026-03-02T09:00:00Z")
    assert second_part["path"] == f"{MEMORY}/decisions/2026-02.2.yaml"
    assert march["path"] == f"{MEMORY}/decisions/2026-03.yaml"
    listed = [r["id"] for r in cli.ok("recall", "--limit", "3", "-c", "decision", "--json",
                                      now="2026-03-02T09:00:00Z").json()["results"]]
    assert march["id"] in listed


def test_entries_in_month_files_are_edited_in_place(cli: Cli, store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    old = remember_decision(cli, "Deploy on Fridays.")
    new = cli.ok("supersede", old["id"], "Never deploy on Fridays.", "--json").json()
    month = f"{MEMORY}/decisions/2026-02.yaml"
    entries = {e["id"]: e for e in yamlio.load((store / month).read_text(), month)}
    assert entries[old["id"]]["superseded_by"] == new["id"]
    assert cli.ok("forget", old["id"], "--reason", "replaced").code == 0
    assert old["id"] not in ids_in(store, month)
    assert cli.ok("restore", old["id"]).code == 0
    assert old["id"] in ids_in(store, month)


def test_validate_reads_month_files_and_names_a_broken_one(cli: Cli, store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    remember_decision(cli, "Validate month files like any other.")
    assert cli("validate").code == 0
    month = store / MEMORY / "decisions/2026-02.yaml"
    month.write_text(month.read_text() + "- id: MEM-20260201-brokenxx\n  content: [unclosed\n")
    outcome = cli("validate", "--json")
    assert outcome.code == 1
    assert "decisions/2026-02.yaml" in outcome.stdout


def test_a_month_file_deleted_by_git_leaves_recall(cli: Cli, store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    gone = remember_decision(cli, "This decision goes away with a checkout.")
    git(store, "checkout", "-q", "HEAD~1")
    found = [r["id"] for r in cli.ok("recall", "checkout", "--json").json()["results"]]
    assert gone["id"] not in found


def test_a_full_events_log_continues_in_this_months_file(cli: Cli, store: Path) -> None:
    fill_events(store)
    before = (store / MEMORY / "events.jsonl").read_bytes()
    made = remember_decision(cli, "Events go to the month's log once the log is full.")
    month_log = f"{MEMORY}/events/2026-02.jsonl"
    assert [e["ids"] for e in logged(store)[-1:]] == [[made["id"]]]
    assert (store / MEMORY / "events.jsonl").read_bytes() == before
    assert support.changed_files(store) == sorted([f"{MEMORY}/decisions.yaml", month_log])
    cli.ok("forget", made["id"], "--reason", "wrong")
    assert "forgotten" in cli("show", made["id"]).stderr
    cli.ok("restore", made["id"])
    assert cli.ok("show", made["id"], "--json").json()["entry"]["id"] == made["id"]
    assert [e["op"] for e in logged(store)[-3:]] == ["remember", "forget", "restore"]
    assert cli("validate").code == 0
    assert cli("status").code == 0


def test_three_clones_start_the_same_month_file_and_pull_rebase(tmp_path: Path,
                                                                store: Path) -> None:
    fill(store, f"{MEMORY}/decisions.yaml", "20260115")
    fill_events(store)
    clones = clones_of(store, tmp_path)
    made = []
    for round_number in range(2):
        for clone in clones:
            made.append(remember_decision(Cli(clone), f"{clone.name} decided {round_number}.")
                        ["id"])
            git(clone, "pull", "-q", "--rebase")
            git(clone, "push", "-q")
    month = f"{MEMORY}/decisions/2026-02.yaml"
    for clone in clones:
        git(clone, "pull", "-q", "--rebase")
        assert sorted(ids_in(clone, month)) == sorted(made)
        assert Cli(clone)("validate").code == 0
        assert git(clone, "status", "--porcelain") == ""
        attributes = (clone / ".git/info/attributes").read_text()
        assert f"{MEMORY}/decisions/*.yaml merge=loa-mem" in attributes
        assert f"{MEMORY}/events/*.jsonl merge=loa-mem-log" in attributes
        remembered = [i for e in logged(clone) if e["op"] == "remember"
                      for i in e["ids"]]  # type: ignore[attr-defined]
        assert sorted(set(remembered) - {"MEM-20260110-001"}) == sorted(made)
