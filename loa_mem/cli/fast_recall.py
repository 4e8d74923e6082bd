"""`loa-mem recall`, dispatched by `entry.main` before typer is imported.

Agents call recall before most steps, so while the index is fresh it runs without typer, rich,
the command groups, the `Store` or YAML: it reads the config cache and the index, ranks with
`recall.rank` and prints with the same view and renderer as the Typer command. It handles
`recall [QUERY] [--json] [--explain] [-c C]... [-t T]... [--limit N] [--mode M] [--root DIR]`
written to a pipe or a file. Fresh means all of:
- the config cache (`<git dir>/loa-mem/config.cache`) has the signature of `.loa.config.yaml`;
- a semantic or hybrid mode asked for by name (`--mode`, `memory_schema.retrieval.mode`) has
  its model at hand (fetching one, or saying why it cannot be had, is the Typer command's);
- the index has this version's schema and, for every grimoire file, the signature it has now;
  when a file changed (a pull, a checkout, an editor), the `Store` brings the index up to date
  first, re-reading only the changed entries.
Anything else (help, a mistake, another option, a terminal, which gets rich's tables, a stale
index that cannot be brought up to date, any error while reading) runs the Typer command
instead, which refreshes the index and prints the same results, or the same error.
"""

from __future__ import annotations

import os
import sqlite3
import sys

from loa_mem.context import fast as context_fast
from loa_mem.core import cachefile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from loa_mem.memory.recall import Recalled

_CATEGORIES = ("fact", "decision", "learning", "error", "preference")  # rules.CATEGORIES
_VALUED = {"-c": "--category", "--category": "--category", "-t": "--tag", "--tag": "--tag",
           "--limit": "--limit", "--mode": "--mode", "--root": "--root"}
_MODES = ("lexical", "semantic", "hybrid")  # semantic.MODES
_MAX_LIMIT = 1_000_000  # commands.read.MAX_LIMIT


class Request:
    __slots__ = ("as_json", "categories", "explain", "limit", "mode", "query", "root", "tags")

    def __init__(self) -> None:
        self.query = ""
        self.categories: list[str] = []
        self.tags: list[str] = []
        self.limit: int | None = None
        self.mode = ""
        self.root: str | None = None
        self.as_json = False
        self.explain = False


def main(argv: list[str], fallback: Callable[[list[str]], int]) -> int:
    """`fallback` runs a command line through the Typer application (passed in by
    `entry.main`, so this module does not import it)."""
    request = quick_parse(argv)
    if request is None or not (request.as_json or not sys.stdout.isatty()):
        return fallback(["recall", *argv])
    try:
        result = load(request)
    except Exception:  # whatever it is, the Typer path meets it too and says it properly
        result = None
    if result is None:
        return fallback(["recall", *argv])
    from loa_mem.cli.memory_views import recalled
    from loa_mem.cli.render import emit

    emit(result, request.as_json, recalled)
    return 0


def quick_parse(argv: list[str]) -> Request | None:
    """The forms above, or None for anything else (the Typer path parses those)."""
    if _undecodable(argv):
        return None
    request = Request()
    positional: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg in ("--json", "--explain"):
            request.as_json = request.as_json or arg == "--json"
            request.explain = request.explain or arg == "--explain"
            continue
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name not in _VALUED or (equals and not name.startswith("--")):
            return None
        if not equals:
            value = next(rest, "")
            if not value or value.startswith("-"):
                return None
        if not _take(request, _VALUED[name], value):
            return None
    if len(positional) > 1:
        return None
    request.query = positional[0] if positional else ""
    return request


def _take(request: Request, option: str, value: str) -> bool:
    if option == "--category":
        request.categories.append(value)
        return value in _CATEGORIES
    if option == "--tag":
        request.tags.append(value)
    elif option == "--root":
        request.root = value
    elif option == "--mode":
        request.mode = value
        return value in _MODES
    else:
        # anything else is for the full command line's message (digits past `int`'s limit too)
        if not (value.isascii() and value.isdigit() and len(value) < 19
                and 1 <= int(value) <= _MAX_LIMIT):
            return False
        request.limit = int(value)
    return True


def _undecodable(argv: list[str]) -> bool:
    """Bytes that are not UTF-8 (lone surrogates): the Typer path refuses them in its words."""
    texts = [*argv, *(v for k, v in os.environ.items() if k.startswith("LOA_MEM_"))]
    return any("\ud800" <= c <= "\udfff" for text in texts for c in text)


def load(request: Request) -> Recalled | None:
    """The recall result from a fresh index, or None when the Typer path must answer."""
    if request.root is not None and not os.path.isdir(request.root):
        return None
    top = context_fast.find_top(request.root)
    if top is None:
        return None
    cache = os.path.join(context_fast.git_dir(top), "loa-mem")
    index_path = os.path.join(cache, "index.sqlite3")
    if os.path.exists(os.path.join(top, context_fast.CONFIG_FILE)) and not (
            os.path.exists(index_path) and os.path.exists(os.path.join(cache, cachefile.CONFIG))):
        _caught_up(top)  # a fresh clone: the Store builds both, at no more cost than the Typer path
    cached = cachefile.read(os.path.join(cache, cachefile.CONFIG))
    if not isinstance(cached, dict) or cached.get("signature") != context_fast.signature(
            os.path.join(top, context_fast.CONFIG_FILE)):
        return None
    config: dict[str, Any] = cached["config"]
    retrieval: dict[str, Any] = config["memory_schema"]["retrieval"]
    if not _model_at_hand(request.mode or str(retrieval.get("mode") or "auto"), retrieval):
        return None
    if not config["memory_schema"].get("enabled", True):
        return None  # the Typer path refuses, naming the key
    if not os.path.exists(index_path):
        return None
    from loa_mem.memory.rowcodec import SCHEMA_VERSION

    for attempt in range(2):
        db = sqlite3.connect(index_path, timeout=5)
        try:
            if context_fast.index_fresh(db, top, config, SCHEMA_VERSION):
                return _rank(db, request, retrieval)
            schema = context_fast.index_schema(db)
        finally:
            db.close()
        if attempt or not ((schema == SCHEMA_VERSION and _changed_caught_up(
                top, config, index_path)) or _caught_up(top)):
            return None
    return None


def _changed_caught_up(top: str, config: dict[str, Any], index_path: str) -> bool:
    """The grimoire files the index holds that changed outside loa-mem caught up as the `Store`
    does (`reread.catch_up`, then the events log), without loading the `Store` and its modules
    (about 35 ms); False when a file is new, gone, emptied or must be parsed whole: the `Store`
    then does the rest."""
    from loa_mem.memory import eventlog, layout, reread
    from loa_mem.memory.index import Index

    memory = config["memory_schema"]
    archived = {path for c in memory["categories"].values() for path in layout.files(
        top, memory["lifecycle"]["archive_dir"], c["storage_file"])}
    listed = context_fast.grimoire_paths(top, config)
    index = Index(index_path)
    try:
        if not index.file_paths() <= set(listed):
            return False
        for path in listed:
            now = context_fast.signature(os.path.join(top, path))
            signature = (now[0], now[1]) if now else None
            if signature != index.signature(path) and reread.catch_up(
                    index, os.path.join(top, path), path, path in archived, signature) is None:
                return False
        eventlog.refresh(index, top, layout.files(top, memory["storage_dir"],
                                                  context_fast.EVENTS_FILE))
    finally:
        index.close()
    return True


def _model_at_hand(mode: str, retrieval: dict[str, Any]) -> bool:
    """False when a mode named needs a model that is not in the cache (a few stats)."""
    if mode in ("auto", "lexical"):
        return True
    from loa_mem.memory import semantic

    return semantic.cached(str(retrieval.get("model") or semantic.DEFAULT_MODEL))


def _caught_up(top: str) -> bool:
    """Bring a stale index up to date through the `Store`: after a pull, a checkout or an edit
    only the changed entries are read again, which costs less than loading the Typer command.
    Whatever goes wrong (a file that does not parse) is left to the Typer command to report."""
    from loa_mem.memory.store import Store

    try:
        store = Store.open(top)
        try:
            store.refresh()
        finally:
            store.close()
    except Exception:  # the Typer path reports it as the command's error
        return False
    return True


def _rank(db: sqlite3.Connection, request: Request, retrieval: dict[str, Any]) -> Recalled:
    from loa_mem.memory.recall import Filters, Recalled, rank

    filters = Filters(query=request.query, categories=tuple(request.categories),
                      tags=tuple(request.tags), mode=request.mode,
                      min_confidence=float(retrieval["min_confidence"]),
                      limit=request.limit or int(retrieval["max_per_query"]))
    hits = rank(db, filters, float(retrieval["recency_weight"]), retrieval)
    return Recalled(filters.query, hits, explain=request.explain)
