"""restore PATH: a file comes back byte for byte from git history, and is never restored over
work git has not recorded. (The advise -> gc -> restore round trips are in test_gc.py.)"""

from __future__ import annotations

from pathlib import Path

from tests import support
from tests import ws_support as ws
from tests.conftest import Cli, git


def test_a_deleted_file_comes_back_from_the_last_commit_that_held_it(cli: Cli,
                                                                     store: Path) -> None:
    ws.write(store, "notes/todo.md", "first\n")
    ws.write(store, "notes/todo.md", "second version\n")
    git(store, "rm", "-q", "notes/todo.md")
    git(store, "commit", "-q", "-m", "remove todo")
    data = cli.ok("restore", "notes/todo.md", "--json").json()

    assert (store / "notes/todo.md").read_text(encoding="utf-8") == "second version\n"
    assert data["from"].startswith("notes/todo.md@")
    assert data["commit"] == support.head(store)
    assert "notes/todo.md" in support.changed_files(store)
    event = support.events(store)[-1]
    assert (event["op"], event["path"], event["action"]) == ("restore", "notes/todo.md",
                                                             "restored")


def test_restore_never_overwrites_uncommitted_work(cli: Cli, store: Path) -> None:
    log = "".join(f"step {n}\n" for n in range(100))
    ws.write(store, "run.log", log)
    cli.ok("advise", "--cold", "run.log", "--action", "compress", "--why", "noisy")
    cli.ok("gc")
    (store / "run.log").write_text("my own edit\n", encoding="utf-8")
    outcome = cli("restore", "run.log")

    assert outcome.code == 1
    assert "changes git has not recorded" in outcome.stderr
    assert (store / "run.log").read_text(encoding="utf-8") == "my own edit\n"


def test_an_evicted_file_returns_to_the_working_set(cli: Cli, store: Path) -> None:
    ws.write(store, "a.txt", "x\n")
    cli.ok("advise", "--cold", "a.txt", "--why", "done")
    cli.ok("gc")
    data = cli.ok("restore", "a.txt", "--json").json()

    assert data["action"] == "returned to the working set"
    assert ws.hot_paths(store) == ["a.txt"]
    again = cli("restore", "a.txt")
    assert again.code == 1 and "nothing to restore" in again.stderr


def test_a_path_git_never_had_is_not_found(cli: Cli) -> None:
    outcome = cli("restore", "never/was.txt")

    assert outcome.code == 1
    assert "no version of never/was.txt" in outcome.stderr


def test_memory_ids_still_restore_entries(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "The API listens on port 8080.", "fact")
    cli.ok("forget", memory_id, "--reason", "wrong")
    cli.ok("restore", memory_id)

    assert support.entry(store, memory_id)["content"] == "The API listens on port 8080."
