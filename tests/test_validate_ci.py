"""validate in CI and in the pre-commit hook: GitHub annotations that survive any path, a broken
config reported like any other problem, and `--staged` checking what the commit will hold."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from loa_mem.cli.memory_views import github_data, github_property
from tests import support
from tests.conftest import Cli, git, run_loa_mem
from tests.test_hooks import bad_entry, path_env

ENTRY = """\
- id: MEM-20260101-001
  category: fact
  content: {content}
  confidence: {confidence}
  source: {{session_id: s1, timestamp: 2026-01-01T09:00:00Z}}
  ttl: permanent
  expires_at: null
"""


def _unescape(text: str) -> str:
    """What GitHub's runner does to a workflow command's value (its `unescapeValue`)."""
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","),
                           ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def _annotation(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command parsed as the runner parses it: properties split at `,` and `=`."""
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert match, line
    properties = dict(part.split("=", 1) for part in match[2].split(","))
    return match[1], {k: _unescape(v) for k, v in properties.items()}, _unescape(match[3])


@given(st.text())
def test_a_property_value_comes_back_whole(text: str) -> None:
    escaped = github_property(text)
    assert not set(escaped) & {",", ":", "\n", "\r"}
    assert _unescape(escaped) == text


@given(st.text())
def test_a_message_comes_back_whole_on_one_line(text: str) -> None:
    escaped = github_data(text)
    assert not set(escaped) & {"\n", "\r"}
    assert _unescape(escaped) == text


def test_a_path_with_a_comma_and_a_colon_is_annotated_whole(repo: Path) -> None:
    (repo / ".loa.config.yaml").write_text(
        'memory_schema:\n  storage_dir: "mem,o:ry"\n', encoding="utf-8")
    Cli(repo).ok("init")
    with open(repo / "mem,o:ry/facts.yaml", "a", encoding="utf-8") as handle:
        handle.write(ENTRY.format(content="Too unsure, 50%", confidence="0.5"))
    done = run_loa_mem(repo, "validate", "--format", "github")

    assert done.returncode == 1, done.stderr
    level, properties, message = _annotation(done.stdout.splitlines()[0])
    assert (level, properties) == ("error", {"file": "mem,o:ry/facts.yaml", "line": "6",
                                             "title": "loa-mem floor"})
    assert message == "MEM-20260101-001: confidence 0.5 is under the fact floor of 0.8"


def test_a_broken_config_is_a_problem_with_its_line(cli: Cli, store: Path) -> None:
    with open(store / ".loa.config.yaml", "a", encoding="utf-8") as handle:
        handle.write("retention: forever\n")
    line = len((store / ".loa.config.yaml").read_text("utf-8").splitlines())
    github = run_loa_mem(store, "validate", "--format", "github")
    as_json = cli("validate", "--json")
    text = cli("validate")

    assert github.returncode == as_json.code == text.code == 1
    assert github.stderr == ""
    assert _annotation(github.stdout.splitlines()[0]) == (
        "error", {"file": ".loa.config.yaml", "line": str(line), "title": "loa-mem config"},
        "retention: unknown key 'retention'")
    assert as_json.json()["problems"] == [{
        "path": ".loa.config.yaml", "line": line, "id": None, "rule": "config",
        "message": "retention: unknown key 'retention'", "severity": "error"}]
    assert text.stdout.startswith(f".loa.config.yaml:{line}: error: [config] retention:")


def test_a_config_that_does_not_parse_keeps_the_other_files_checked(cli: Cli, store: Path
                                                                    ) -> None:
    (store / ".loa.config.yaml").write_text("memory_schema: [oops\n", encoding="utf-8")
    with open(support.grimoire(store, "fact"), "a", encoding="utf-8") as handle:
        handle.write(ENTRY.format(content="Unsure.", confidence="0.5"))
    problems = cli("validate", "--json").json()["problems"]

    assert [(p["path"], p["rule"]) for p in problems] == [
        (".loa.config.yaml", "config"), (f"{support.MEMORY}/facts.yaml", "floor")]
    assert problems[0]["line"] == 2


def _commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-qm", "memory", *args], cwd=root, env=path_env(),
                          capture_output=True, text=True, check=False)


def _install_git_hook(root: Path) -> None:
    done = run_loa_mem(root, "hooks", "install", "--git", env=path_env())
    assert done.returncode == 0, done.stderr


def test_the_hook_refuses_a_bad_staged_entry_fixed_only_in_the_working_tree(store: Path
                                                                            ) -> None:
    _install_git_hook(store)
    facts = support.grimoire(store, "fact")
    good = facts.read_text("utf-8")
    bad_entry(store)
    git(store, "add", str(facts))
    facts.write_text(good, encoding="utf-8")
    blocked = _commit(store)

    assert blocked.returncode != 0
    assert "not-an-id" in blocked.stdout + blocked.stderr
    assert git(store, "diff", "--cached", "--name-only").strip() == f"{support.MEMORY}/facts.yaml"


def test_the_hook_allows_a_good_staged_entry_broken_only_in_the_working_tree(cli: Cli,
                                                                             store: Path) -> None:
    _install_git_hook(store)
    support.remember(cli, "Staged and sound.", "fact", "--no-commit")
    git(store, "add", str(support.grimoire(store, "fact")))
    bad_entry(store)
    done = _commit(store)

    assert done.returncode == 0, done.stdout + done.stderr
    committed = git(store, "show", f"HEAD:{support.MEMORY}/facts.yaml")
    assert "Staged and sound." in committed and "not-an-id" not in committed
    assert "not-an-id" in support.grimoire(store, "fact").read_text("utf-8")


def test_commit_all_checks_the_index_git_commits(store: Path) -> None:
    _install_git_hook(store)
    bad_entry(store)
    blocked = _commit(store, "-a")

    assert blocked.returncode != 0 and "not-an-id" in blocked.stdout + blocked.stderr
    assert support.commit_count(store) == 1


def test_staged_json_names_problems_by_their_paths_in_the_repository(cli: Cli,
                                                                     store: Path) -> None:
    bad_entry(store)
    git(store, "add", "-A")
    (store / "untracked.txt").write_text("makes validate use a copy of the index\n", "utf-8")
    report = json.loads(run_loa_mem(store, "validate", "--staged", "--json").stdout)

    assert report["ok"] is False
    assert {p["path"] for p in report["problems"]} == {f"{support.MEMORY}/facts.yaml"}
    assert cli("validate", "--staged", f"{support.MEMORY}/decisions.yaml").code == 0


def test_staged_is_not_fooled_by_what_validate_cached_for_the_working_tree(cli: Cli,
                                                                          store: Path) -> None:
    facts = support.grimoire(store, "fact")
    good = facts.read_text("utf-8")
    bad_entry(store)
    git(store, "add", str(facts))
    facts.write_text(good, encoding="utf-8")
    assert cli("validate").code == 0  # the working tree's index and cache: all sound
    assert cli("validate", "--staged").code == 1

    git(store, "add", str(facts))
    bad_entry(store)
    assert cli("validate").code == 1  # now they hold the broken entry
    assert cli("validate", "--staged").code == 0


def test_staged_files_are_checked_as_committed_without_smudge_filters(store: Path) -> None:
    with open(Path(os.environ["GIT_CONFIG_GLOBAL"]), "a", encoding="utf-8") as config:
        config.write('[filter "fetch"]\n\tclean = cat\n\tsmudge = false\n\trequired = true\n')
    (store / ".gitattributes").write_text("*.bin filter=fetch\n", encoding="utf-8")
    (store / "model.bin").write_text("a large file kept elsewhere\n", encoding="utf-8")
    git(store, "add", ".gitattributes", "model.bin")
    (store / "untracked.txt").write_text("makes validate use a copy of the index\n", "utf-8")
    done = run_loa_mem(store, "validate", "--staged")

    assert done.returncode == 0, done.stderr
