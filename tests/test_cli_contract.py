"""The command contract of spec section 6: every command's happy path, its --json shape and its
exit code; init; what happens outside a repository; usage errors; stdin."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import support
from tests.conftest import FIXED_NOW, Cli, git, run_loa_mem

ID = "MEM-20260201-001"  # a (legacy) id no store in these tests holds


def test_init_creates_the_store_and_one_commit(repo: Path) -> None:
    data = Cli(repo).ok("init", "--json").json()

    assert set(data) >= {"root", "created", "commit"}
    assert Path(data["root"]) == repo.resolve()
    # Features may add files of their own at init (on_init); the core's are all there.
    assert set(data["created"]) >= {
        ".loa.config.yaml", *(f"{support.MEMORY}/{f}" for f in support.FILES.values()),
        f"{support.MEMORY}/events.jsonl"}
    assert data["commit"] == support.head(repo)
    assert support.commit_count(repo) == 1
    assert support.message(repo).startswith("loa-mem init: ")
    assert support.porcelain(repo) == ""
    assert support.events(repo)[0]["op"] == "init"


def test_init_creates_the_git_repository_when_there_is_none(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    result = run_loa_mem(folder, "init", "--json")

    assert result.returncode == 0, result.stderr
    assert (folder / ".git").is_dir()
    assert support.commit_count(folder) == 1
    assert (folder / ".loa.config.yaml").is_file()


def test_init_twice_changes_nothing(store: Path) -> None:
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = Cli(store).ok("init", "--json")

    assert outcome.json()["created"] == []
    assert outcome.json()["commit"] is None
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_init_keeps_an_existing_config(repo: Path) -> None:
    config = repo / ".loa.config.yaml"
    config.write_text("# mine\nmemory_schema:\n  retrieval: {max_per_query: 3}\n", encoding="utf-8")
    created = Cli(repo).ok("init", "--json").json()["created"]

    assert ".loa.config.yaml" not in created
    assert config.read_text(encoding="utf-8").startswith("# mine\n")


COMMANDS_NEEDING_A_STORE = [
    ("remember", "Some fact", "-c", "fact"),
    ("recall",),
    ("recall", "query"),
    ("show", ID),
    ("supersede", ID, "New content"),
    ("archive", ID),
    ("archive", "--expired"),
    ("forget", ID, "--reason", "wrong"),
    ("restore", ID),
    ("history", ID),
    ("feedback", ID, "--success"),
    ("validate",),
    ("status",),
    ("commit",),
]


@pytest.mark.parametrize("args", COMMANDS_NEEDING_A_STORE, ids=lambda a: " ".join(a[:2]))
def test_outside_a_repository_every_command_but_init_says_to_run_init(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    outcome = Cli(outside)(*args)

    assert outcome.code == 1
    assert outcome.stdout == ""
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert "loa-mem init" in outcome.stderr
    assert list(outside.iterdir()) == []


def test_outside_a_repository_as_a_real_process(tmp_path: Path) -> None:
    result = run_loa_mem(tmp_path, "remember", "Some fact", "-c", "fact")

    assert result.returncode == 1
    assert "loa-mem init" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".git").exists()


def test_schema_works_anywhere_and_prints_the_entry_schema(tmp_path: Path) -> None:
    # `schema` reads nothing from a store, so it is the one command besides init that does
    # not need one (a careful user would expect `loa-mem schema > x.json` to work anywhere).
    outcome = Cli(tmp_path)("schema", "--json")

    assert outcome.code == 0
    schema = outcome.json()
    assert schema["title"] == "Loa memory entry"
    assert schema["properties"]["id"]["$ref"] == "#/$defs/memory_id"
    pattern = schema["$defs"]["memory_id"]["pattern"]
    assert pattern == r"^MEM-\d{8}-([a-z2-7]{6,}|\d{3,})$"
    assert re.match(pattern, "MEM-20260201-k7x2mq4a")
    assert re.match(pattern, "MEM-20260201-001")
    assert not re.match(pattern, "MEM-20260201-01")
    assert {"null"} <= {o.get("type") for o in schema["properties"]["expires_at"]["oneOf"]}


def test_remember_json_shape(cli: Cli, store: Path) -> None:
    data = cli.ok("remember", "The API listens on port 8080.", "-c", "fact", "--json").json()

    support.assert_new_id(data["id"])
    assert support.entry(store, data["id"])["content"] == "The API listens on port 8080."
    assert data["created"] is True
    assert data["category"] == "fact"
    assert data["path"] == f"{support.MEMORY}/facts.yaml"
    assert data["commit"] == support.head(store)


def test_remember_human_output_goes_to_stdout(cli: Cli, store: Path) -> None:
    outcome = cli.ok("remember", "The API listens on port 8080.", "-c", "fact")

    [memory_id] = support.all_ids(store)
    assert memory_id in outcome.stdout
    assert outcome.stderr == ""


def test_remember_dash_reads_stdin(cli: Cli, store: Path) -> None:
    text = "Read from standard input.\nIt keeps its second line."
    data = cli.ok("remember", "-", "-c", "learning", "--json", stdin=text + "\n").json()

    written = support.entry(store, data["id"])
    # The newline that ends piped input is not part of what was meant.
    assert written["content"] == text
    assert written["summary"] == "Read from standard input."


def test_recall_json_shape(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact", "-t", "deploy")
    data = cli.ok("recall", "helm", "--json").json()

    assert set(data) >= {"query", "results"}
    assert data["query"] == "helm"
    [hit] = data["results"]
    assert set(hit) >= {"id", "category", "content", "summary", "confidence", "score"}
    assert (hit["id"], hit["category"], hit["confidence"]) == (memory_id, "fact", 0.8)
    assert hit["content"] == "We deploy with Helm charts."
    assert hit["tags"] == ["deploy"]
    assert isinstance(hit["score"], float)


def test_recall_with_no_match_is_an_empty_list_and_exit_0(cli: Cli) -> None:
    outcome = cli.ok("recall", "nothing-like-this", "--json")

    assert outcome.json()["results"] == []


def test_show_json_shape(cli: Cli) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact")
    data = cli.ok("show", memory_id, "--json").json()

    assert data["entry"]["id"] == memory_id
    assert data["entry"]["content"] == "We deploy with Helm charts."
    assert data["path"] == f"{support.MEMORY}/facts.yaml"
    assert data["line"] == 3  # after the two header comment lines init writes
    assert data["state"] == "active"
    assert data["tier"] == "untested"
    assert data["chain"] == [memory_id]


@pytest.mark.parametrize("args", [("show", "MEM-20260101-001"), ("history", "MEM-20260101-001"),
                                  ("feedback", "MEM-20260101-001", "--success"),
                                  ("forget", "MEM-20260101-001", "--reason", "x"),
                                  ("restore", "MEM-20260101-001"),
                                  ("archive", "MEM-20260101-001"),
                                  ("supersede", "MEM-20260101-001", "new")])
def test_unknown_id_is_not_found_exit_1(cli: Cli, args: tuple[str, ...]) -> None:
    outcome = cli(*args)

    assert outcome.code == 1
    assert "MEM-20260101-001" in outcome.stderr
    assert outcome.stdout == ""


@pytest.mark.parametrize("bad", ["MEM-1", "mem-20260101-001", "MEM-20260101-01", "42"])
def test_malformed_id_is_refused(cli: Cli, bad: str) -> None:
    outcome = cli("show", bad)

    assert outcome.code == 1
    assert "MEM-" in outcome.stderr  # the hint shows what an id looks like


def test_supersede_json_shape(cli: Cli, store: Path) -> None:
    old = support.remember(cli, "We deploy with Helm charts.", "fact")
    data = cli.ok("supersede", old, "We deploy with Kustomize.", "--json").json()

    assert data["created"] is True
    assert data["supersedes"] == old
    support.assert_new_id(data["id"])
    assert data["id"] != old
    assert support.entry(store, data["id"])["supersedes"] == old
    assert data["category"] == "fact"
    assert data["commit"] == support.head(store)


def test_archive_forget_restore_feedback_share_one_shape(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact")
    shapes = {
        "feedback": cli.ok("feedback", memory_id, "--success", "--json").json(),
        "archive": cli.ok("archive", memory_id, "--json").json(),
        "restore": cli.ok("restore", memory_id, "--json").json(),
        "forget": cli.ok("forget", memory_id, "--reason", "obsolete", "--json").json(),
    }
    for op, data in shapes.items():
        assert set(data) >= {"op", "ids", "reason", "dry_run", "commit"}, op
        assert data["op"] == op
        assert data["ids"] == [memory_id]
        assert data["dry_run"] is False
    assert shapes["forget"]["commit"] == support.head(store)
    assert shapes["archive"]["reason"] == "manual"
    assert shapes["forget"]["reason"] == "obsolete"
    assert shapes["feedback"]["effectiveness"]["score"] == 100
    assert shapes["feedback"]["tier"] == "high"


def test_history_json_shape(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact")
    data = cli.ok("history", memory_id, "--json").json()

    assert data["id"] == memory_id
    [only] = data["commits"]
    assert set(only) >= {"sha", "date", "subject"}
    assert only["sha"] == support.head(store)
    assert only["subject"].startswith("loa-mem remember: ")


def test_validate_json_shape(cli: Cli) -> None:
    support.remember(cli, "We deploy with Helm charts.", "fact")
    data = cli.ok("validate", "--json").json()

    assert data["ok"] is True
    assert data["problems"] == []
    assert data["entries"] == 1


def test_status_json_shape(cli: Cli, store: Path) -> None:
    support.remember(cli, "We deploy with Helm charts.", "fact")
    support.remember(cli, "Flaky test in CI is the clock.", "error")
    data = cli.ok("status", "--json").json()

    assert set(data) >= {"root", "counts", "expiring_soon", "pending"}
    assert data["counts"]["fact"] == {"active": 1, "expired": 0, "superseded": 0, "archived": 0}
    assert data["counts"]["error"]["active"] == 1
    assert data["expiring_soon"] == []
    assert data["pending"] == []
    assert data["warn_before_archive_days"] == 7


def test_commit_json_shape(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact", "--no-commit")
    data = cli.ok("commit", "--json").json()

    assert data["commit"] == support.head(store)
    assert data["paths"] == [f"{support.MEMORY}/events.jsonl", f"{support.MEMORY}/facts.yaml"]
    assert data["ops"] == ["remember"]
    assert ("Loa-Id", memory_id) in support.trailers(store)


def test_commit_with_nothing_pending_exits_1(cli: Cli) -> None:
    outcome = cli("commit")

    assert outcome.code == 1
    assert "nothing" in outcome.stderr


@pytest.mark.parametrize("args", [
    ("remember", "Missing category"),
    ("remember", "x", "-c", "fact", "--no-such-option"),
    ("no-such-command",),
    ("recall", "--limit", "0"),
    ("recall", "--limit", "many"),
    ("remember", "x", "-c", "fact", "--confidence", "high"),
    ("forget", ID),
])
def test_usage_errors_exit_2_without_a_traceback(store: Path, args: tuple[str, ...]) -> None:
    result = run_loa_mem(store, *args)

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "unexpected error" not in result.stderr
    assert result.stdout == ""


def test_content_that_starts_with_a_dash_goes_after_double_dash(cli: Cli, store: Path) -> None:
    outcome = cli.ok("remember", "-c", "fact", "--json", "--", "-v prints the version")

    assert support.entry(store, outcome.json()["id"])["content"] == "-v prints the version"


def test_every_json_output_is_one_object(cli: Cli) -> None:
    memory_id = support.remember(cli, "We deploy with Helm charts.", "fact")
    for args in (("recall",), ("show", memory_id), ("status",), ("validate",),
                 ("history", memory_id),
                 ("archive", "--expired", "--dry-run")):
        outcome = cli.ok(*args, "--json")
        assert isinstance(json.loads(outcome.stdout), dict), args


def test_version(repo: Path) -> None:
    result = run_loa_mem(repo, "--version")

    assert result.returncode == 0
    assert result.stdout.startswith("loa-mem ")


def test_real_process_round_trip_with_fixed_clock(store: Path) -> None:
    result = run_loa_mem(store, "remember", "Real process entry.", "-c", "fact", "--json")

    assert result.returncode == 0, result.stderr
    memory_id = json.loads(result.stdout)["id"]
    assert support.entry(store, memory_id)["source"]["timestamp"] == FIXED_NOW
    assert git(store, "log", "-1", "--format=%s").startswith("loa-mem remember: " + memory_id)


def test_remember_in_a_repository_without_a_store_refuses_and_writes_nothing(repo: Path
                                                                             ) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    before = support.snapshot(repo)
    done = run_loa_mem(repo, "remember", "A fact about the build.", "-c", "fact", "--json")

    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["kind"] == "no-store"
    assert done.stderr.startswith("loa-mem: no-store: ") and "loa-mem init" in done.stderr
    assert support.snapshot(repo) == before
    assert support.commit_count(repo) == 1
