"""A grimoire file changed outside loa-mem (a git pull, a checkout, a rebase, an editor): every
command sees exactly what the files say, as if the index had been built from scratch, and a later
write edits the right lines.

Each check compares what recall and show print with what they print after the index is deleted
(a cold build from the files), so it holds whichever way the index caught up.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import support
from tests.conftest import Cli, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"


def view(cli: Cli) -> dict[str, Any]:
    """Everything recall and show tell a user about the store."""
    listed = cli.ok("recall", "--limit", "500", "--include-expired", "--include-superseded",
                    "--include-archived", "--json").json()["results"]
    shown = {r["id"]: cli.ok("show", r["id"], "--json").json() for r in listed}
    return {"recall": listed, "show": shown}


def cold_view(cli: Cli) -> dict[str, Any]:
    (cli.root / ".git" / "loa-mem" / "index.sqlite3").unlink()
    return view(cli)


def entry_text(memory_id: str, content: str, indent: str = "") -> str:
    return (f"{indent}- id: {memory_id}\n{indent}  category: fact\n"
            f"{indent}  content: {content}\n{indent}  confidence: 0.8\n"
            f"{indent}  source:\n{indent}    session_id: outside\n"
            f"{indent}    timestamp: 2026-02-01T10:00:00Z\n"
            f"{indent}  ttl: permanent\n{indent}  expires_at: null\n{indent}  tags: [outside]\n")


def outside_id(n: int) -> str:
    return f"MEM-20260201-ou{chr(97 + n // 26 % 26)}{chr(97 + n % 26)}wxyz"


@pytest.fixture
def facts(cli: Cli) -> list[str]:
    return [support.remember(cli, f"Fact {n} about {word}.", "fact")
            for n, word in enumerate(["caching", "queues", "logging", "tracing", "deploys"])]


def test_entries_appended_by_a_pull_are_found_and_later_writes_edit_the_right_lines(
        cli: Cli, store: Path, facts: list[str]) -> None:
    other = store.parent / "other"
    git(store.parent, "clone", "-q", str(store), str(other))
    added = [outside_id(n) for n in range(20)]
    with open(other / FACTS, "a", encoding="utf-8") as handle:
        handle.write("".join(entry_text(i, f"Pulled fact {n} about kafka.")
                             for n, i in enumerate(added)))
    git(other, "commit", "-qam", "twenty facts")
    view(cli)  # the index is warm before the pull
    git(store, "pull", "-q", "--no-rebase", str(other), "HEAD")

    assert len(cli.ok("recall", "kafka", "--limit", "50", "--json").json()["results"]) == 20
    cli.ok("forget", facts[2], "--reason", "obsolete")
    cli.ok("forget", added[7], "--reason", "obsolete")
    assert [e["id"] for e in support.entries(store, "fact")] == [
        i for i in [*facts, *added] if i not in (facts[2], added[7])]
    assert view(cli) == cold_view(cli)


def test_an_entry_edited_in_an_editor_is_found_by_its_new_words_only(
        cli: Cli, store: Path, facts: list[str]) -> None:
    path = store / FACTS
    view(cli)
    path.write_text(path.read_text(encoding="utf-8").replace(
        "Fact 1 about queues.", "Fact 1 about\n    message brokers."), encoding="utf-8")

    assert [r["id"] for r in cli.ok("recall", "brokers", "--json").json()["results"]] == [
        facts[1]]
    assert cli.ok("recall", "queues", "--json").json()["results"] == []
    assert view(cli) == cold_view(cli)


def test_a_deleted_and_a_moved_entry(cli: Cli, store: Path, facts: list[str]) -> None:
    path = store / FACTS
    view(cli)
    items = _split(path.read_text(encoding="utf-8"))
    head, body = items[0], items[1:]
    # the first entry deleted, the last moved to the top, a comment between two entries
    body = [body[4], body[1], "# kept by hand\n\n", body[2], body[3]]
    path.write_text(head + "".join(body), encoding="utf-8")

    assert cli("show", facts[0]).code == 1
    cli.ok("forget", facts[4], "--reason", "moved then forgotten")
    assert [e["id"] for e in support.entries(store, "fact")] == facts[1:4]
    assert "# kept by hand" in path.read_text(encoding="utf-8")
    assert view(cli) == cold_view(cli)


def test_every_entry_deleted_by_hand(cli: Cli, store: Path, facts: list[str]) -> None:
    path = store / FACTS
    view(cli)
    path.write_text(_split(path.read_text(encoding="utf-8"))[0], encoding="utf-8")

    assert cli.ok("recall", "--json").json()["results"] == []
    assert view(cli) == cold_view(cli)


ODD_EDITS = {
    "block scalar holding a comment-like line": (
        "  content: Fact 3 about tracing.\n",
        "  content: |\n    Fact 3 about tracing.\n    # not a comment\n"),
    "item opened by a dash alone": ("- id: ", "-\n  id: "),
    "windows line endings": ("\n", "\r\n"),
    "quoted text over lines": ("  content: Fact 2 about logging.\n",
                               "  content: \"Fact 2 about\n    logging, quoted.\"\n"),
    "a flow-style list": (None, None),
    "comments inside entries": ("  ttl: permanent\n", "  # on purpose\n  ttl: permanent\n"),
    "a document marker": ("# Loa memory", "---\n# Loa memory"),
}


@pytest.mark.parametrize("edit", list(ODD_EDITS))
def test_hand_edits_in_odd_yaml(cli: Cli, store: Path, facts: list[str], edit: str) -> None:
    path = store / FACTS
    view(cli)
    text = path.read_text(encoding="utf-8")
    old, new = ODD_EDITS[edit]
    if old is None:
        entries = support.entries(store, "fact")
        text = "[" + ", ".join(f"{{id: {e['id']}, category: fact, content: '{e['content']}', "
                               "confidence: 0.8}" for e in entries) + "]\n"
    else:
        text = text.replace(old, new)
    path.write_bytes(text.encode("utf-8"))

    assert view(cli) == cold_view(cli)


def test_a_checkout_and_a_rebase_switch_what_recall_sees(cli: Cli, store: Path,
                                                         facts: list[str]) -> None:
    git(store, "checkout", "-q", "-b", "topic")
    topic = support.remember(cli, "Topic branch fact about grpc.", "fact")
    git(store, "checkout", "-q", "main")
    assert cli.ok("recall", "grpc", "--json").json()["results"] == []
    on_main = support.remember(cli, "Main branch fact about rest.", "fact")
    git(store, "checkout", "-q", "topic")
    assert [r["id"] for r in cli.ok("recall", "grpc", "--json").json()["results"]] == [topic]
    git(store, "rebase", "-q", "main")

    found = {r["id"] for r in cli.ok("recall", "--limit", "50", "--json").json()["results"]}
    assert {topic, on_main, *facts} <= found
    assert view(cli) == cold_view(cli)


def _split(text: str) -> list[str]:
    """The file's header, then each top-level item's lines."""
    parts = text.split("\n- ")
    return [parts[0] + "\n", *("- " + p + "\n" for p in parts[1:-1]), "- " + parts[-1]]


EDITS = st.lists(st.tuples(st.sampled_from(["append", "edit", "delete", "move", "comment"]),
                           st.integers(0, 50)), min_size=1, max_size=4)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=EDITS)
def test_any_series_of_outside_edits_reads_as_a_cold_build(
        cli: Cli, store: Path, facts: list[str], steps: list[tuple[str, int]]) -> None:
    path = store / FACTS
    git(store, "checkout", "-q", "--", FACTS)
    for number, (kind, at) in enumerate(steps):
        parts = _split(path.read_text(encoding="utf-8"))
        head, items = parts[0], parts[1:]
        where = at % max(len(items), 1)
        if kind == "append":
            items.append(entry_text(outside_id(100 * number + at), f"Outside fact {at} on kafka."))
        elif kind == "edit" and items:
            items[where] = items[where].replace("about", f"about {at} more", 1)
        elif kind == "delete" and items:
            items.pop(where)
        elif kind == "move" and items:
            items.append(items.pop(where))
        elif kind == "comment":
            items.insert(where, f"# note {at}\n\n")
        path.write_text(head + "".join(items), encoding="utf-8")
        assert view(cli) == cold_view(cli)


def test_recall_after_an_outside_change_catches_up_without_the_full_command_line(
        cli: Cli, store: Path, facts: list[str]) -> None:
    run_loa_mem(store, "recall")
    with open(store / FACTS, "a", encoding="utf-8") as handle:
        handle.write(entry_text(outside_id(1), "Pulled fact about kafka."))
    done = run_loa_mem(store, "recall", "kafka", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}

    assert [r["id"] for r in json.loads(done.stdout)["results"]] == [outside_id(1)]
    assert "loa_mem.memory.reread" in imported
    # entries in loa-mem's own layout (timestamps included) are read without a YAML library
    assert not {name.split(".")[0] for name in imported} & {"typer", "click", "rich", "yaml"}


def cold_copy_view(store: Path, where: Path) -> dict[str, Any]:
    """What a cold build of a copy of the repository shows (the store's own index untouched)."""
    copy = where / f"copy-{len(list(where.iterdir()))}"
    shutil.copytree(store, copy)
    (copy / ".git" / "loa-mem" / "index.sqlite3").unlink()
    return view(Cli(copy))


EXAMPLES = itertools.count()
PULLS = st.lists(st.tuples(st.sampled_from(["pull", "pull", "comment", "continue", "edit",
                                            "remember", "nothing"]), st.integers(0, 40)),
                 min_size=2, max_size=6)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=PULLS)
def test_pull_after_pull_reads_as_a_cold_build(
        cli: Cli, store: Path, facts: list[str], tmp_path_factory: pytest.TempPathFactory,
        steps: list[tuple[str, int]]) -> None:
    # each catch-up records the file's hash, so the next pull reads only what it appended;
    # an edit above the end, a write by loa-mem or lines that continue the last entry make
    # it read the file item by item again
    where = tmp_path_factory.mktemp("copies")
    path = store / FACTS
    git(store, "checkout", "-q", "--", FACTS)
    # the store outlives one example and a remember is committed: the text must be new
    example = next(EXAMPLES)
    view(cli)
    for number, (kind, at) in enumerate(steps):
        text = path.read_text(encoding="utf-8")
        if kind == "pull":
            text += "".join(entry_text(outside_id(100 * number + at + n), f"Pulled {at} on kafka.")
                            for n in range(1 + at % 3))
        elif kind == "comment":
            text += f"# pulled {at}\n\n"
        elif kind == "continue":
            text += f"  note: continued {at}\n"
        elif kind == "edit":
            # the same length above, so only the recorded hash tells the change
            text = text.replace("about", "ABOUT", 1) + entry_text(
                outside_id(100 * number + at), f"Edited then pulled {at}.")
        elif kind == "remember":
            support.remember(cli, f"Remembered {example} {number} {at} about kafka.", "fact")
            text = path.read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        assert view(cli) == cold_copy_view(store, where)


STAMPS = st.builds(
    lambda date, time, zone: date + time + zone,
    st.from_regex(r"[0-9]{3,5}-[0-9]{1,2}-[0-9]{1,3}", fullmatch=True),
    st.sampled_from(["", "T10:00:00", "T1:00:00", "t10:00:00", " 10:00:00", "T10:00",
                     "T10:00:00.25", "T10:00:00."]),
    st.sampled_from(["", "Z", "+01:00", "-05:30", "+1", "z", " Z"]))


@settings(max_examples=300, deadline=None)
@given(stamp=STAMPS)
def test_timestamps_read_as_the_yaml_library_reads_them(stamp: str) -> None:
    # a pull brings timestamps in every entry: the fast reader takes the usual forms itself
    from loa_mem.core import yamlfast, yamlio

    text = f"- id: MEM-1\n  source:\n    timestamp: {stamp}\n"
    assert yamlfast.load_list(text, "x.yaml").items[0].data == yamlio.load_list(
        text, "x.yaml").items[0].data
