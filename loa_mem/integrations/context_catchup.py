"""The session-start block after grimoire files grew outside this process (a `git pull` brought
entries; another process remembered some), without opening the `Store`.

The hook's fast path (`context.fast`) answers only while every file the side cache lists keeps
its signature. When the files that changed are only grimoire files the index holds rows of, and
each of them only grew by entries appended at its end, this path:
- catches the index up with each of them exactly as the `Store` does (`reread.catch_up`: one
  SQLite transaction per file, in which only the appended items are cut and read), and with the
  events log when it grew (`eventlog.refresh`);
- checks that the index now matches every grimoire file (`fast.index_fresh`), that every entry
  up to each file's old last line has the text it had (`Index.fingerprints` against the side
  cache's `rows`), and that the `.meta.yml` files git lists are the ones the side cache read;
- extends the cached shortlist by the appended entries (an entry added can only raise the bar
  the others must reach), makes the memo again (the count of active memories carried over from
  the old memo while it holds, plus the appended ones) and writes the side cache.
It also catches the index up with the files the side cache was brought up to date with
without it (`context_pulled`), when a start needs the index (JSON, --query, a memo past its
span): their rows are checked against the side cache's fingerprints in the same way.
So it costs about a warm start plus reading what was appended. Anything else (an edit above
the end, a file deleted or added, a config or side file changed, a file that does not read, a
shortlist past its span) answers None and the caller takes the slow path, which opens the
`Store` and rebuilds the side cache; the block is the same either way.
"""

from __future__ import annotations

import os
import sqlite3

import loa_mem
from loa_mem.context import block as context
from loa_mem.context import fast, memo
from loa_mem.core import cachefile, clock
from loa_mem.core.errors import LoaMemError
from loa_mem.integrations.context_pulled import META_SUFFIX, extended_fingerprint, meta_files
from loa_mem.integrations.context_texts import text_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path
    from typing import Any

    from loa_mem.memory.index import Index


def block(root: str | None, options: context.Options) -> context.Block | None:
    """The block when only appended entries (and events) changed since the side cache was
    written, the index and the side cache caught up; else None."""
    top = fast.find_top(root)
    if top is None:
        return None
    cache_dir = os.path.join(fast.git_dir(top), "loa-mem")
    try:
        found = fast.read_caches(top, cache_dir)
        now_iso = clock.now_iso()
        changed = _changed(top, found, options, now_iso) if found else None
        if found is None or changed is None:
            return None
        return _caught_up(top, cache_dir, found[0], found[1], changed, options, now_iso)
    except (OSError, ValueError, KeyError, TypeError, sqlite3.Error, LoaMemError):
        return None


def _changed(top: str, found: tuple[dict[str, Any], dict[str, Any]], options: context.Options,
             now_iso: str) -> list[str] | None:
    """The grimoire files that changed, when this path may take the change; else None."""
    config, side_cache = found
    changes = fast.changes(top, side_cache, config, options.agents)
    if changes is None:
        return None
    changed, _ = changes  # none: the index may be behind the side cache (`_behind`)
    rows, files = side_cache.get("rows"), side_cache["files"]
    if not isinstance(rows, dict) or any(
            path not in rows or fast.signature(os.path.join(top, path)) is None
            for path in changed):
        return None
    if not set(fast.grimoire_paths(top, config)) <= files.keys():  # a new month file
        return None
    if memo.shortlist_ids(side_cache["side"], config, now_iso) is None:
        return None
    return changed if meta_files(top) == {p for p in files
                                           if p.endswith(META_SUFFIX)} else None


def _caught_up(top: str, cache_dir: str, config: dict[str, Any], side_cache: dict[str, Any],
               changed: list[str], options: context.Options, now_iso: str
               ) -> context.Block | None:
    from loa_mem.memory.index import Index

    index = Index(os.path.join(cache_dir, "index.sqlite3"))
    try:
        if index.in_memory:
            return None
        behind = _behind(index, top, config, side_cache, changed)
        changed = [*changed, *behind]
        vouched = _catch_up(index, top, config, side_cache, changed, bool(behind))
        if vouched is None:
            return None
        side = _side(index, top, cache_dir, config, side_cache, changed, vouched, now_iso)
        if side is None:
            return None
        use_memo = options.format == "markdown" and not options.query and memo.holds(
            side["memo"], config, now_iso)
        return context.build(index.db, config, side, options, root=top, now_iso=now_iso,
                             preference_lines=fast.preference_lines(
                                 options.user, os.path.join(cache_dir, fast.USER_CACHE)),
                             memo=side["memo"] if use_memo else None)
    finally:
        index.close()


def _behind(index: Index, top: str, config: dict[str, Any], side_cache: dict[str, Any],
            changed: list[str]) -> list[str]:
    """The grimoire files the side cache was brought up to date with but the index was not
    (`context_pulled` extends the memo without it): caught up here as if changed, and their
    rows checked against the side cache's fingerprints like any changed file's."""
    files = side_cache["files"]
    found = []
    for path in fast.grimoire_paths(top, config):
        held = index.signature(path)
        if path not in changed and held is not None and files.get(path) not in (None,
                                                                                 list(held)):
            found.append(path)
    return found


def _catch_up(index: Index, top: str, config: dict[str, Any], side_cache: dict[str, Any],
              changed: list[str], events: bool = False) -> set[str] | None:
    """The index caught up with the `changed` files and the events log, as the `Store` would;
    None when a file must be parsed whole (the slow path does) or the index is not fresh.
    Returns the files whose catch-up itself vouched that entries were only appended to the
    text the side cache saw (the index had the signature the side cache recorded, and the hash
    of that text, recorded then, is the hash of the file's beginning now). `events`: read the
    events log even if it has not grown since the side cache was written."""
    from loa_mem.memory import layout, reread

    memory = config["memory_schema"]
    archive = memory["lifecycle"]["archive_dir"]
    archived = {p for c in memory["categories"].values()
                for p in layout.files(top, archive, c["storage_file"])}
    vouched = set()
    for path in changed:
        now = fast.signature(os.path.join(top, path))
        signature = (now[0], now[1]) if now else None
        before = index.signature(path)
        if before == signature:  # caught up already (by a recall, say)
            continue
        how = reread.catch_up(index, os.path.join(top, path), path, path in archived, signature)
        if how is None:
            return None
        if how == reread.APPENDED and before and list(before) == side_cache["files"][path]:
            vouched.add(path)
    if events or _events_grew(top, side_cache):
        from loa_mem.memory import eventlog

        eventlog.refresh(index, top, layout.files(top, memory["storage_dir"],
                                                  fast.EVENTS_FILE))
    fresh = fast.index_fresh(index.db, top, config, side_cache.get("index_schema"))
    return vouched if fresh else None


def _events_grew(top: str, side_cache: dict[str, Any]) -> bool:
    path, size = side_cache["events"]
    now = fast.signature(os.path.join(top, path))
    return bool((now[1] if now else 0) != size)


def _side(index: Index, top: str, cache_dir: str, config: dict[str, Any],
          side_cache: dict[str, Any], changed: list[str], vouched: set[str], now_iso: str
          ) -> dict[str, Any] | None:
    """The side cache's `side` part for the index as it is now, written with the rest of the
    side cache; None when the change was more than appending entries."""
    rows = dict(side_cache["rows"])
    appended = appended_rows(index, rows, changed, vouched)
    if appended is None:
        return None
    for path, tail in appended.items():
        rows[path] = extended_fingerprint(rows[path], ((row[2], row[1]) for row in tail))
    added = [row for tail in appended.values() for row in tail]
    before = side_cache["side"]
    shortlist = extend_shortlist(index, before["shortlist"], [r[0] for r in added])
    side = {**before, "agent_names": context.agent_names(top, config),
            "shortlist": shortlist or memo.shortlist(index.db, config, now_iso)}
    side["memo"] = context.make_memo(index.db, config, side, now_iso,
                                     active=_active(before.get("memo"), config, added, now_iso))
    events_path = side_cache["events"][0]
    events = fast.signature(os.path.join(top, events_path))
    files = dict(side_cache["files"])
    for path in changed:  # as the index recorded them (they may have changed again since)
        signature = index.signature(path)
        files[path] = list(signature) if signature else None
    texts = text_records(top, side_cache.get("texts"), {
        p: files[p] for p in fast.grimoire_paths(top, config) if p in files},
        index)
    write(cache_dir, {"format": fast.SIDE_FORMAT, "loa_mem": loa_mem.__version__,
                              "index_schema": side_cache["index_schema"],
                              "events": [events_path, events[1] if events else 0],
                              "files": files, "rows": rows, "texts": texts, "side": side})
    return side


def _active(old: Any, config: dict[str, Any], added: list[tuple[Any, ...]],
            now_iso: str) -> int | None:
    """The number of active memories at `now_iso`: the old memo's, while it holds (no entry
    expired since it was made), plus the `added` entries active now; None when unknown."""
    if not memo.holds(old, config, now_iso):
        return None
    return int(old["active"]) + sum(1 for _, _, _, live, expires in added
                                    if live and (expires is None or expires > now_iso))


# -- shared with the slow path (`context_sources.refresh`) ---------------------------------
def appended_rows(index: Index, recorded: dict[str, Any], changed: list[str],
                  vouched: Collection[str] = ()
                  ) -> dict[str, list[tuple[str, int | None, int, bool, str | None]]] | None:
    """Per file of `changed`, its entries appended since its `recorded` fingerprint
    (`Index.fingerprints`; as `Index.after_line` gives them), when appending is all that happened
    to it (every entry up to the recorded last line has the text it had: checked against the
    fingerprint, unless the file is one of `vouched`); else None."""
    found = {}
    for path in changed:
        n, hashed, low, high, last = recorded.get(path) or [0, 0, 0, 0, 0]
        if hashed != n:  # an entry without a text hash cannot be vouched for
            return None
        if path not in vouched and index.fingerprints({path: last}).get(path, [])[:4] != [
                n, hashed, low, high]:
            return None
        found[path] = index.after_line(path, last)
    return found


def extend_shortlist(index: Index, old: dict[str, Any], added: list[str] | None
                     ) -> dict[str, Any] | None:
    """The shortlist `old` with the entries `added` since it was made, when it still holds
    (see `_shortlist`) and has not grown too long; else None (every live entry is ranked
    again)."""
    ids = list(dict.fromkeys([*old["ids"], *(added or [])]))
    if added is None or len(ids) > 2 * len(old["ids"]) + 20:
        return None
    return {**old, "ids": ids, "until": _until_expiry(index, ids[len(old["ids"]):],
                                                     old["until"])}


def _until_expiry(index: Index, ids: list[str], until: float | None) -> float | None:
    """`until`, or the first expiry among `ids` when sooner (the shortlist's span ends there)."""
    if not ids:
        return until
    for expires in index.expiries(ids):
        at = clock.parse(expires).timestamp()
        until = at if until is None else min(until, at)
    return until


def write(cache_dir: str | Path, cache: dict[str, Any]) -> None:
    """Replace the side cache in `cache_dir` by `cache` at once (a reader sees the old one or
    the new one, whole)."""
    cachefile.write(os.path.join(cache_dir, fast.SIDE_CACHE), cachefile.plain(cache))
