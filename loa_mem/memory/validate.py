"""validate: every file against its schema, and the rules that span entries.

Each file is checked as it is on disk. A file whose content is what the last validate checked
is taken from its cache (`checkcache`) whole; for the others the index is refreshed first (only
for them), so the entries checked are exactly what the files hold, and an entry whose text was
checked before is not checked again. Each problem carries the file and line it is about.
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
from loa_mem.memory import check, checkcache
from loa_mem.memory.files import GrimoireFile
from loa_mem.memory.problems import Checker, Problem, Report, Run, Seen, secret_problems
from loa_mem.memory.store import Store

__all__ = ["Checker", "Problem", "Report", "config_problem", "open_store", "secret_problems",
           "validate"]


def _check_rows(store: Store, grimoire: GrimoireFile, rowids: list[int]) -> list[Checked]:
    """Each entry's own problems, as offsets from its first line, and its links."""
    checked = []
    for row in store.index.by_rowids(rowids):
        run = Run(store)
        seen = Seen(row, grimoire)
        if not isinstance(row.data, dict) or row.data.get("id") is None:
            run.add(None, grimoire.path, row.first_line, "schema", checkcache.NO_ID)
        else:
            check.schema_problems(run, seen, grimoire.path)
            check.entry_rules(run, seen, grimoire.path)
        links, offsets = checkcache.links_of(seen.data, row.key_offsets)
        checked.append((row.rowid, checkcache.Noted(
            [(p.line - row.first_line, p.rule, p.message, p.severity) for p in run.problems],
            links, offsets)))
    return checked


# (rowid, the entry's problems and links)
Checked = tuple[int, checkcache.Noted]

# -- the per-entry rules in parallel (~100 us an entry: 1 s at 10,000) ---------------------------
_PARALLEL_ENTRIES = 3000
_FORKED: dict[str, Store] = {}  # the store a forked worker checks


def _checked_in(job: tuple[GrimoireFile, list[int]]) -> list[Checked]:
    """Worker (forked): `_check_rows` through a connection of its own (a forked SQLite
    connection must not be used)."""
    store = _FORKED["store"]
    store._index = None
    store._open_index()  # as it is: the parent refreshed it just before forking
    try:
        return _check_rows(store, *job)
    finally:
        store.close()


def _check_all(store: Store, jobs: list[tuple[GrimoireFile, list[int]]]) -> list[list[Checked]]:
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or sum(len(r) for _, r in jobs) < _PARALLEL_ENTRIES or not hasattr(os, "fork"):
        return [_check_rows(store, *job) for job in jobs]
    import multiprocessing as mp

    _FORKED["store"] = store
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            return pool.map(_checked_in, jobs, chunksize=1)
    finally:
        _FORKED.clear()


Checked_files = list[tuple[GrimoireFile, checkcache.FileNotes]]


def _check_files(run: Run, seeded_from: Path | None) -> Checked_files:
    """Every file's entries with their own problems: a file whose content is unchanged since
    the last validate from the cache, the others through the index (refreshed first), entry by
    entry. Each file's entries and problems are added to `run`. In a temporary copy (of the
    repository whose cache folder is `seeded_from`) the index is that repository's, copied
    when first needed, and the cache is not written."""
    store = run.store
    cache = checkcache.Cache(store.cache_dir, store.config.data)
    # hashed before the index is refreshed: a file changed in between is checked again next time
    digests = {g.path: checkcache.digest(store.top / g.path) for g in store.grimoire_files()}
    found = {g.path: cache.file(g, digests[g.path]) for g in store.grimoire_files()}
    changed = {path for path, notes in found.items() if notes is None}
    if changed:
        if seeded_from is not None:
            from loa_mem.memory import index as index_mod

            index_mod.snapshot(seeded_from / "index.sqlite3",
                               store.cache_dir / "index.sqlite3")
        failures = store.refresh_files(changed)
        _recheck(run, cache, [g for g in store.grimoire_files() if g.path in changed],
                 failures, digests, found)
    checked = []
    for grimoire in store.grimoire_files():
        notes = found.get(grimoire.path)
        if notes is not None:
            _note(run, grimoire, notes)
            checked.append((grimoire, notes))
    if seeded_from is None:
        cache.save()
    return checked


def _recheck(run: Run, cache: checkcache.Cache, grimoires: list[GrimoireFile],
             failures: dict[str, InvalidFile], digests: dict[str, str | None],
             found: dict[str, checkcache.FileNotes | None]) -> None:
    """The files that changed, from the index: an entry whose text was checked before from the
    cache, the others checked now."""
    store = run.store
    outlines: dict[str, list[tuple[int, int | None, str, int]]] = {}
    known: dict[int, checkcache.Noted] = {}
    jobs = []
    for grimoire in grimoires:
        failure = failures.get(grimoire.path)
        if failure is not None:
            run.problems.append(Problem(grimoire.path, failure.line, "yaml", failure.message))
            continue
        outlines[grimoire.path] = rows = store.index.outline(grimoire.path)
        for rowid, text_hash, _, _ in rows:
            noted = cache.entry(grimoire, text_hash) if text_hash is not None else None
            if noted is not None:
                known[rowid] = noted
        missing = [r[0] for r in rows if r[0] not in known]
        if missing:
            jobs.append((grimoire, missing))
    for checked in _check_all(store, jobs):
        known.update(checked)
    for grimoire in grimoires:
        if grimoire.path in outlines:
            notes = _notes(grimoire, digests.get(grimoire.path), outlines[grimoire.path], known)
            found[grimoire.path] = notes
            if notes.digest:
                cache.put(grimoire.path, notes)


def _notes(grimoire: GrimoireFile, digest: str | None,
           rows: list[tuple[int, int | None, str, int]],
           known: dict[int, checkcache.Noted]) -> checkcache.FileNotes:
    noted = {n: known[r[0]] for n, r in enumerate(rows)}
    return checkcache.FileNotes(
        digest or "", grimoire.category, grimoire.in_archive, [r[1] for r in rows],
        [r[3] for r in rows], [r[2] for r in rows],
        {n: v for n, v in noted.items() if v.problems or v.links})


def _note(run: Run, grimoire: GrimoireFile, notes: checkcache.FileNotes) -> None:
    """A file's entries and their problems in the report."""
    run.entries += len(notes.lines)
    for row, noted in notes.noted.items():
        memory_id = notes.ids[row] if noted.mapped else None
        first_line = notes.lines[row]
        for offset, rule, message, severity in noted.problems:
            run.problems.append(Problem(grimoire.path, first_line + offset, rule, message,
                                        severity, memory_id))


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


def validate(store: Store, paths: list[str] | None = None, seeded_from: Path | None = None
             ) -> Report:
    # the cyclic collector finds no garbage among the rows read here, and its passes over
    # tens of thousands of fresh dicts cost ~0.15 s at 10,000 entries
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _validate(store, paths, seeded_from)
    finally:
        if collecting:
            gc.enable()


def _validate(store: Store, paths: list[str] | None, seeded_from: Path | None) -> Report:
    run = Run(store)
    selected = {g.path for g in _selected(store, paths)}
    check.cross_rules(run, _check_files(run, seeded_from))
    for log in store.event_logs():
        for line, what in events.problems(store.top / log):
            run.problems.append(Problem(log, line, "events",
                                        f"line {line} {what}; it is skipped when the log is read",
                                        severity="warning"))
    from loa_mem.core import features

    others: dict[str, int] = {}
    for checker in features.hooks("check"):
        run.problems.extend(checker(store, paths, others))  # type: ignore[operator]
    every = _all_paths(store) if paths else set()
    keep = [p for p in run.problems if not paths or p.path in selected or p.path not in every]
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
        if tree == top:
            return _validate_root(str(tree), [str(tree / p) for p in wanted] or None)
        return _validate_root(str(tree), [str(tree / p) for p in wanted] or None,
                              _seed_cache(top, tree))


def _seed_cache(top: Path, copy: Path) -> Path | None:
    """The copy starts from this repository's validate cache, so that a file the commit holds
    as it is in the working tree is not read again; and, when some file must be read, from
    this repository's index (its folder is returned), so that its files are re-read entry by
    entry and an entry whose text is unchanged is neither parsed nor checked again."""
    import shutil
    from contextlib import suppress

    from loa_mem.core import git
    from loa_mem.memory import checkcache

    source, target = git.git_dir(top) / "loa-mem", git.git_dir(copy) / "loa-mem"
    target.mkdir(parents=True, exist_ok=True)
    with suppress(OSError):  # none yet, or unreadable: the copy checks every entry
        shutil.copyfile(source / checkcache.CACHE_FILE, target / checkcache.CACHE_FILE)
    return source


def _validate_root(root: str | None, paths: list[str] | None, seeded_from: Path | None = None
                   ) -> Report:
    store, problems = open_store(root)
    try:
        report = validate(store, paths, seeded_from)
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
