"""`loa-mem validate` coverage of the working set: hot.yml and cold.yml, every `.meta.yml`
sidecar, and the frontmatter of every summary. Broken links (a sidecar whose file is gone, a
summary that no longer exists) are warnings: they are what a repair would fix."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import git, schemacheck, yamlio
from loa_mem.core.errors import InvalidFile, LoaMemError
from loa_mem.core.keylines import item_line, key_line
from loa_mem.memory.validate import Problem, secret_problems
from loa_mem.workingset import manifests as ws


def _load(top: Path, rel: str) -> tuple[Any, list[str]] | Problem:
    try:
        text = (top / rel).read_text(encoding="utf-8")
        return yamlio.load(text, rel), text.splitlines()
    except UnicodeDecodeError:
        return Problem(rel, 1, "yaml", "not UTF-8 text")
    except InvalidFile as error:
        return Problem(rel, error.line, "yaml", error.message.split(": ", 1)[-1])


def _schema(rel: str, schema: str, data: Any, lines: list[str], list_key: str | None
            ) -> Iterator[Problem]:
    for problem in schemacheck.problems(schema, data):
        where = problem.path
        if list_key and len(where) >= 2 and where[0] == list_key and isinstance(where[1], int):
            line = item_line(lines, list_key, where[1])
            if len(where) > 2:
                line = key_line(lines, str(where[2]), line - 1)
        else:
            line = key_line(lines, str(where[0])) if where else 1
        yield Problem(rel, line, "schema", f"{problem.dotted or '(top level)'}: {problem.message}")


def _manifest(top: Path, rel: str, key: str) -> Iterator[Problem]:
    loaded = _load(top, rel)
    if isinstance(loaded, Problem):
        yield loaded
        return
    data, lines = loaded
    yield from _schema(rel, "working_set.schema.json", data, lines, key)
    yield from secret_problems(rel, lines, data)
    items = data.get(key) if isinstance(data, dict) else None
    seen: set[str] = set()
    for n, item in enumerate(items if isinstance(items, list) else []):
        path = item.get("path") if isinstance(item, dict) else None
        if not isinstance(path, str):
            continue
        if path in seen:
            yield Problem(rel, item_line(lines, key, n), "duplicate", f"{path} is listed twice")
        seen.add(path)
        if not (top / path).is_file():
            yield Problem(rel, item_line(lines, key, n), "missing",
                          f"{path} is not in the working tree (gc drops it)", "warning")


def _sidecar(top: Path, rel: str) -> Iterator[Problem]:
    loaded = _load(top, rel)
    if isinstance(loaded, Problem):
        yield loaded
        return
    data, lines = loaded
    yield from _schema(rel, "meta.schema.json", data, lines, None)
    yield from secret_problems(rel, lines, data)
    if not isinstance(data, dict):
        return
    source = rel[: -len(ws.SIDECAR_SUFFIX)]
    archived = data.get("archived_in")
    if not (top / source).exists() and not archived:
        yield Problem(rel, 1, "orphan", f"sidecar of {source}, which does not exist", "warning")
    if isinstance(archived, str) and not (top / archived).is_file() and not (
            top / source).is_file():
        yield Problem(rel, key_line(lines, "archived_in"), "link",
                      f"archived_in {archived} does not exist", "warning")
    summary = data.get("summarized_in")
    if isinstance(summary, str) and not (top / summary).is_file():
        yield Problem(rel, key_line(lines, "summarized_in"), "link",
                      f"summarized_in {summary} does not exist; summarize the file again",
                      "warning")


def _summary(top: Path, rel: str) -> Iterator[Problem]:
    text = (top / rel).read_text(encoding="utf-8", errors="replace")
    match = re.match(r"---\n(.*?\n)---\n", text, re.DOTALL)
    if match is None:
        yield Problem(rel, 1, "frontmatter", "a summary starts with YAML frontmatter between "
                      "--- lines (summary_of, created, style)")
        return
    try:
        data = yamlio.load(match.group(1), rel)
    except InvalidFile as error:
        yield Problem(rel, error.line + 1, "yaml", error.message.split(": ", 1)[-1])
        return
    lines = ["---", *match.group(1).splitlines()]
    yield from _schema(rel, "summary.schema.json", data, lines, None)
    for source in (data.get("summary_of") or []) if isinstance(data, dict) else []:
        if isinstance(source, str) and not (top / source).exists() and not (
                top / (source + ws.SIDECAR_SUFFIX)).exists():
            yield Problem(rel, 1, "link", f"summary_of {source}, which does not exist", "warning")
    if "References:" not in text:
        yield Problem(rel, 1, "backlinks", "no References list linking back to the sources")


def _sidecar_paths(top: Path) -> list[str]:
    out = git.run(top, "ls-files", "-z", "-co", "--exclude-standard", "--",
                  "*" + ws.SIDECAR_SUFFIX, check=False)
    return sorted({p for p in out.split("\0") if p and (top / p).is_file()})


def check(store: Any, paths: list[str] | None,
          counted: dict[str, int] | None = None) -> Iterator[Problem]:
    """The problems of the selected lists, sidecars and summaries; how many of each it read
    goes to `counted` (validate's summary line)."""
    top = Path(store.top)
    chosen = _selected(store, paths)
    if counted is not None:
        counted.update(working_set_lists=len(chosen.lists), file_sidecars=len(chosen.sidecars),
                       summaries=len(chosen.summaries))
    for rel, key in chosen.lists:
        yield from _manifest(top, rel, key)
    for rel in chosen.sidecars:
        yield from _sidecar(top, rel)
    for rel in chosen.summaries:
        yield from _summary(top, rel)


@dataclass(frozen=True)
class _Selection:
    lists: list[tuple[str, str]]  # (hot.yml or cold.yml, the key its entries sit under)
    sidecars: list[str]
    summaries: list[str]


def _selected(store: Any, paths: list[str] | None) -> _Selection:
    """The files `paths` select (no paths: all of them), relative to the top."""
    s = ws.settings(store)
    top = Path(store.top)
    wanted: set[str] | None = None
    if paths:
        wanted = set()
        for given in paths:
            try:
                wanted.add(ws.relative(store, given))
            except LoaMemError:
                continue

    def chosen(rel: str) -> bool:
        return wanted is None or rel in wanted

    lists = [(rel, key) for rel, key in ((s.hot_path, "keep"), (s.cold_path, "evict"))
             if (top / rel).is_file() and chosen(rel)]
    folder = top / s.summaries_dir
    summaries = [p.relative_to(top).as_posix() for p in sorted(folder.glob("*.md"))
                 ] if folder.is_dir() else []
    return _Selection(lists, [rel for rel in _sidecar_paths(top) if chosen(rel)],
                      [rel for rel in summaries if chosen(rel)])
