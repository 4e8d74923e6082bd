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
import re
from pathlib import Path

from loa_mem.core import events
from loa_mem.core.errors import ConfigError, InvalidFile
from loa_mem.memory import check
from loa_mem.memory.files import GrimoireFile
from loa_mem.memory.problems import Checker, Problem, Report, Run, Seen, secret_problems
from loa_mem.memory.store import Store

__all__ = ["Checker", "Problem", "Report", "config_problem", "open_store", "secret_problems",
           "validate"]


def _check_file(run: Run, grimoire: GrimoireFile, failure: InvalidFile | None,
                entry_rules: bool = True) -> None:
    """Collect the file's entries for the cross rules and, with `entry_rules`, check each
    entry on its own (schema, floor, expiry, archive, secrets)."""
    store = run.store
    if failure is not None:
        run.problems.append(Problem(grimoire.path, failure.line, "yaml", failure.message))
        return
    for row in store.index.in_file(grimoire.path):
        seen = Seen(row, grimoire)
        run.entries += 1
        if not isinstance(row.data, dict) or row.data.get("id") is None:
            run.add(None, grimoire.path, row.first_line, "schema",
                    "an entry must be a mapping with an id")
            continue
        run.seen.setdefault(str(row.data.get("id")), []).append(seen)
        if entry_rules:
            check.schema_problems(run, seen, grimoire.path)
            check.entry_rules(run, seen, grimoire.path)


# -- the per-entry rules in parallel (~100 us an entry: 1 s at 10,000) ---------------------------
_PARALLEL_ENTRIES = 3000
_FORKED: dict[str, Store] = {}  # the store a forked worker checks


def _entry_problems_in(grimoire: GrimoireFile) -> list[Problem]:
    """Worker (forked): the per-entry problems of one file, read through a connection of its
    own (a forked SQLite connection must not be used)."""
    store = _FORKED["store"]
    store._index = None
    store._open_index()  # as it is: the parent refreshed it just before forking
    run = Run(store)
    try:
        _check_file(run, grimoire, None)
    finally:
        store.close()
    return [p for p in run.problems if p.rule != "schema" or p.id is not None or
            p.message != "an entry must be a mapping with an id"]


def _check_files(run: Run, failures: dict[str, InvalidFile]) -> None:
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
    return _relative_to(store.top, given)


def _relative_to(top: Path, given: str) -> str:
    path = Path(given)
    absolute = path if path.is_absolute() else (Path.cwd() / path)
    try:
        return absolute.resolve().relative_to(top.resolve()).as_posix()
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
    run = Run(store)
    selected = {g.path for g in _selected(store, paths)}
    failures = store.refresh_files()
    _check_files(run, failures)
    check.cross_rules(run)
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
    if not store.config.enabled:
        keep.append(_switched_off(store))
    keep.sort(key=lambda p: (p.path, p.line, p.rule))
    return Report(keep, len(selected), run.entries, others)


def _all_paths(store: Store) -> set[str]:
    return {g.path for g in store.grimoire_files()}


def _switched_off(store: Store) -> Problem:
    """A warning, not an error: the files are still checked, but the commands refuse."""
    return Problem(".loa.config.yaml", _key_line(store.top / ".loa.config.yaml",
                                                 "memory_schema.enabled"), "switched-off",
                   "Loa memory is switched off (memory_schema.enabled: false): the files are "
                   "checked, but remember, recall and the other memory commands refuse",
                   severity="warning")


def validate_at(root: str | None, paths: list[str] | None = None, staged: bool = False
                ) -> Report:
    """`validate` from the command line: a broken config is a problem like any other, and
    with `staged` the files checked are those the next commit holds."""
    if not staged:
        return _validate_root(root, paths)
    from loa_mem.core import gitstaged
    from loa_mem.memory.store import locate_top

    top = locate_top(root)
    wanted = [_relative_to(top, p) for p in paths or []]
    with gitstaged.staged_tree(top) as tree:
        return _validate_root(str(tree), [str(tree / p) for p in wanted] or None)


def _validate_root(root: str | None, paths: list[str] | None) -> Report:
    store, problems = open_store(root)
    try:
        report = validate(store, paths)
    finally:
        store.close()
    if not problems:
        return report
    return Report(problems + report.problems, report.files, report.entries, report.others)


def open_store(root: str | None) -> tuple[Store, list[Problem]]:
    """The store to validate, and the config's problem when `.loa.config.yaml` is broken: the
    files are then checked with the default settings, as `context` reads them."""
    from loa_mem.memory import config as config_mod
    from loa_mem.memory.store import locate_top

    try:
        return Store.open(root), []
    except ConfigError as error:
        top = locate_top(root)
        return Store(top, config_mod.default_config()), [config_problem(top, error)]


def config_problem(top: Path, error: ConfigError) -> Problem:
    """The config's error as a problem on the line it is about (the key's, when it names one)."""
    from loa_mem.memory.config import CONFIG_FILE

    message = error.message.removeprefix(CONFIG_FILE)
    located = re.match(r":(\d+):\d+: ", message)
    if located:
        return Problem(CONFIG_FILE, int(located[1]), "config", message[located.end():])
    message = message.removeprefix(": ")
    return Problem(CONFIG_FILE, _key_line(top / CONFIG_FILE, message.split(":", 1)[0]),
                   "config", message)


def _key_line(path: Path, dotted: str) -> int:
    """The line of `a.b.c` in a YAML mapping written in block style, or 1."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError):
        return 1
    found, start = 1, 0
    for key in dotted.split("."):
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
        hit = next((n for n in range(start, len(lines)) if pattern.match(lines[n])), None)
        if hit is None:
            break
        found, start = hit + 1, hit + 1
    return found
