"""The side cache of the session-start context: what `context` needs from YAML files that are
not grimoire files, as JSON, so that the hook never parses YAML while nothing changed.

`<git dir>/loa-mem/context.cache` (outside git, derived, safe to delete):

    {"format": 1, "loa_mem": VERSION, "index_schema": "4",
     "events": [EVENTS_LOG_PATH, SIZE],                  # size when this was built
     "files": {RELATIVE_PATH: [MTIME_NS, SIZE] | null},  # every file read (null: absent),
                                                         # the grimoire files included
     "rows": {GRIMOIRE_PATH: [ROWS, HASHED, LOW, HIGH, LAST_LINE]},  # see Index.fingerprints
     "side": {"pinned": [{"path", "title", "summary"}],  # .meta.yml sidecars with pin: true
              "hot": [{"path", "why", "since", "touches"}],   # hot.yml `keep`
              "agents": {NAME: {"memories": [...], "relationships": {...}}},
              "agent_names": [NAME, ...],
              "shortlist": {"key", "from", "until", "ids"},     # see context.memo.shortlist
              "memo": {...} | null}}       # see context.memo (block.make_memo)

     "texts": {GRIMOIRE_PATH: [MTIME_NS, SIZE, CRC32, LINES, INDENT]},  # the text the rows
                                                         # and the memo were made from
It is rebuilt by the slow path when `context.fast.side_fresh` says it is stale, or carried
over by `context_catchup` or `context_pulled` when only entries were appended to grimoire
files. Sidecars are found with `git ls-files` (tracked and untracked, ignored files excluded);
a sidecar created by hand is found at the next rebuild, which any loa-mem write (it grows the
events log) triggers.
"""

from __future__ import annotations

import os

import loa_mem
from loa_mem.context import block as context
from loa_mem.context import fast, memo
from loa_mem.context.fast import SIDE_CACHE, SIDE_FORMAT, signature
from loa_mem.core import cachefile, clock
from loa_mem.integrations import context_pulled
from loa_mem.integrations.context_catchup import appended_rows, block, extend_shortlist, write
from loa_mem.integrations.context_pulled import META_SUFFIX, meta_files
from loa_mem.integrations.context_texts import text_records

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up path's import budget
    from typing import Any

    from loa_mem.memory.store import Store

LAST_MEMORIES = 10  # MDAN: "FOR each memory in sidecar.memories (last 10)"


def working_set_dir(config: dict[str, Any]) -> str:
    section = config.get("working_set") or {}
    return str(section.get("dir") or "grimoires/loa/working-set")


def refresh(store: Store, agents: tuple[str, ...], memo_ok: bool = True) -> dict[str, Any]:
    """Read the side files again, write the cache, and return its `side` part. No memo when
    not `memo_ok` (a grimoire file could not be read: the block must keep naming it, which
    only the slow path does, and the fast path takes it while the index lacks that file)."""
    top = str(store.top)
    config = store.config.data
    previous = _previous(store)
    before: dict[str, Any] = previous.get("side") or {}
    files: dict[str, list[int] | None] = {}
    same = _Unchanged(top, previous, files)
    hot_path = f"{working_set_dir(config)}/hot.yml"
    pins = {p["path"]: p for p in before.get("pinned") or []}
    pinned: list[dict[str, Any]] = []
    for meta_path in _meta_files(store):
        if same(meta_path):  # pinned then (and so now) or not
            pinned.extend(p for p in [pins.get(meta_path[:-len(META_SUFFIX)])] if p)
        elif _is_pinned(data := _load(top, meta_path, files)):
            pinned.append(_pin(meta_path, data))
    wanted = dict.fromkeys([*(before.get("agents") or {}), *agents])
    known = before.get("agents") or {}
    sidecars = {name: known.get(name) if same(context.sidecar_path(config, name))
                else _sidecar(top, config, name, files) for name in wanted}
    side: dict[str, Any] = {
        "pinned": sorted(pinned, key=lambda p: p["path"]),
        "hot": before.get("hot") or [] if same(hot_path) else _hot(top, hot_path, files),
        "agents": {name: sidecar for name, sidecar in sidecars.items() if sidecar is not None},
        "agent_names": context.agent_names(top, config),
    }
    for grimoire in store.grimoire_files():
        files[grimoire.path] = signature(str(store.top / grimoire.path))
    now_iso = clock.now_iso()
    side["shortlist"] = _shortlist(store, previous, files, now_iso)
    side["memo"] = context.make_memo(store.index.db, config, side, now_iso) if memo_ok else None
    schema = store.index.schema_version()
    newest = store.event_logs()[-1]  # the file a command that ran since would have grown
    events = signature(str(store.top / newest))
    grimoires = {g.path: files[g.path] for g in store.grimoire_files()}
    texts = text_records(top, previous.get("texts"), grimoires, store.index)
    write(store.cache_dir, {"format": SIDE_FORMAT, "loa_mem": loa_mem.__version__,
                   "index_schema": schema, "events": [newest, events[1] if events else 0],
                   "files": files, "rows": store.index.fingerprints(), "texts": texts,
                   "side": side})
    return side


def _shortlist(store: Store, previous: dict[str, Any], files: dict[str, list[int] | None],
               now_iso: str) -> dict[str, Any]:
    """The previous shortlist with the entries loa-mem added since (learnt from its journal of
    writes), while that shortlist holds and nothing else changed the grimoire files: an entry
    added can only raise the bar the others must reach, so it still holds. Else every live
    entry is ranked again."""
    from loa_mem.memory import journal

    config = store.config.data
    before = previous.get("side") or {}
    if memo.shortlist_ids(before, config, now_iso) is not None:
        grimoires = {g.path: files.get(g.path) for g in store.grimoire_files()}
        recorded = previous["files"]
        added = journal.added_since(store.cache_dir, {p: recorded.get(p) for p in grimoires},
                                    grimoires)
        if added is None and isinstance(previous.get("rows"), dict):  # a pull, an editor
            added = _appended(store, previous["rows"],
                              [p for p, sig in grimoires.items() if recorded.get(p) != sig])
        extended = extend_shortlist(store.index, before["shortlist"], added)
        if extended is not None:
            return extended
    return memo.shortlist(store.index.db, config, now_iso)


def _appended(store: Store, recorded: dict[str, Any], changed: list[str]) -> list[str] | None:
    """The ids of the entries appended to the `changed` files since their `recorded`
    fingerprints (`Index.fingerprints`), when appending is all that happened to them; else None."""
    found = appended_rows(store.index, recorded, changed)
    return None if found is None else [row[0] for rows in found.values() for row in rows]


def _previous(store: Store) -> dict[str, Any]:
    """The side cache as the last refresh wrote it ({} when absent, unreadable or written by
    another version)."""
    cache = cachefile.read(str(store.cache_dir / SIDE_CACHE))
    ok = (isinstance(cache, dict) and cache.get("format") == SIDE_FORMAT
          and cache.get("loa_mem") == loa_mem.__version__ and isinstance(cache.get("side"), dict)
          and isinstance(cache.get("files"), dict))
    return cache if ok else {}


class _Unchanged:
    """Whether a side file still has the signature the previous cache recorded: then what was
    read from it then is used again (no YAML parsed, often no YAML library imported, when only
    grimoire files changed). Notes the signature in `files` when so."""

    def __init__(self, top: str, previous: dict[str, Any],
                 files: dict[str, list[int] | None]) -> None:
        self.top = top
        self.recorded: dict[str, Any] = previous.get("files") or {}
        self.files = files

    def __call__(self, rel: str) -> bool:
        if rel not in self.recorded:
            return False
        now = signature(os.path.join(self.top, rel))
        if now != self.recorded[rel]:
            return False
        self.files[rel] = now
        return True


def _hot(top: str, rel: str, files: dict[str, list[int] | None]) -> list[dict[str, Any]]:
    hot = _load(top, rel, files)
    return [{k: item[k] for k in ("path", "why", "since", "touches") if k in item}
            for item in (hot.get("keep") or [] if isinstance(hot, dict) else [])
            if isinstance(item, dict) and item.get("path")]


def _load(top: str, rel: str, files: dict[str, list[int] | None]) -> Any:
    """The parsed file (None when absent), its signature noted in `files`. A file that does not
    parse is left out of the block, not fatal: `loa-mem validate` names the problem."""
    from loa_mem.core import yamlio
    from loa_mem.core.errors import InvalidFile

    path = os.path.join(top, rel)
    files[rel] = signature(path)
    if files[rel] is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return yamlio.load(handle.read(), rel)
    except (OSError, UnicodeDecodeError, InvalidFile):
        return None


def _meta_files(store: Store) -> list[str]:
    return sorted(meta_files(str(store.top)) or ())


def _is_pinned(data: Any) -> bool:
    return isinstance(data, dict) and data.get("pin") is True


def _pin(meta_path: str, data: dict[str, Any]) -> dict[str, Any]:
    item = {"path": meta_path[: -len(META_SUFFIX)]}
    for key in ("title", "summary"):
        if isinstance(data.get(key), str) and data[key].strip():
            item[key] = data[key].strip()
    return item


def _sidecar(top: str, config: dict[str, Any], agent: str,
             files: dict[str, list[int] | None]) -> dict[str, Any] | None:
    data = _load(top, context.sidecar_path(config, agent), files)
    if not isinstance(data, dict):
        return None
    memories = [m for m in data.get("memories") or [] if isinstance(m, dict)]
    raw = data.get("relationships")
    relationships: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {"memories": [{k: m.get(k) for k in ("type", "content", "confidence")}
                         for m in memories[-LAST_MEMORIES:]],
            "relationships": {k: [str(a) for a in v] for k, v in relationships.items()
                              if isinstance(v, list)}}


def load(root: str | None, options: context.Options) -> context.Block:
    """The session-start block: from the caches when they are fresh, else through the `Store`."""
    return fast.load(root, options, slow_block)


def slow_block(root: str | None, options: context.Options) -> context.Block:
    """When a cache is stale: after entries were only appended, from them alone
    (`context_pulled`), else through the catch-up path (`context_catchup`), else through the
    `Store`."""
    pulled = context_pulled.block(root, options)
    return pulled if pulled is not None else after_pulled(root, options)


def after_pulled(root: str | None, options: context.Options) -> context.Block:
    """`slow_block` when `context_pulled` answered None."""
    caught_up = block(root, options)
    return caught_up if caught_up is not None else store_block(root, options)


def store_block(root: str | None, options: context.Options) -> context.Block:
    """Through the `Store`, failing open: a config or a grimoire file that cannot be read is
    named in the block's warnings, and the block holds what the other files say."""
    from loa_mem.core.errors import ConfigError, LoaMemError
    from loa_mem.memory import config as config_mod
    from loa_mem.memory.store import Store, locate_top

    warnings: list[str] = []
    try:
        store = Store.open(root)
    except ConfigError as error:
        warnings.append(f"{error.message}; the block uses the default settings")
        store = Store(locate_top(root), config_mod.default_config())
    try:
        for path, failure in store.refresh_files().items():
            warnings.append(f"{failure.one_line()} (its memories are left out; `loa-mem "
                            "validate` lists every problem)")
            store.forget_file(path)
        store._refresh_events()
        try:
            side = refresh(store, options.agents, memo_ok=not warnings)
        except LoaMemError as error:
            warnings.append(error.one_line())
            side = {}
        return context.build(store.index.db, store.config.data, side, options,
                             root=str(store.top),
                             preference_lines=fast.preference_lines(
                                 options.user, str(store.cache_dir / fast.USER_CACHE)),
                             warnings=warnings)
    finally:
        store.close()
