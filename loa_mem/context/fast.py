"""`loa-mem context`, dispatched by `entry.main` before typer is imported.

The session-start hook runs this before every agent session, so while the caches are fresh it
imports only the standard library (sqlite3 only when it reads the index, json only for
`--format json`; help and mistakes go to the full CLI) and the light `context`, `memo`,
`scoring`, `tokens`, `clock` and `cachefile` modules: no `re` either (`json` imports it), which
with what it imports would cost a fifth of the hook's budget. Fresh means all of:
- the config cache (`<git dir>/loa-mem/config.cache`, written by `config.load`) has the
  signature (mtime, size) of `.loa.config.yaml` as it is now;
- the side cache (`context.cache`, written by `context_sources`) was written by this version of
  loa-mem, the events log has not grown since (a loa-mem command may have created a sidecar it
  lists), each file it lists (grimoire files included) still has its signature, it holds
  every agent asked for, and its shortlist of top memories still holds at this time
  (`memo.shortlist`).
Then the Markdown block without --query is printed from the side cache's memo while it holds
(`memo.holds`), without opening the index. Otherwise (JSON, --query, a memo past its span) the
index is read, and must be fresh too: every grimoire file has the signature its row in the
index's `files` table records, and no row is missing.
Anything else, including any error while reading, takes the slow path passed in: after entries
were only appended to grimoire files (a pull), `integrations.context_catchup` catches the index
and the side cache up without the `Store`; otherwise the `Store` is opened, which refreshes the
index, the side cache is rebuilt, and the same block is built. The user whose
preferences are shown is resolved through `gitfast.cached_user_email` (`USER_CACHE`).
"""
from __future__ import annotations

import os
import sys

import loa_mem
from loa_mem.context import block as context
from loa_mem.context import memo
from loa_mem.core import cachefile, clock
from loa_mem.memory import layout
from loa_mem.memory.unsettled import UNSETTLED

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    Slow = Callable[[str | None, context.Options], context.Block]

SIDE_CACHE = cachefile.SIDE
SIDE_FORMAT = 1
USER_CACHE = cachefile.USER_EMAIL
CONFIG_FILE = ".loa.config.yaml"  # config.CONFIG_FILE, not imported: config.py is not light
EVENTS_FILE = "events.jsonl"  # events.EVENTS_FILE, not imported: it brings getpass and pathlib


def main(argv: list[str], slow: Slow, full: Callable[[list[str]], int]) -> int:
    """The hook: `slow` builds the block when a cache is stale (it opens the `Store`); `full`
    runs the command through the CLI, for help, a mistake on the command line (the one help
    and error style of every command) and a failure that is a bug (its one line, crash log and
    exit 3). Both are passed in by `entry.main`, so this module imports neither."""
    parsed = quick_parse(argv)
    if parsed is None:
        return full(["context", *argv])
    options, root = parsed
    try:
        block = load(root, options, slow)
    except Exception as failure:
        if not fail_open(failure):
            return full(["context", *argv])
        return 0
    write(block, options.format)
    return 0


def fail_open(failure: Exception) -> bool:
    """Whether `failure` is one a user can fix in a store (then named on stderr: the hook
    prints nothing and the session starts without memories) rather than a bug or the absence
    of a store."""
    from loa_mem.core.errors import user_error
    from loa_mem.core.terminal import printable

    known = user_error(failure)
    if known is None or known.kind == "not-a-repo":  # no store here: exit 1, as every command
        return False
    sys.stderr.write(f"loa-mem: warning: context: {printable(known.one_line(), True)}; the "
                     "session starts without project memory\n")
    return True


def write(block: context.Block | None, output: str) -> None:
    """The block on stdout and each warning on stderr. A session-start hook fails open: what
    could be read is printed, what could not is named, and the exit code stays 0."""
    for warning in block.warnings if block is not None else []:
        from loa_mem.core.terminal import printable

        sys.stderr.write(f"loa-mem: warning: context: {printable(warning, one_line=True)}\n")
    if block is not None:
        sys.stdout.write(render(block, output))


_VALUED = ("--budget", "--query", "--agent", "--user", "--format", "--root")
_SHORT = {"-f": "--format"}


def quick_parse(argv: list[str]) -> tuple[context.Options, str | None] | None:
    """The valid forms of the options above, without building an argparse parser (its gettext
    look-ups and terminal probing cost ~7 ms of the hook's 50). None for anything else (help,
    mistakes), which the full CLI then answers."""
    given: dict[str, list[str]] = {name: [] for name in _VALUED}
    as_json = False
    rest = iter(argv)
    for arg in rest:
        name, equals, value = arg.partition("=")
        name = _SHORT.get(name, name)
        if arg == "--json":
            as_json = True
            continue
        if name not in given:
            return None
        if not equals:
            value = next(rest, "")
            if not value or value.startswith("-"):
                return None
        given[name].append(value)
    single = {k: v[-1] if v else None for k, v in given.items()}
    budget = single["--budget"]
    # ASCII digits, not too many for `int` (the full CLI words any other value)
    if budget is not None and not (budget.isascii() and budget.isdigit() and len(budget) < 19
                                   and int(budget) >= context.MIN_BUDGET):
        return None
    if single["--format"] not in (None, "markdown", "json") or context.agents_problem(
            given["--agent"]):
        return None
    output = "json" if as_json else single["--format"] or "markdown"
    return context.Options(budget=int(budget) if budget else None, query=single["--query"] or "",
                           agents=tuple(given["--agent"]), output=output,
                           user=single["--user"]), single["--root"]


def render(block: context.Block, output: str) -> str:
    if output == "json":
        import json

        return json.dumps(block.to_json(), ensure_ascii=False, indent=2) + "\n"
    from loa_mem.core.terminal import printable

    return printable(block.text)


def load(root: str | None, options: context.Options, slow: Slow) -> context.Block:
    """The block, from the caches when they are fresh, else from `slow` (through the `Store`)."""
    top = find_top(root)
    if top is not None:
        try:
            block = _from_caches(top, options)
        except (OSError, ValueError, KeyError, TypeError):
            block = None
        if block is not None:
            return block
    return slow(root, options)


def _from_caches(top: str, options: context.Options) -> context.Block | None:
    """The block from the side cache's memo (markdown without --query: no SQLite at all) or
    from the index, when the caches are fresh; else None."""
    cache = os.path.join(git_dir(top), "loa-mem")
    fresh = _fresh(top, cache, options)
    if fresh is None:
        return None
    config, side_cache = fresh
    side = side_cache["side"]
    now_iso = clock.now_iso()
    if not options.query and memo.shortlist_ids(side, config, now_iso) is None:
        return None
    email_cache = os.path.join(cache, USER_CACHE)
    if options.format == "markdown" and not options.query and memo.holds(side.get("memo"),
                                                                         config, now_iso):
        return context.build(None, config, side, options, root=top, now_iso=now_iso,
                             preference_lines=preference_lines(options.user, email_cache),
                             memo=side["memo"])
    import sqlite3

    index_path = os.path.join(cache, "index.sqlite3")
    if not os.path.exists(index_path):
        return None
    try:
        db = sqlite3.connect(index_path, timeout=5)
    except sqlite3.Error:
        return None
    try:
        if not _index_fresh(db, top, config, side_cache):
            return None
        return context.build(db, config, side, options, root=top, now_iso=now_iso,
                             preference_lines=preference_lines(options.user, email_cache))
    except sqlite3.Error:
        return None
    finally:
        db.close()


def preference_lines(user: str | None, email_cache: str | None = None) -> list[str]:
    """The user's applied preferences, from the people feature when it is installed. A
    personal store that cannot be read gives none: the session starts without them.
    `email_cache`: see `people.start.context_lines`."""
    try:  # __import__, not importlib: importlib's own import costs the hook ~1.5 ms
        people = __import__("loa_mem.people.start", fromlist=["context_lines"])
    except ImportError:
        return []
    context_lines = getattr(people, "context_lines", None)
    if context_lines is None:
        return []
    try:
        return [str(line) for line in context_lines(user, email_cache)]
    except Exception as failure:  # preferences are optional at session start
        sys.stderr.write(f"loa-mem: warning: preferences not loaded: {failure}\n")
        return []


# -- freshness ----------------------------------------------------------------------------------
def find_top(root: str | None) -> str | None:
    """As `store.locate_top` (git.find_top), in os.path terms: no pathlib, no subprocess."""
    start = os.path.abspath(root or os.environ.get("LOA_MEM_ROOT") or os.getcwd())
    current = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_dir(top: str) -> str:
    """As `git.git_dir`: `.git`, or where a `.git` file (worktree, submodule) points."""
    dot_git = os.path.join(top, ".git")
    if os.path.isfile(dot_git):
        with open(dot_git, encoding="utf-8") as handle:
            pointer = handle.read().strip()
        if pointer.startswith("gitdir:"):
            return os.path.normpath(os.path.join(top, pointer.split(":", 1)[1].strip()))
    return dot_git


def signature(path: str) -> list[int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return [stat.st_mtime_ns, stat.st_size]


def newest_event_log(top: str, config: dict[str, Any]) -> str:
    """As `Store.event_logs()[-1]`: the events log's newest file."""
    return layout.files(top, config["memory_schema"]["storage_dir"], EVENTS_FILE)[-1]


def grimoire_paths(top: str, config: dict[str, Any]) -> list[str]:
    """As `Store.grimoire_files`: each category's files in the storage and archive dirs."""
    memory = config["memory_schema"]
    dirs = (memory["storage_dir"], memory["lifecycle"]["archive_dir"])
    return [path for d in dirs for c in memory["categories"].values()
            for path in layout.files(top, d, c["storage_file"])]


def _fresh(top: str, cache: str, options: context.Options
           ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The config and the side cache when both are fresh for `options`, else None."""
    found = read_caches(top, cache)
    if found is None or not side_fresh(top, found[1], found[0], options.agents):
        return None
    return found


def read_caches(top: str, cache: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The cached config, when it is fresh, and the side cache as it is; else None."""
    cached_config = cachefile.read(os.path.join(cache, cachefile.CONFIG))
    if not isinstance(cached_config, dict) or cached_config.get("signature") != signature(
            os.path.join(top, CONFIG_FILE)):
        return None
    config: dict[str, Any] = cached_config["config"]
    side_cache = cachefile.read(os.path.join(cache, SIDE_CACHE))
    if not isinstance(side_cache, dict):
        return None
    return config, side_cache


def side_fresh(top: str, cache: dict[str, Any], config: dict[str, Any],
               agents: tuple[str, ...]) -> bool:
    return changes(top, cache, config, agents) == ([], False)


def changes(top: str, cache: dict[str, Any], config: dict[str, Any], agents: tuple[str, ...]
            ) -> tuple[list[str], bool] | None:
    """Since the side cache `cache` was written: the files it lists whose signature changed,
    and whether the events log grew. None when it cannot be used at all: written by another
    version, lacking an agent asked for, or the events log shrank or moved to another file."""
    if cache.get("format") != SIDE_FORMAT or cache.get("loa_mem") != loa_mem.__version__:
        return None
    events_path, events_size = cache["events"]
    if events_path != newest_event_log(top, config):
        return None
    now = signature(os.path.join(top, events_path))
    size = now[1] if now else 0
    files: dict[str, Any] = cache["files"]
    if size < events_size or any(context.sidecar_path(config, agent) not in files
                                 for agent in agents):
        return None
    return [rel for rel, sig in files.items() if signature(os.path.join(top, rel)) != sig], (
        size != events_size)


def _index_fresh(db: sqlite3.Connection, top: str, config: dict[str, Any],
                 side_cache: dict[str, Any]) -> bool:
    return index_fresh(db, top, config, side_cache.get("index_schema"))


def index_schema(db: sqlite3.Connection) -> str | None:
    """The schema version the index `db` was built with (None: none recorded). An index whose
    settling is still to do (a large cold build's) gets a settler if nobody is at work on it."""
    found = dict(db.execute(
        f"SELECT key, value FROM meta WHERE key IN ('schema', '{UNSETTLED}')").fetchall())
    if UNSETTLED in found:
        from loa_mem.memory.unsettled import resume

        resume(db.execute("PRAGMA database_list").fetchone()[2])
    schema = found.get("schema")
    return None if schema is None else str(schema)


def index_fresh(db: sqlite3.Connection, top: str, config: dict[str, Any],
                schema: object) -> bool:
    """Whether the index `db` has schema `schema` and, for every grimoire file, the signature
    the file has now (also used by recall's fast path)."""
    if index_schema(db) != schema:
        return False
    recorded = {path: [mtime, size] for path, mtime, size in
                db.execute("SELECT path, mtime_ns, size FROM files")}
    listed = grimoire_paths(top, config)
    return recorded.keys() <= set(listed) and all(
        recorded.get(rel) == signature(os.path.join(top, rel)) for rel in listed)
