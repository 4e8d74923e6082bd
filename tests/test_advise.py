"""advise (spec section 7): hot.yml and cold.yml in the kernel format, kept across calls, and
loa-mem's answer to each hint: honored, deferred, overridden or promoted, with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import support
from tests import ws_support as ws
from tests.conftest import FIXED_NOW, Cli

LATER = "2026-02-01T11:00:00Z"


def test_hot_hints_keep_since_and_count_touches_across_calls(cli: Cli, store: Path) -> None:
    ws.write(store, "src/parser.py", "def parse(x):\n    return x\n")
    cli.ok("advise", "--hot", "src/parser.py", "--why", "debugging the parser")
    cli.ok("advise", "--hot", "src/parser.py", "--why", "still debugging", now=LATER)

    manifest = ws.hot(store)
    assert manifest["protocol"] == "MEMORY-MGMT/0.1"
    assert manifest["updated"] == LATER
    assert manifest["turn"] == 2
    assert manifest["keep"] == [{
        "path": "src/parser.py", "why": "still debugging", "since": FIXED_NOW, "touches": 2,
        "last_touch": LATER, "last_turn": 2}]


def test_cold_hint_is_honored_recorded_logged_and_committed(cli: Cli, store: Path) -> None:
    ws.write(store, "tool/log-001.txt", "build ok\n")
    before = support.commit_count(store)
    data = cli.ok("advise", "--cold", "tool/log-001.txt", "--action", "summarize_then_evict",
                  "--why", "old build log", "--json").json()

    assert data["memory_actions"] == [{
        "path": "tool/log-001.txt", "model_suggested": "evict",
        "suggested_action": "summarize_then_evict", "action_taken": "honored",
        "reason": "on the cold list for gc (summarize_then_evict)"}]
    assert ws.cold(store)["evict"] == [{"path": "tool/log-001.txt", "why": "old build log",
                                        "last_touch": None,
                                        "suggested_action": "summarize_then_evict"}]
    event = support.events(store)[-1]
    assert event["op"] == "advise"
    assert event["memory_actions"] == data["memory_actions"]
    assert support.commit_count(store) == before + 1
    assert data["commit"] == support.head(store)
    assert "honored: tool/log-001.txt" in support.message(store)
    assert support.porcelain(store) == ""


KEPT = [
    (".loa.config.yaml", "config"),
    ("grimoires/loa/memory/events.jsonl", "audit trail"),
    ("grimoires/loa/memory/decisions.yaml", "decisions"),
    ("docs/constitution.md", "working_set.keep"),
]


@pytest.mark.parametrize(("path", "said"), KEPT, ids=[k[1] for k in KEPT])
def test_files_that_must_be_kept_are_overridden(cli: Cli, store: Path, path: str,
                                                 said: str) -> None:
    if not (store / path).exists():
        ws.write(store, path, "# Constitution\n")
    data = cli.ok("advise", "--cold", path, "--action", "archive", "--why", "too big",
                  "--postmortem", "grew too big", "--json").json()

    action, reason = ws.taken(data)[path]
    assert action == "overridden"
    assert said in reason
    assert ws.cold_paths(store) == []


def test_a_pinned_file_is_overridden_with_the_reason(cli: Cli, store: Path) -> None:
    ws.write(store, "notes.md", "keep me\n")
    cli.ok("pin", "notes.md")
    data = cli.ok("advise", "--cold", "notes.md", "--why", "stale", "--json").json()

    assert ws.taken(data)["notes.md"] == (
        "overridden", "pinned (pin: true in notes.md.meta.yml); unpin it to let it go")
    cli.ok("unpin", "notes.md")
    data = cli.ok("advise", "--cold", "notes.md", "--why", "stale", "--json").json()
    assert ws.taken(data)["notes.md"][0] == "honored"


def test_a_file_the_user_referenced_is_promoted(cli: Cli, store: Path) -> None:
    ws.write(store, "user_preferences.yml", "theme: dark\n")
    ws.write(store, "log.txt", "x\n")
    data = cli.ok("advise", "--referenced", "user_preferences.yml", "--cold", "log.txt",
                  "--why", "done with it", "--json").json()

    promoted = data["memory_actions"][0]
    assert promoted == {"path": "user_preferences.yml", "model_suggested": None,
                        "suggested_action": None, "action_taken": "promoted",
                        "reason": "the user referenced it"}
    assert ws.hot_paths(store) == ["user_preferences.yml"]
    assert ws.hot(store)["keep"][0]["why"] == "the user referenced it"


def test_a_referenced_file_stays_hot_over_a_cold_hint(cli: Cli, store: Path) -> None:
    ws.write(store, "spec.md", "x\n")
    data = cli.ok("advise", "--cold", "spec.md", "--why", "old", "--referenced", "spec.md",
                  "--json").json()

    assert ws.taken(data)["spec.md"] == ("promoted",
                                         "the user referenced it; kept hot over the cold hint")
    assert data["memory_actions"][0]["model_suggested"] == "evict"
    assert ws.hot_paths(store) == ["spec.md"]
    assert ws.cold_paths(store) == []


@pytest.mark.parametrize("args", [
    ("--hot", "nope.txt", "--why", "w"),
    ("--cold", "nope.txt", "--why", "w"),
    ("--referenced", "nope.txt"),
], ids=["hot", "cold", "referenced"])
def test_a_hint_on_a_missing_path_is_refused_by_name(cli: Cli, store: Path,
                                                     args: tuple[str, ...]) -> None:
    ws.write(store, "real.txt", "x\n")
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli("advise", "--hot", "real.txt", *args)

    assert outcome.code == 1
    assert "nope.txt" in outcome.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


@pytest.mark.parametrize(("args", "said"), [
    (("--hot", "a.txt", "--cold", "a.txt", "--why", "w"), "more than once"),
    (("--hot", "a.txt"), "say why"),
    (("--cold", "a.txt", "--action", "shred", "--why", "w"), "shred"),
    (("--hot", "a.txt", "--action", "archive", "--why", "w"), "--action must follow"),
    (("--hot", "../outside.txt", "--why", "w"), "outside"),
    (("--why", "nothing named"), "no hints"),
], ids=["twice", "no-why", "bad-action", "action-on-hot", "outside", "no-hints"])
def test_bad_hints_are_refused_and_nothing_is_written(cli: Cli, store: Path,
                                                      args: tuple[str, ...], said: str) -> None:
    ws.write(store, "a.txt", "x\n")
    before = support.snapshot(store)
    outcome = cli("advise", *args)

    assert outcome.code == 1
    assert said in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert support.snapshot(store) == before


def test_each_why_pairs_with_its_hint_and_a_lone_why_covers_the_rest(cli: Cli,
                                                                    store: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        ws.write(store, name, "x\n")
    cli.ok("advise", "--why", "end of phase", "--hot", "a.txt", "--why", "reading it",
           "--cold", "b.txt", "--action", "archive", "--why", "failed attempt",
           "--postmortem", "wrong approach", "--cold", "c.txt")

    assert ws.hot(store)["keep"][0]["why"] == "reading it"
    assert [(i["path"], i["why"], i["suggested_action"]) for i in ws.cold(store)["evict"]] == [
        ("b.txt", "failed attempt", "archive"),
        ("c.txt", "end of phase", "delete_from_working_set")]


def test_a_quick_change_of_mind_is_deferred_then_honored(cli: Cli, store: Path) -> None:
    ws.write(store, "draft.md", "x\n")
    cli.ok("advise", "--hot", "draft.md", "--why", "writing it")
    first = cli.ok("advise", "--cold", "draft.md", "--why", "done", "--json").json()
    second = cli.ok("advise", "--cold", "draft.md", "--why", "done", "--json").json()

    assert ws.taken(first)["draft.md"] == (
        "deferred", "hot-listed 1 turn(s) ago: a quick change of mind; hint it cold again "
        "to confirm")
    assert ws.taken(second)["draft.md"][0] == "honored"
    assert ws.cold_paths(store) == ["draft.md"]


def test_compressing_uncommitted_work_is_deferred(cli: Cli, store: Path) -> None:
    ws.write(store, "run.log", "line\n" * 50, commit=False)
    ws.write(store, "old.log", "line\n" * 50)
    data = cli.ok("advise", "--cold", "run.log", "--action", "compress", "--cold", "old.log",
                  "--action", "compress", "--why", "noisy", "--json").json()

    action, reason = ws.taken(data)["run.log"]
    assert (action, reason.split(":")[0]) == ("deferred", "not committed")
    assert ws.taken(data)["old.log"][0] == "honored"
    assert ws.cold_paths(store) == ["old.log"]


def test_a_hot_hint_takes_a_file_off_the_cold_list(cli: Cli, store: Path) -> None:
    ws.write(store, "a.txt", "x\n")
    cli.ok("advise", "--cold", "a.txt", "--why", "done")
    data = cli.ok("advise", "--hot", "a.txt", "--why", "needed again", "--json").json()

    assert ws.taken(data)["a.txt"] == ("honored", "on the hot list (left the cold list)")
    assert ws.cold_paths(store) == []
    assert ws.hot_paths(store) == ["a.txt"]


def test_the_memory_advise_json_on_stdin(cli: Cli, store: Path) -> None:
    ws.write(store, "src/parser.ts", "x\n")
    ws.write(store, "out.json", "{}\n")
    request = {"why": "end of the parsing task",
               "hot": [{"path": "src/parser.ts", "why": "currently debugging"}],
               "cold": [{"path": "out.json", "why": "extracted",
                         "suggested_action": "archive", "postmortem": "the format changed"}]}
    data = cli.ok("advise", "-", "--json", stdin=json.dumps(request)).json()

    assert [(a["path"], a["action_taken"]) for a in data["memory_actions"]] == [
        ("src/parser.ts", "honored"), ("out.json", "honored")]
    assert ws.cold(store)["evict"][0]["suggested_action"] == "archive"
    assert support.events(store)[-1]["reason"] == "end of the parsing task"


@pytest.mark.parametrize(("stdin", "said"), [
    ('{"hot": [{"path": "a.txt"}]}', "'why' is a required property"),
    ('{"why": "w", "cold": [{"path": "a.txt", "suggested_action": "burn"}]}',
     "cold.0.suggested_action"),
    ('{"why": "w", "hot": [{"file": "a.txt"}]}', "hot.0"),
    ("not json", "stdin is not JSON"),
], ids=["no-why", "bad-action", "bad-item", "not-json"])
def test_bad_memory_advise_json_is_refused(cli: Cli, store: Path, stdin: str, said: str) -> None:
    ws.write(store, "a.txt", "x\n")
    before = support.snapshot(store)
    outcome = cli("advise", "-", stdin=stdin)

    assert outcome.code == 1
    assert said in outcome.stderr
    assert support.snapshot(store) == before


def test_a_sidecar_is_created_with_the_defaults_when_a_file_is_first_tracked(
        cli: Cli, store: Path) -> None:
    ws.write(store, "tool/output-large.json", "{}\n")
    cli.ok("advise", "--hot", "tool/output-large.json", "--why", "reading")

    assert ws.sidecar(store, "tool/output-large.json") == {
        "title": "output-large", "summary": "(needs summary)", "tags": [],
        "hotness": 0.8,  # .3 touched this turn + .2 in the working set + .3 hot-listed
        "pin": False,
        "provenance": {"created_by": "user:" + support_user(), "created_at": FIXED_NOW,
                       "updated_at": FIXED_NOW}}
    assert "tool/output-large.json.meta.yml" in support.changed_files(store)


def test_the_human_view_is_a_table_of_memory_actions(cli: Cli, store: Path) -> None:
    ws.write(store, "a.txt", "x\n")
    out = cli.ok("advise", "--cold", "a.txt", "--why", "done").stdout

    assert out.splitlines()[0] == "memory_actions"
    assert out.splitlines()[1].split() == ["PATH", "MODEL", "SUGGESTED", "ACTION", "TAKEN",
                                           "REASON"]
    assert "a.txt" in out and "honored" in out


def support_user() -> str:
    import getpass

    return getpass.getuser()
