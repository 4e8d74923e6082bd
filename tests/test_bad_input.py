"""Bad input and faults: a clear one-line error (exit 1, or 2 for usage), nothing written and
no crash, for what a user can type and for any file a user can commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import Cli, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"
DECISIONS = f"{support.MEMORY}/decisions.yaml"
EVENTS = f"{support.MEMORY}/events.jsonl"


@pytest.fixture
def filled(cli: Cli) -> dict[str, str]:
    """A store with a fact, a decision and an error, committed; their ids by category."""
    return {"fact": support.remember(cli, "The service is written in Go.", "fact"),
            "decision": support.remember(cli, "Use PostgreSQL for the database.", "decision",
                                         "--confidence", "0.95"),
            "error": support.remember(cli, "The parser test flakes under xdist.", "error")}


class Unchanged:
    """The working tree and the history as they were: nothing written, nothing committed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = support.snapshot(root)
        self.head = support.head(root)

    def check(self) -> None:
        assert support.snapshot(self.root) == self.files
        assert support.head(self.root) == self.head
        assert not [p for p in self.root.rglob("*") if p.name.endswith((".tmp", ".old"))]


def no_crash(outcome: Any) -> None:
    assert "Traceback" not in outcome.stderr and "unexpected error" not in outcome.stderr


# -- what a user types ---------------------------------------------------------------------------
NOT_UTF8 = "bad \udcff text"  # how Python hands over the byte 0xff of an argument


@pytest.mark.parametrize("args", [
    ("remember", NOT_UTF8, "-c", "fact"),
    ("remember", "A good fact here.", "-c", "fact", "--summary", NOT_UTF8),
    ("remember", "A good fact here.", "-c", "fact", "--session", NOT_UTF8),
    ("remember", "A good fact here.", "-c", "fact", "--agent", NOT_UTF8),
    ("remember", "A good fact here.", "-c", "fact", f"--summary={NOT_UTF8}"),
    ("forget", "ID", "--reason", NOT_UTF8),
    ("pref", "set", "editor", NOT_UTF8),
])
def test_an_argument_that_is_not_utf8_is_refused_and_nothing_is_written(
        cli: Cli, store: Path, filled: dict[str, str], args: tuple[str, ...]) -> None:
    args = tuple(filled["fact"] if a == "ID" else a for a in args)
    before = Unchanged(store)
    line = support.one_line_error(cli(*args))

    assert "is not valid UTF-8 (byte 0xff" in line and "nothing was written" in line
    assert "\udcff" not in line
    before.check()


def test_a_real_process_refuses_a_non_utf8_argument_by_name(store: Path) -> None:
    before = Unchanged(store)
    done = run_loa_mem(store, "remember", "A good fact here.", "-c", "fact",
                       "--summary", NOT_UTF8)

    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("loa-mem: refused: argument 6 (after --summary) is not valid UTF-8 "
                           "(byte 0xff at character 5); loa-mem stores text as UTF-8: convert "
                           "it (for example with iconv) or leave the byte out; nothing was "
                           "written\n")
    before.check()


def test_an_environment_variable_that_is_not_utf8_is_refused(cli: Cli, store: Path) -> None:
    before = Unchanged(store)
    line = support.one_line_error(cli("remember", "A good fact here.", "-c", "fact",
                                      env={"LOA_MEM_SESSION": NOT_UTF8}))
    assert "environment variable LOA_MEM_SESSION is not valid UTF-8" in line
    before.check()


@pytest.mark.parametrize("args", [("remember", "-", "-c", "fact"),
                                  ("import", "-", "--format", "jsonl")])
def test_stdin_that_is_not_utf8_is_refused(store: Path, args: tuple[str, ...]) -> None:
    before = Unchanged(store)
    done = subprocess.run([sys.executable, "-m", "loa_mem", *args], cwd=store,
                          input=b"bad \xff stdin\n", capture_output=True, check=False)
    stderr = done.stderr.decode()

    assert done.returncode == 1, stderr
    assert stderr.startswith("loa-mem: refused: stdin is not valid UTF-8 (byte 0xff at byte 5)")
    assert len(stderr.splitlines()) == 1
    before.check()


def test_a_lone_surrogate_from_a_json_client_is_refused_by_the_rules(store: Path) -> None:
    """A JSON string may spell a surrogate (`"\\udcff"`): the entry rules refuse it."""
    from loa_mem.core.errors import Refused
    from loa_mem.memory.commands.remember import remember
    from loa_mem.memory.rules import NewEntry
    from loa_mem.memory.store import Store

    before = Unchanged(store)
    with pytest.raises(Refused, match=r"content holds a lone surrogate \(U\+DCFF at character 5"):
        remember(Store.open(str(store)), NewEntry("bad \udcff", "fact"), "user:test")
    before.check()


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--ttl", "30d\n", "the ttl (--ttl) is not valid"),
    ("--ttl", "0d", "the ttl (--ttl) is not valid"),
    ("-t", "ok\n", "tag 'ok\\n' is not lowercase kebab-case"),
    ("--lines", "9-3", "the line range (--lines) ends before it starts; use 3-9"),
    ("--lines", "3-9\n", "the line range (--lines) is not valid"),
])
def test_a_flag_value_is_matched_whole_and_refused(cli: Cli, store: Path, option: str,
                                                   value: str, message: str) -> None:
    before = Unchanged(store)
    line = support.one_line_error(cli("remember", "A fact with a bad flag.", "-c", "fact",
                                      option, value, "--file", "a.py"))
    assert message in line
    before.check()


def test_a_hand_written_tag_with_a_newline_fails_validate(cli: Cli, store: Path) -> None:
    support.remember(cli, "A fact to tag by hand.", "fact", "-t", "ok")
    path = store / FACTS
    path.write_text(path.read_text(encoding="utf-8").replace("tags: [ok]", 'tags: ["ok\\n"]'),
                    encoding="utf-8")
    report = cli("validate", "--json")

    assert report.code == 1
    assert [(p["rule"], p["message"]) for p in report.json()["problems"]] == [
        ("schema", "tags.0: does not have the expected form")]


def test_feedback_success_and_failure_together_is_a_usage_error(
        cli: Cli, store: Path, filled: dict[str, str]) -> None:
    before = Unchanged(store)
    outcome = cli("feedback", filled["fact"], "--success", "--failure")

    assert outcome.code == 2
    assert "--success and --failure contradict each other; pass one of them" in outcome.stderr
    no_crash(outcome)
    before.check()


@pytest.mark.parametrize("value", ["abc", "nan", "-1", "inf", "601"])
def test_a_bad_lock_timeout_in_the_environment_is_refused_by_name(
        cli: Cli, store: Path, value: str) -> None:
    before = Unchanged(store)
    line = support.one_line_error(cli("remember", "A fact.", "-c", "fact",
                                      env={"LOA_MEM_LOCK_TIMEOUT": value}))
    assert line == (f"loa-mem: config: LOA_MEM_LOCK_TIMEOUT={value!r} is not a number of "
                    "seconds; use 0 to 600, for example 10, or unset it")
    before.check()


@pytest.mark.parametrize("now", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
                                 "1969-12-31T23:59:59Z"])
def test_a_clock_outside_the_years_loa_mem_can_date_is_refused(cli: Cli, store: Path,
                                                                now: str) -> None:
    before = Unchanged(store)
    for args in (("remember", "A fact from far away.", "-c", "error"), ("recall",)):
        line = support.one_line_error(cli(*args, now=now))
        assert f"LOA_MEM_NOW={now!r} is outside the years 1970-9000" in line
    before.check()


def test_dates_at_the_end_of_the_calendar_in_a_file_are_no_crash(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "An error dated far ahead by hand.", "error")
    path = store / f"{support.MEMORY}/errors.yaml"
    text = path.read_text(encoding="utf-8").replace("2026-02-01T10:30:00Z", "9999-12-31T00:00:00Z")
    path.write_text(text.replace("ttl: 30d", "ttl: 99999d"), encoding="utf-8")
    for args in (("validate",), ("recall", "--include-expired"), ("show", memory_id),
                 ("status",), ("archive", "--expired"), ("gc", "--dry-run")):
        outcome = cli(*args)
        assert outcome.code in (0, 1), (args, outcome.stderr)
        no_crash(outcome)


# -- files a user can commit ---------------------------------------------------------------------
COMMANDS = [("recall",), ("show", "FACT"), ("remember", "Another fact.", "-c", "fact"),
            ("status",), ("export",), ("gc", "--dry-run"), ("archive", "--expired"),
            ("supersede", "FACT", "The service is written in Go 1.22.")]


def _broken(store: Path, how: str) -> None:
    path = store / DECISIONS
    if how == "binary":
        path.write_bytes(b"\xff\xfe\x00binary")
    elif how == "latin-1":
        path.write_bytes("- id: MEM-20260201-009\n  content: caf\xe9\n".encode("latin-1"))
    elif how == "directory":
        path.unlink()
        path.mkdir()
    elif how == "alias bomb":
        lines = [path.read_text(encoding="utf-8"), "- id: MEM-20260201-009",
                 "  category: decision", "  content: &a0 [lol]"]
        lines += [f"  x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("how", "message"), [
    ("binary", f"{DECISIONS}:1:1: not UTF-8 text (byte 0xff); save it as UTF-8, or restore "
               f"it with `git checkout -- {DECISIONS}`"),
    ("latin-1", f"{DECISIONS}:2:15: not UTF-8 text (byte 0xe9)"),
    ("directory", f"{DECISIONS}:1:1: is a directory, where a file belongs"),
    ("alias bomb", "a YAML alias (*a0) in a grimoire file; write the value out"),
])
def test_a_grimoire_that_is_not_a_yaml_text_file_is_named_by_every_command(
        cli: Cli, store: Path, filled: dict[str, str], how: str, message: str) -> None:
    _broken(store, how)
    before = support.snapshot(store), support.head(store)
    for args in COMMANDS:
        line = support.one_line_error(cli(*(filled["fact"] if a == "FACT" else a for a in args)))
        assert line.startswith("loa-mem: invalid-file: ") and message in line, (args, line)
    report = cli("validate", "--json")
    assert report.code == 1
    assert [p["path"] for p in report.json()["problems"]] == [DECISIONS]
    assert (support.snapshot(store), support.head(store)) == before


def test_yaml_aliases_elsewhere_may_not_expand_without_bound(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    bomb = ["memory_schema:", "  enabled: true", "x0: &a0 [lol]"]
    bomb += [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    config.write_text("\n".join(bomb) + "\n", encoding="utf-8")
    line = support.one_line_error(cli("recall"))
    assert "YAML aliases (*a0) expand to more than 100,000 values" in line


def test_a_small_alias_in_the_config_still_works(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text("memory_schema:\n  retrieval: &r {max_per_query: 3}\n", encoding="utf-8")
    cli.ok("recall")


def test_an_emptied_grimoire_does_not_hide_the_entries_git_still_has(
        cli: Cli, store: Path, filled: dict[str, str]) -> None:
    (store / FACTS).write_bytes(b"")
    before = support.snapshot(store), support.head(store)
    for args in (("recall",), ("remember", "Another fact.", "-c", "fact"), ("status",)):
        line = support.one_line_error(cli(*args))
        assert line == (f"loa-mem: invalid-file: {FACTS}:1:1: is empty (0 bytes) but the last "
                        f"commit holds 1 entry; restore it with `git checkout -- {FACTS}`, or "
                        "write `[]` in it to empty it on purpose; nothing was written")
    assert cli("validate").code == 1
    assert (support.snapshot(store), support.head(store)) == before

    git(store, "checkout", "--", FACTS)
    assert [r["id"] for r in cli.ok("recall", "--json").json()["results"]].count(
        filled["fact"]) == 1
    (store / FACTS).write_text("[]\n", encoding="utf-8")  # emptied on purpose
    cli.ok("recall")


@pytest.mark.parametrize("torn", [b'{"op": "remem', b'{"op": "x\xff"}\n'])
def test_a_torn_events_line_is_skipped_and_validate_warns(
        cli: Cli, store: Path, filled: dict[str, str], torn: bytes) -> None:
    lines = (store / EVENTS).read_bytes().count(b"\n")
    with (store / EVENTS).open("ab") as log:
        log.write(torn)
    for args in (("recall",), ("show", filled["fact"]), ("status",), ("export",)):
        cli.ok(*args)
    report = cli.ok("validate", "--json").json()
    assert [(p["path"], p["line"], p["rule"], p["severity"]) for p in report["problems"]] == [
        (EVENTS, lines + 1, "events", "warning")]
    new = support.remember(cli, "A fact after the torn line.", "fact")
    from loa_mem.core import events

    assert events.read_all(store / EVENTS)[-1]["ids"] == [new]  # on a line of its own


# -- read-only places and a full disk ------------------------------------------------------------
OTHER_UID = 65534


def _python_for_others() -> list[str] | None:
    from tests.test_people_isolation import _python_for_others as find

    return find()


def _as_reader(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run loa-mem where it may read but not write the checkout: as another account when this
    runs as root (root writes anywhere), else with the write bits taken away."""
    import sysconfig

    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, sysconfig.get_paths()["purelib"]]),
           "HOME": "/", "GIT_CONFIG_GLOBAL": str(store.parent / "gitconfig")}
    python = _python_for_others() if os.geteuid() == 0 else None
    command = [*(python or [sys.executable, "-m", "loa_mem"]), *args]
    if os.geteuid() == 0:
        return subprocess.run(command, cwd=store, env=env, user=OTHER_UID, group=OTHER_UID,
                              extra_groups=[], capture_output=True, text=True, check=False)
    return subprocess.run(command, cwd=store, env=env, capture_output=True, text=True,
                          check=False)


@pytest.fixture
def read_only(store: Path, filled: dict[str, str]) -> Iterator[Path]:
    """A copy of `store` readable by everyone and writable by no one but root (another account
    runs the commands when this runs as root, in a folder that account can reach)."""
    import shutil
    import tempfile

    if os.geteuid() == 0 and _python_for_others() is None:
        pytest.skip("no Python interpreter with loa-mem is usable by another account here")
    run_loa_mem(store, "context")  # the caches exist, as in any store in use
    base = Path(tempfile.mkdtemp(prefix="loa-mem-read-only-"))
    base.chmod(0o755)
    (base / "gitconfig").write_text("[safe]\n\tdirectory = *\n", encoding="utf-8")
    (base / "gitconfig").chmod(0o644)
    copy = base / "project"
    shutil.copytree(store, copy, symlinks=True)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield copy
    finally:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(base)


def test_a_read_only_checkout_reads_and_refuses_writes_clearly(
        read_only: Path, filled: dict[str, str]) -> None:
    before = Unchanged(read_only)
    assert filled["fact"] in _as_reader(read_only, "recall").stdout
    for args in (("show", filled["fact"]), ("validate",), ("status",), ("export",),
                 ("history", filled["fact"]), ("context",)):
        done = _as_reader(read_only, *args)
        assert done.returncode == 0, (args, done.stderr)
    for args in (("remember", "A fact that cannot land.", "-c", "fact"),
                 ("forget", filled["fact"], "--reason", "no")):
        done = _as_reader(read_only, *args)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.startswith("loa-mem: write-failed: cannot write to this store: ")
        assert done.stderr.strip().endswith(
            "writing needs write access to the checkout and its .git folder (reading works as "
            "it is); nothing was written")
        assert len(done.stderr.splitlines()) == 1
    before.check()


def test_a_failed_commit_puts_the_files_back(cli: Cli, store: Path,
                                            filled: dict[str, str]) -> None:
    """A full disk or a busy git fails the commit after the files were replaced: nothing may
    be left half done (files written but not committed)."""
    before = Unchanged(store)
    lock = store / ".git/refs/heads/main.lock"  # another git moving the branch
    lock.write_text("", encoding="utf-8")
    try:
        line = support.one_line_error(cli("forget", filled["fact"], "--reason", "gone"))
    finally:
        lock.unlink()

    assert line.startswith("loa-mem: git: git update-ref failed: ")
    assert line.endswith("; nothing was changed")
    before.check()
    cli.ok("forget", filled["fact"], "--reason", "gone")
    assert cli.ok("validate", "--json").json()["problems"] == []


def test_an_index_that_cannot_be_written_after_the_files_puts_them_back(
        cli: Cli, store: Path, filled: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from loa_mem.memory import writer

    def disk_full(*_: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    before = Unchanged(store)
    with monkeypatch.context() as patch:
        patch.setattr(writer.FileResult, "update_index", disk_full)
        line = support.one_line_error(cli("remember", "A fact on a full disk.", "-c", "fact"))

    assert line == ("loa-mem: write-failed: could not update the index in .git/loa-mem: "
                    "database or disk is full; free disk space, then retry; nothing was changed")
    before.check()
    support.remember(cli, "A fact on a disk with room.", "fact")
    assert cli.ok("validate", "--json").json()["problems"] == []


# -- round trips ---------------------------------------------------------------------------------
def test_export_and_import_keep_line_and_paragraph_separators(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    content = "One\u2028two\u2029three\u0085four\x0cfive\x1cend."
    memory_id = support.remember(cli, content, "fact")
    exported = cli.ok("export", "-f", "jsonl").stdout
    assert "\u2028" not in exported and "\\u2028" in exported

    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    target = Cli(other)
    target.ok("init")
    (tmp_path / "out.jsonl").write_text(exported, encoding="utf-8")
    assert target.ok("import", str(tmp_path / "out.jsonl"), "--dry-run", "--json").json()
    target.ok("import", str(tmp_path / "out.jsonl"))
    assert target.ok("show", memory_id, "--json").json()["entry"] == cli.ok(
        "show", memory_id, "--json").json()["entry"]


def test_import_dry_run_refuses_what_the_real_run_refuses(cli: Cli, store: Path,
                                                          tmp_path: Path) -> None:
    support.remember(cli, "First fact without an id.", "fact")
    support.remember(cli, "Second fact without an id.", "fact")
    lines = []
    for line in cli.ok("export", "-f", "jsonl").stdout.splitlines():
        entry = json.loads(line)
        del entry["id"]
        lines.append(json.dumps(entry))
    source = tmp_path / "noid.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = Unchanged(store)

    dry, real = cli("import", str(source), "--dry-run"), cli("import", str(source))
    assert (dry.code, real.code) == (1, 1)
    assert "every entry of noid.jsonl is already in the store" in dry.stderr
    before.check()

    source.write_text("\n".join([*lines, json.dumps({**json.loads(lines[0]),
                                                     "content": "A third fact."})]) + "\n",
                      encoding="utf-8")
    planned = cli.ok("import", str(source), "--dry-run", "--json").json()
    assert len(planned["ids"]) == 1
    assert sorted(planned["duplicates"]) == ["line 1", "line 2"]


def test_forget_then_restore_of_an_archived_entry_brings_it_back_archived(
        cli: Cli, store: Path, filled: dict[str, str]) -> None:
    fact = filled["fact"]
    cli.ok("archive", fact, "--reason", "manual")
    archived = support.entry(store, fact)
    cli.ok("forget", fact, "--reason", "not even in the archive")
    cli.ok("restore", fact)

    assert support.entry(store, fact) == archived
    assert [e["id"] for e in support.entries(store, "fact", archive=True)] == [fact]
    shown = cli.ok("show", fact, "--json").json()
    assert (shown["state"], shown["entry"]["archive_reason"]) == ("archived", "manual")
    cli.ok("restore", fact)  # and out of the archive, as from any archived entry
    assert cli.ok("show", fact, "--json").json()["state"] == "active"


def test_restore_into_a_re_indented_file(cli: Cli, store: Path, filled: dict[str, str]) -> None:
    decision = filled["decision"]
    cli.ok("forget", decision, "--reason", "wrong")
    support.remember(cli, "Use Redis for the cache.", "decision", "--confidence", "0.95")
    path = store / DECISIONS
    path.write_text("".join("  " + line if line.strip() else line for line in
                            path.read_text(encoding="utf-8").splitlines(True)), encoding="utf-8")
    git(store, "commit", "-qam", "re-indent")
    cli.ok("restore", decision)

    assert support.entry(store, decision)["content"] == "Use PostgreSQL for the database."
    assert cli.ok("validate", "--json").json()["problems"] == []


# -- output --------------------------------------------------------------------------------------
def test_control_characters_are_escaped_in_human_output_and_exact_in_json(
        cli: Cli, store: Path) -> None:
    content = "Ring \a and \x1b[31mred\x1b[0m text\u202e."
    memory_id = support.remember(cli, content, "fact")
    for args in (("recall",), ("show", memory_id)):
        out = cli.ok(*args).stdout
        assert "\x1b" not in out and "\a" not in out and "\u202e" not in out
        assert "Ring \\x07 and \\x1b[31mred\\x1b[0m text\\u202e." in out
    context = run_loa_mem(store, "context").stdout
    assert "\x1b" not in context and "\\x1b[31mred" in context
    assert cli.ok("show", memory_id, "--json").json()["entry"]["content"] == content


# -- hooks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("breakage", "named"), [
    ("binary", DECISIONS), ("alias bomb", DECISIONS), ("directory", DECISIONS),
    ("config", ".loa.config.yaml")])
def test_the_session_start_context_fails_open(store: Path, cli: Cli, filled: dict[str, str],
                                              breakage: str, named: str) -> None:
    run_loa_mem(store, "context")  # warm caches: the hook must notice the change
    if breakage == "config":
        with (store / ".loa.config.yaml").open("a", encoding="utf-8") as config:
            config.write("bogus_key: 1\n")
    else:
        _broken(store, breakage)
    for _ in range(2):  # and again from the caches the first run wrote
        done = run_loa_mem(store, "context")
        assert done.returncode == 0, done.stderr
        assert filled["fact"] in done.stdout and filled["error"] in done.stdout
        assert "## Could not be read" in done.stdout and named in done.stdout
        assert done.stderr.startswith(f"loa-mem: warning: context: {named}")
        data = json.loads(run_loa_mem(store, "context", "--json").stdout)
        assert named in data["warnings"][0]
    assert cli("context").code == 0  # in-process too


def test_the_documented_context_settings_are_accepted_and_used(cli: Cli, store: Path,
                                                               filled: dict[str, str]) -> None:
    with (store / ".loa.config.yaml").open("a", encoding="utf-8") as config:
        config.write("context:\n  budget_tokens: 150\n  per_category: 1\n")
    data = json.loads(run_loa_mem(store, "context", "--json").stdout)
    assert data["budget_tokens"] == 150
    cli.ok("validate")


def test_every_configuration_key_the_readme_documents_is_accepted(cli: Cli, store: Path) -> None:
    from loa_mem.memory import config

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Configuration", 1)[1].split("###", 1)[0]
    keys = [row.split("|")[1].strip().strip("`") for row in table.splitlines()
            if row.startswith("| `")]
    sections = sorted({key.split(".", 1)[0] for key in keys})
    defaults = config.default_config().data
    assert set(sections) <= set(defaults)
    (store / ".loa.config.yaml").write_text(
        json.dumps({name: defaults[name] for name in sections}), encoding="utf-8")
    cli.ok("validate")
    cli.ok("recall")


def test_the_session_end_hook_declares_a_timeout_and_gc_defers_what_is_over_time(
        cli: Cli, store: Path) -> None:
    cli.ok("hooks", "install", "--claude-code")
    settings = json.loads((store / ".claude/settings.json").read_text(encoding="utf-8"))
    [group] = settings["hooks"]["SessionEnd"]
    assert group["hooks"][0]["timeout"] == 30

    (store / "a.log").write_text("x" * 400, encoding="utf-8")
    git(store, "add", "a.log")
    git(store, "commit", "-qm", "a log")
    cli.ok("advise", "--cold", "a.log", "--why", "done")
    before = Unchanged(store)
    report = cli.ok("gc", "--time-budget", "0", "--json").json()["gc_report"]
    assert [(a["action"], a["reason"]) for a in report["actions"]] == [
        ("deferred", "time budget of 0 s spent; the next gc does it")]
    before.check()
    later = cli.ok("gc", "--json").json()["gc_report"]
    assert [a["action"] for a in later["actions"]] == ["evicted"]


def test_gc_reports_the_same_numbers_in_a_dry_run_and_a_real_run_after_compress(
        cli: Cli, store: Path) -> None:
    text = "".join(f"Line {n}: nothing to see here, just filler text.\n" for n in range(200))
    text += "ERROR: the one line that matters.\n"
    (store / "notes.md").write_text(text, encoding="utf-8")
    git(store, "add", "notes.md")
    git(store, "commit", "-qm", "notes")
    cli.ok("advise", "--cold", "notes.md", "--action", "compress", "--why", "long")
    dry = cli.ok("gc", "--dry-run", "--json").json()
    real = cli.ok("gc", "--json").json()

    assert dry["gc_report"]["actions"] == real["gc_report"]["actions"]
    [action] = real["gc_report"]["actions"]
    assert action["action"] == "compressed" and action["tokens"] > 0
    shrunk = -(-len(text.encode()) // 4) - -(-(store / "notes.md").stat().st_size // 4)
    assert action["tokens"] == shrunk
    for report in (dry["gc_report"], real["gc_report"]):
        assert report["tokens_freed"] == action["tokens"]
        assert report["files_affected"] == 1


# -- crashes -------------------------------------------------------------------------------------
def test_a_crash_log_holds_the_command_but_none_of_its_values(
        cli: Cli, store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from loa_mem.memory.commands import remember

    secret = "hunter2-secret-value"

    def bug(*_: object, **__: object) -> None:
        raise RuntimeError(f"boom while storing {secret}")

    monkeypatch.setattr(remember, "remember", bug)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    outcome = cli("remember", "hunter2-secret-value", "-c", "fact", "--summary=hunter2")

    assert outcome.code == 3 and "unexpected error (RuntimeError)" in outcome.stderr
    [log] = tmp_path.glob("loa-mem-crash-*.log")
    text = log.read_text(encoding="utf-8")
    assert "command: remember … -c … --summary=…" in text
    assert "hunter2" not in text
    assert "RuntimeError" in text and "in bug" in text


def test_an_mcp_client_gets_a_tool_error_for_bad_text_not_a_crash(store: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import _error, _text, run_session

    before = Unchanged(store)

    async def script(session: Any, call: Any) -> Any:
        return [await call("remember", content="A fact with a bad ttl.", category="fact",
                           ttl="30d\n"),
                await call("remember", content="A NUL \x00 inside.", category="fact")]

    results = run_session(store, script)
    assert all(_error(r) for r in results)
    texts = [_text(r) for r in results]
    assert "the ttl (--ttl) is not valid" in texts[0]
    assert "NUL character" in texts[1]
    before.check()


@pytest.mark.parametrize("command", [("export", "--output"), ("export", "-f", "claude", "-o")])
def test_an_output_path_that_is_a_folder_is_refused_and_leaves_no_temporary_file(
        cli: Cli, store: Path, command: tuple[str, ...]) -> None:
    (store / "notes").mkdir()
    outcome = cli(*command, str(store / "notes"))
    assert outcome.code == 1
    assert f"{store / 'notes'}: Is a directory" in outcome.stderr
    assert ".tmp" not in outcome.stderr
    assert list((store / "notes").iterdir()) == []
    assert [p.name for p in store.iterdir() if p.name.endswith(".tmp")] == []


def test_init_given_a_file_for_its_folder_refuses_and_writes_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    outcome = Cli(tmp_path)("init", "--root", str(notes))
    assert outcome.code == 2
    assert f"{notes} is a file, not a folder" in outcome.stderr
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("value", ["1e309", "nan", "-inf"])
def test_a_preference_confidence_that_is_no_number_is_a_usage_error(
        store: Path, value: str) -> None:
    outcome = Cli(store)("pref", "session", "record", "channel", "email", "--session", "s-1",
                         "--user", "ana@example.invalid", "--confidence", value)
    assert outcome.code == 2
    assert "a confidence is a fraction like 0.85" in outcome.stderr
    assert value not in outcome.stderr.replace("--confidence", "")
