"""Small readers the acceptance tests share: grimoire files, events, commits and snapshots.

They read what a user could read (files, `git log`), never loa-mem's index or private state.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from loa_mem.core import yamlio
from tests.conftest import git

MEMORY = "grimoires/loa/memory"
ARCHIVE = "grimoires/loa/memory/archive"
FILES = {"fact": "facts.yaml", "decision": "decisions.yaml", "learning": "learnings.yaml",
         "error": "errors.yaml", "preference": "preferences.yaml"}
# What a freshly minted id looks like: the day, then 8 random lowercase base32 characters.
NEW_ID = re.compile(r"^MEM-(\d{8})-[a-z2-7]{8}$")
_NEW_ID_IN_TEXT = re.compile(r"MEM-\d{8}-[a-z2-7]{8}\b")


def grimoire(root: Path, category: str, archive: bool = False) -> Path:
    return root / (ARCHIVE if archive else MEMORY) / FILES[category]


def entries(root: Path, category: str, archive: bool = False) -> list[dict[str, Any]]:
    """The entries of one grimoire file as written (timestamps stay strings)."""
    path = grimoire(root, category, archive)
    if not path.exists():
        return []
    data = yamlio.load(path.read_text(encoding="utf-8"), str(path))
    return list(data or [])


def entry(root: Path, memory_id: str) -> dict[str, Any]:
    """The one entry with `memory_id` in any grimoire file (active or archive)."""
    found = [e for c in FILES for a in (False, True) for e in entries(root, c, a)
             if e.get("id") == memory_id]
    assert len(found) == 1, f"{memory_id} found {len(found)} times"
    return found[0]


def entry_in(text: str, memory_id: str) -> dict[str, Any]:
    """The entry with `memory_id` in a grimoire file's text (as `git show` prints it)."""
    [found] = [e for e in yamlio.load(text, memory_id) or [] if e.get("id") == memory_id]
    return dict(found)


def all_ids(root: Path) -> list[str]:
    return [str(e["id"]) for c in FILES for a in (False, True) for e in entries(root, c, a)]


def events(root: Path) -> list[dict[str, Any]]:
    path = root / MEMORY / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def changed_files(root: Path, sha: str = "HEAD") -> list[str]:
    out = git(root, "show", "--name-only", "--format=", sha)
    return sorted(line for line in out.splitlines() if line)


def message(root: Path, sha: str = "HEAD") -> str:
    return git(root, "log", "-1", "--format=%B", sha)


def trailers(root: Path, sha: str = "HEAD") -> list[tuple[str, str]]:
    out = git(root, "log", "-1", "--format=%(trailers:only,unfold)", sha)
    pairs = []
    for line in out.splitlines():
        if ": " in line:
            key, value = line.split(": ", 1)
            pairs.append((key, value))
    return pairs


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the working tree (outside .git), byte for byte."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(
                root).parts}


def porcelain(root: Path) -> str:
    return git(root, "status", "--porcelain=v1", "--untracked-files=all")


def one_line_error(outcome: Any) -> str:
    """A refusal as the user sees it: exit 1, nothing on stdout, one line on stderr and no
    traceback; that line."""
    assert outcome.code == 1, (outcome.code, outcome.stdout, outcome.stderr)
    assert outcome.stdout == ""
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1, outcome.stderr
    assert "Traceback" not in outcome.stderr
    return str(lines[0])


def remember(cli: Any, content: str, category: str = "fact", *options: str,
             now: str | None = None) -> str:
    """Remember through the CLI and return the new id (the command must succeed)."""
    outcome = cli.ok("remember", content, "-c", category, *options, "--json", now=now)
    data = outcome.json()
    assert data["created"] is True, data
    return str(data["id"])


def assert_new_id(memory_id: str, day: str = "20260201") -> str:
    """A freshly minted id: the new form, carrying `day` (YYYYMMDD). Returns the id."""
    match = NEW_ID.match(memory_id)
    assert match, f"{memory_id!r} is not a new-style id"
    assert match.group(1) == day, f"{memory_id} does not carry the day {day}"
    return memory_id


def normalise_ids(text: str, ids: list[str] | None = None) -> str:
    """`text` with minted ids replaced by placeholders, so output holding random ids can be
    compared with a golden file. The ids given (in that order) become <ID1>, <ID2>, ...; any other
    new-style id left over becomes <ID>."""
    for number, memory_id in enumerate(ids or [], start=1):
        text = text.replace(memory_id, f"<ID{number}>")
    return _NEW_ID_IN_TEXT.sub("<ID>", text)


def answers_as_rebuilt(cli: Any, root: Path, query: str) -> None:
    """recall, context and validate answer the same from the live index (and the caches in
    .git/loa-mem) as from ones built from scratch."""
    def answers() -> tuple[str, str, str]:
        return (cli.ok("recall", query, "--json").stdout, cli.ok("context").stdout,
                cli.ok("validate", "--json").stdout)

    live = answers()
    git_dir = git(root, "rev-parse", "--git-dir").strip()
    shutil.rmtree(root / git_dir / "loa-mem")
    assert answers() == live


def typed(value: Any) -> Any:
    """`value` with each scalar's type beside it (1, 1.0 and True compare equal)."""
    if isinstance(value, dict):
        return {"dict": [(typed(k), typed(v)) for k, v in value.items()]}
    if isinstance(value, list):
        return {"list": [typed(v) for v in value]}
    return (type(value).__name__, value)
