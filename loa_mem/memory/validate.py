"""validate: every file against its schema, and the rules that span entries.

Each file is checked as it is on disk: the index is refreshed first (a file whose size or mtime
changed is parsed again), so the entries checked are exactly what the files hold, and a file that
was already parsed is not parsed twice. Each problem carries the file and line it is about.
Features that add files of their own (the working set, agent sidecars) add problems through
their `check` hook (see `loa_mem.core.features`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock, events, sensitive
from loa_mem.core.errors import ConfigError, InvalidFile
from loa_mem.memory import rules as model
from loa_mem.memory.index import Row
from loa_mem.memory.store import GrimoireFile, Store


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    rule: str
    message: str
    severity: str = "error"
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "id": self.id, "rule": self.rule,
                "message": self.message, "severity": self.severity}


def secret_problems(rel: str, lines: list[str], data: Any) -> Iterator[Problem]:
    """Every text of a hand-edited file that holds a secret or personal data, by its line; the
    message names the field and the kind, never the text."""
    for dotted, value, kinds in sensitive.found_in(data):
        first = value.splitlines()[0][:40] if value.strip() else value
        line = next((n + 1 for n, text in enumerate(lines) if first and first in text), 1)
        yield Problem(rel, line, "secret", f"{dotted} contains {kinds}")


@dataclass(frozen=True)
class Report:
    problems: list[Problem]
    files: int
    entries: int
    # files the features checked besides grimoire files, by kind (agent_sidecars: 3, ...)
    others: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "files": self.files, "entries": self.entries,
                "checked": self.others, "problems": [p.to_json() for p in self.problems]}


Checker = Callable[[Store, list[str] | None, dict[str, int]], Iterable[Problem]]


@dataclass
class _Seen:
    row: Row
    grimoire: GrimoireFile

    @property
    def data(self) -> dict[str, Any]:
        return self.row.data if isinstance(self.row.data, dict) else {}

    @property
    def first_line(self) -> int:
        return self.row.first_line


@dataclass
class _Run:
    store: Store
    problems: list[Problem] = field(default_factory=list)
    seen: dict[str, list[_Seen]] = field(default_factory=dict)
    entries: int = 0

    def add(self, seen: _Seen | None, path: str, line: int, rule: str, message: str,
            severity: str = "error") -> None:
        memory_id = str(seen.data.get("id")) if seen and seen.data.get("id") else None
        self.problems.append(Problem(path, line, rule, message, severity, memory_id))


def _line(seen: _Seen, key: str) -> int:
    return seen.row.line_of(key)


def _schema_problems(run: _Run, seen: _Seen, path: str) -> None:
    from loa_mem.core import schemacheck

    for problem in schemacheck.problems("memory.schema.json", seen.row.data):
        key = str(problem.path[0]) if problem.path else ""
        where = problem.dotted or "entry"
        run.add(seen, path, _line(seen, key), "schema", f"{where}: {problem.message}")


def _entry_rules(run: _Run, seen: _Seen, path: str) -> None:
    data, grimoire = seen.data, seen.grimoire
    category = data.get("category")
    if category in model.CATEGORIES and category != grimoire.category:
        run.add(seen, path, _line(seen, "category"), "category-file",
                f"a {category} entry in the {grimoire.category} file")
    if category in model.CATEGORIES and isinstance(data.get("confidence"), (int, float)):
        floor = run.store.config.rule(str(category)).floor
        if data["confidence"] < floor:
            run.add(seen, path, _line(seen, "confidence"), "floor",
                    f"confidence {data['confidence']} is under the {category} floor of {floor}")
    _expiry_rule(run, seen, path)
    archived = bool(data.get("archived"))
    if grimoire.in_archive and not archived:
        run.add(seen, path, seen.first_line, "archive",
                "an entry in the archive without archived: true")
    if archived and not grimoire.in_archive:
        run.add(seen, path, _line(seen, "archived"), "archive",
                "an archived entry outside the archive directory")
    if archived and not data.get("archive_reason"):
        run.add(seen, path, _line(seen, "archived"), "archive", "archived without archive_reason")
    # loa-mem's own values (ids, enums, times, counters) hold nothing a person typed
    skip = {"id", "category", "confidence", "ttl", "expires_at", "supersedes", "superseded_by",
            "related_memories", "effectiveness", "archived", "archived_at"}
    summary = data.get("summary")
    if isinstance(summary, str) and summary in str(data.get("content")):
        skip.add("summary")  # a summary cut from the content was scanned with it
    for dotted, _, kinds in sensitive.found_in(data, frozenset(skip)):
        key = dotted.split(".", 1)[0]
        run.add(seen, path, _line(seen, key), "secret", f"{dotted} contains {kinds}")


def _expiry_rule(run: _Run, seen: _Seen, path: str) -> None:
    data = seen.data
    ttl, source = data.get("ttl"), data.get("source")
    if not isinstance(ttl, str) or not isinstance(source, dict) or not source.get("timestamp"):
        return
    try:
        expected = model.expires_at(str(source["timestamp"]), ttl)
    except Exception:
        return
    actual = data.get("expires_at")
    if actual is not None:
        try:
            actual = clock.iso(clock.parse(str(actual)))
        except ValueError:
            return
    if actual != expected:
        run.add(seen, path, _line(seen, "expires_at") if "expires_at" in data else _line(
            seen, "ttl"), "expiry", f"expires_at should be {expected or 'null'} for ttl {ttl}")


def _cross_rules(run: _Run) -> None:
    forgotten = _forgotten_ids(run.store)
    for memory_id, places in run.seen.items():
        if len(places) > 1:
            where = ", ".join(f"{p.grimoire.path}:{p.first_line}" for p in places)
            for place in places:
                run.add(place, place.grimoire.path, place.first_line, "unique-id",
                        f"id {memory_id} is used {len(places)} times ({where}); "
                        "run `loa-mem repair`")
    for places in run.seen.values():
        for seen in places:
            _link_rules(run, seen, forgotten)
    _chain_rules(run)


def _chain_rules(run: _Run) -> None:
    from loa_mem.memory import chains

    unique = {i: places[0] for i, places in run.seen.items() if len(places) == 1}
    for problem in chains.problems({i: seen.data for i, seen in unique.items()}):
        seen = unique[problem.id]
        fix = problem.fix or "run `loa-mem repair` to set the other end"
        run.add(seen, seen.grimoire.path, _line(seen, problem.key), "chain",
                f"{problem.message}; {fix}")


def _link_rules(run: _Run, seen: _Seen, forgotten: set[str]) -> None:
    data, path = seen.data, seen.grimoire.path
    for key in ("supersedes", "superseded_by"):
        other_id = data.get(key)
        if not other_id or run.seen.get(str(other_id)):
            continue
        severity = "warning" if other_id in forgotten else "error"
        note = " (it was forgotten; see the events log)" if other_id in forgotten else ""
        run.add(seen, path, _line(seen, key), "chain",
                f"{key} {other_id}, which is not in any grimoire file{note}", severity)
    for related in data.get("related_memories") or []:
        if isinstance(related, str) and related not in run.seen:
            gone = related in forgotten
            run.add(seen, path, _line(seen, "related_memories"), "related",
                    f"related memory {related} is not in any grimoire file"
                    + (" (it was forgotten; see the events log)" if gone else ""),
                    "warning" if gone else "error")


def _forgotten_ids(store: Store) -> set[str]:
    gone: set[str] = set()
    for event in events.read_all(store.events_path):
        ids = {i for i in event.get("ids") or [] if isinstance(i, str)}
        if event.get("op") == "forget":
            gone |= ids
        elif event.get("op") == "restore":
            gone -= ids
    return gone


def _check_file(run: _Run, grimoire: GrimoireFile, failure: InvalidFile | None,
                entry_rules: bool = True) -> None:
    """Collect the file's entries for the cross rules and, with `entry_rules`, check each
    entry on its own (schema, floor, expiry, archive, secrets)."""
    store = run.store
    if failure is not None:
        run.problems.append(Problem(grimoire.path, failure.line, "yaml", failure.message))
        return
    for row in store.index.in_file(grimoire.path):
        seen = _Seen(row, grimoire)
        run.entries += 1
        if not isinstance(row.data, dict) or row.data.get("id") is None:
            run.add(None, grimoire.path, row.first_line, "schema",
                    "an entry must be a mapping with an id")
            continue
        run.seen.setdefault(str(row.data.get("id")), []).append(seen)
        if entry_rules:
            _schema_problems(run, seen, grimoire.path)
            _entry_rules(run, seen, grimoire.path)


# -- the per-entry rules in parallel (~100 us an entry: 1 s at 10,000) ---------------------------
_PARALLEL_ENTRIES = 3000
_FORKED: dict[str, Store] = {}  # the store a forked worker checks


def _entry_problems_in(grimoire: GrimoireFile) -> list[Problem]:
    """Worker (forked): the per-entry problems of one file, read through a connection of its
    own (a forked SQLite connection must not be used)."""
    store = _FORKED["store"]
    store._index = None
    store._open_index()  # as it is: the parent refreshed it just before forking
    run = _Run(store)
    try:
        _check_file(run, grimoire, None)
    finally:
        store.close()
    return [p for p in run.problems if p.rule != "schema" or p.id is not None or
            p.message != "an entry must be a mapping with an id"]


def _check_files(run: _Run, failures: dict[str, InvalidFile]) -> None:
    files = run.store.grimoire_files()
    workers = min(len(files), os.cpu_count() or 1)
    live = run.store.index.count()
    if workers < 2 or live < _PARALLEL_ENTRIES or not hasattr(os, "fork"):
        for grimoire in files:
            _check_file(run, grimoire, failures.get(grimoire.path))
        return
    import multiprocessing as mp

    _FORKED["store"] = run.store
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            pending = pool.map_async(_entry_problems_in,
                                     [g for g in files if g.path not in failures], chunksize=1)
            for grimoire in files:
                _check_file(run, grimoire, failures.get(grimoire.path), entry_rules=False)
            for problems in pending.get():
                run.problems.extend(problems)
    finally:
        _FORKED.clear()


def _selected(store: Store, paths: list[str] | None) -> list[GrimoireFile]:
    files = store.grimoire_files()
    if not paths:
        return files
    wanted = {_relative(store, p) for p in paths}
    return [g for g in files if g.path in wanted]


def _relative(store: Store, given: str) -> str:
    path = Path(given)
    absolute = path if path.is_absolute() else (Path.cwd() / path)
    try:
        return absolute.resolve().relative_to(store.top).as_posix()
    except ValueError:
        return given


def validate(store: Store, paths: list[str] | None = None) -> Report:
    # the cyclic collector finds no garbage among the rows read here, and its passes over
    # tens of thousands of fresh dicts cost ~0.15 s at 10,000 entries
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _validate(store, paths)
    finally:
        if collecting:
            gc.enable()


def _validate(store: Store, paths: list[str] | None) -> Report:
    run = _Run(store)
    selected = {g.path for g in _selected(store, paths)}
    failures = store.refresh_files()
    _check_files(run, failures)
    _cross_rules(run)
    for line, what in events.problems(store.events_path):
        run.problems.append(Problem(store.events_rel, line, "events",
                                    f"line {line} {what}; it is skipped when the log is read",
                                    severity="warning"))
    from loa_mem.core import features

    others: dict[str, int] = {}
    for checker in features.hooks("check"):
        run.problems.extend(checker(store, paths, others))  # type: ignore[operator]
    keep = [p for p in run.problems
            if not paths or p.path in selected or p.path not in _all_paths(store)]
    keep.sort(key=lambda p: (p.path, p.line, p.rule))
    return Report(keep, len(selected), run.entries, others)


def _all_paths(store: Store) -> set[str]:
    return {g.path for g in store.grimoire_files()}


def config_problem(error: ConfigError) -> Problem:
    return Problem(".loa.config.yaml", 1, "config", error.message)
