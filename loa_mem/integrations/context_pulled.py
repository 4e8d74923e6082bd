"""The session-start block after a `git pull` appended entries to grimoire files, made from the
appended entries alone: no index, no SQLite, no `Store`.

The side cache (`context_sources`) keeps, per grimoire file, a record of the text the index,
and so the memo, were made from (`texts`: its signature, size, CRC-32, lines and list indent).
When every change since the side cache was written is entries appended at the end of such files
(and lines appended to the events log), this path, where the catch-up path
(`context_catchup`) would catch the index up and rank the shortlist again:
- checks that each changed file still begins with the recorded text (its first bytes have the
  CRC recorded) and that what follows starts a top-level item, and reads only what follows
  (`yamllines` for entries in the plainest layout, else `yamlfast.load_part`);
- gives each appended entry the columns the index would (`indexrows`): live, active, ranked,
  and recall's score, computed as the index's SQL computes it (`scoring`);
- extends the memo (`context.memo`): the count of active memories, the expiry bounds, each
  category's top entries in the ranking's order, and the span they hold for, bounded by every
  pair whose order matters (as `memo.ranking_span`); extends the shortlist and the fingerprints
  (`rows`) as the catch-up path does; checks the `.meta.yml` files git lists and lists the
  agent sidecars again, as it does too;
- writes the side cache with the files' new signatures: the next start is a warm one.
The index is left behind: its `files` table keeps the old signatures, so the next command that
reads it catches it up, as after any change outside loa-mem. Whatever it cannot vouch for
answers None and the caller takes the catch-up path, whose block is the same: a file changed
above its end or replaced, an appended entry that expires within the warning window, has an
effectiveness record, repeats a listed id, or whose score is too close to another's to order
them without SQLite's rounding; a memo or shortlist past its span; JSON or --query.

Light on purpose (the hook runs it): the standard library, `zlib`, the context modules,
`yamllines`, and the fast reader only for appended text in another layout.
"""

from __future__ import annotations

import math
import os
import zlib
from itertools import pairwise

import loa_mem
from loa_mem.context import block as context
from loa_mem.context import fast, memo
from loa_mem.core import cachefile, clock, yamllines
from loa_mem.core.errors import LoaMemError
from loa_mem.integrations.context_texts import scan
from loa_mem.memory import layout, scoring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    Span = tuple[Any, int, int, dict[str, int], int]  # yamlfast's: data, first, last, keys, hash
    # a memo row: id, confidence, None, recency, bonus, total, path, first line, data,
    # category, created_ts (`block.make_memo`)
    Row = list[Any]

META_SUFFIX = ".meta.yml"
_HALF = 4294967295  # the low 32 bits: `Index.fingerprints` sums each half of a text hash
_SHOWN_KEYS = ("summary", "content", "tags")  # what the block shows of an entry's data


def block(root: str | None, options: context.Options) -> context.Block | None:
    """The Markdown block without --query when only appended entries (and events) changed
    since the side cache was written, the side cache brought up to date; else None."""
    if options.format != "markdown" or options.query:
        return None
    top = fast.find_top(root)
    if top is None:
        return None
    cache_dir = os.path.join(fast.git_dir(top), "loa-mem")
    try:
        found = fast.read_caches(top, cache_dir)
        if found is None:
            return None
        config, side_cache = found
        now_iso = clock.now_iso()
        side = _extended(top, cache_dir, config, side_cache, options, now_iso)
    except (OSError, ValueError, KeyError, TypeError, IndexError, ArithmeticError, LoaMemError):
        return None
    if side is None:
        return None
    return context.build(None, config, side, options, root=top, now_iso=now_iso,
                         preference_lines=fast.preference_lines(
                             options.user, os.path.join(cache_dir, fast.USER_CACHE)),
                         memo=side["memo"])


def _extended(top: str, cache_dir: str, config: dict[str, Any], side_cache: dict[str, Any],
              options: context.Options, now_iso: str) -> dict[str, Any] | None:
    """The side cache's `side` part extended by the appended entries, written with the rest of
    the side cache; None when this path cannot vouch for it."""
    changes = fast.changes(top, side_cache, config, options.agents)
    if changes is None or changes == ([], False):
        return None
    changed = changes[0]
    side, files = side_cache["side"], side_cache["files"]
    texts, rows = side_cache.get("texts"), side_cache.get("rows")
    if not (isinstance(texts, dict) and isinstance(rows, dict)
            and config["memory_schema"].get("enabled", True)
            and memo.holds(side.get("memo"), config, now_iso)
            and memo.shortlist_ids(side, config, now_iso) is not None
            and set(fast.grimoire_paths(top, config)) <= files.keys()):
        return None
    files, texts, rows = dict(files), dict(texts), dict(rows)
    archived = _archive_paths(top, config)
    added: list[Entry] = []
    for path in changed:
        record = texts.get(path)
        if record is None or record[:2] != files[path] or path not in rows:
            return None
        read = _appended(top, path, record)
        if read is None:
            return None
        spans, texts[path] = read
        files[path] = texts[path][:2]
        rows[path] = extended_fingerprint(rows[path], ((s[2], s[4]) for s in spans))
        added.extend(_entry(span, path, path in archived) for span in spans)
    extended = _side(top, config, side, added, now_iso)
    if extended is None or meta_files(top) != {p for p in files if p.endswith(META_SUFFIX)}:
        return None
    events_path = side_cache["events"][0]
    events = fast.signature(os.path.join(top, events_path))
    cachefile.write(os.path.join(cache_dir, fast.SIDE_CACHE), {
        **side_cache, "format": fast.SIDE_FORMAT, "loa_mem": loa_mem.__version__,
        "events": [events_path, events[1] if events else 0], "files": files, "rows": rows,
        "texts": texts, "side": extended})
    return extended


def _archive_paths(top: str, config: dict[str, Any]) -> set[str]:
    memory = config["memory_schema"]
    archive = memory["lifecycle"]["archive_dir"]
    return {p for c in memory["categories"].values()
            for p in layout.files(top, archive, c["storage_file"])}


def _appended(top: str, path: str, record: list[int]) -> tuple[list[Span], list[int]] | None:
    """The entries appended to `path` after the text `record` describes, and the record of the
    file now; None when its beginning changed or what follows is not whole items."""
    _, size, crc, lines, indent = record
    read = scan(os.path.join(top, path), size) if indent == 0 else None
    if read is None or read.crc != crc or not read.tail or read.tail[0] != 45 or (
            size and read.last != 10) or read.marked:  # the text recorded, "\n", then "-"
        return None
    tail, signature = read.tail, read.signature
    text = tail.decode("utf-8")
    spans = yamllines.read(text, lines)
    if spans is None:  # not in the plainest layout: the fast reader (and its `re`) reads it
        from loa_mem.core import yamlfast

        parsed = yamlfast.load_part(text, path, lines)
        spans = parsed.spans if parsed is not None else None
    if not spans:
        return None
    return spans, [*signature, zlib.crc32(tail, crc), lines + tail.count(b"\n"), indent]


def extended_fingerprint(recorded: list[int], added: Iterable[tuple[int, int | None]]
                         ) -> list[int]:
    """`Index.fingerprints` of a file after rows were appended to it: `added` gives each new
    row's (last line, text hash or None)."""
    n, hashed, low, high, last = recorded
    for last_line, text_hash in added:
        n, last = n + 1, max(last, last_line)
        if text_hash is not None:
            hashed, low = hashed + 1, low + (text_hash & _HALF)
            high += (text_hash >> 32) & _HALF
    return [n, hashed, low, high, last]


# -- the entries ------------------------------------------------------------------------------
class Entry:
    """An appended entry as the index's columns give it (`indexrows._columns`)."""

    __slots__ = ("category", "confidence", "created", "data", "expires", "first_line", "id",
                 "live", "odd", "path")

    def __init__(self, data: Any, path: str, first_line: int, in_archive: bool) -> None:
        self.odd = not isinstance(data, dict) or bool(data.get("effectiveness")) or isinstance(
            data.get("confidence"), bool)
        data = data if isinstance(data, dict) else {}
        get = data.get
        self.id, self.path, self.first_line = get("id"), path, first_line
        self.category = str(get("category"))
        confidence = get("confidence")
        self.confidence = confidence if type(confidence) in (int, float) else None
        source = get("source")
        self.created = _epoch(source.get("timestamp") if isinstance(source, dict) else None)
        self.expires = str(data["expires_at"]) if get("expires_at") else None
        self.live = not (in_archive or get("archived") or get("superseded_by"))
        self.data = {k: data[k] for k in _SHOWN_KEYS if k in data}

    def active(self, now_iso: str) -> bool:
        return self.live and (self.expires is None or self.expires > now_iso)

    def shown_plainly(self) -> bool:
        """Whether the block shows this entry's data as the index's JSON would give it."""
        tags = self.data.get("tags")
        texts = all(isinstance(self.data.get(k), (str, type(None))) for k in _SHOWN_KEYS[:2])
        return texts and (tags is None or (
            isinstance(tags, list) and all(isinstance(t, str) for t in tags)))


def _entry(span: Span, path: str, in_archive: bool) -> Entry:
    return Entry(span[0], path, span[1], in_archive)


def _epoch(timestamp: Any) -> float | None:
    """`indexrows._epoch`: the created_ts column."""
    written = clock.written_epoch(timestamp)
    if written is not None:
        return written
    text = str(timestamp) if timestamp else ""
    try:
        return clock.parse(text).timestamp() if text else None
    except ValueError:
        return None


# -- the memo -----------------------------------------------------------------------------------
def _side(top: str, config: dict[str, Any], side: dict[str, Any], added: list[Entry],
          now_iso: str) -> dict[str, Any] | None:
    """The `side` part with the shortlist and the memo extended by the `added` entries."""
    old = side["memo"]
    memory = config["memory_schema"]
    ids = [str(e.id) for e in added]
    listed = side["shortlist"]["ids"]
    if (any(e.odd or not isinstance(e.id, str) for e in added)
            or len(set(ids)) != len(ids) or set(ids) & set(listed)):
        return None
    now = clock.parse(now_iso).timestamp()
    if any(e.created is not None and e.created > now for e in added):
        return None  # a recency that starts decaying later (see `memo.ranking_span`)
    bounds = _bounds(memory, old["bounds"], added, now_iso)
    shortlist = _shortlist(side["shortlist"], added)
    if bounds is None or shortlist is None:
        return None
    found = _ranked(config, old, added, now, now_iso, shortlist["until"])
    if found is None:
        return None
    shown, until = found
    new_memo = {**old, "from": now, "until": None if until == math.inf else until,
                "bounds": bounds, "rows": shown,
                "active": int(old["active"]) + sum(e.active(now_iso) for e in added)}
    return {**side, "agent_names": context.agent_names(top, config), "shortlist": shortlist,
            "memo": new_memo}


def _bounds(memory: dict[str, Any], old: list[str | None], added: list[Entry],
            now_iso: str) -> list[str | None] | None:
    """The memo's [next_expiry, next_warning] with the `added` entries; None when one of them
    is live and expires within the warning window (or has expired): its line is not in the
    memo's expiring list."""
    limit = memo.warning_limit(memory, now_iso)
    found = list(old)
    for entry in added:
        if not entry.live or entry.expires is None:
            continue
        if entry.expires <= limit:
            return None
        found = [entry.expires if bound is None else min(bound, entry.expires)
                 for bound in found]
    return found


def _shortlist(old: dict[str, Any], added: list[Entry]) -> dict[str, Any] | None:
    """`context_catchup.extend_shortlist`: the appended ids listed, the span cut at their first
    expiry; None when the list would grow too long."""
    ids = [*old["ids"], *(str(e.id) for e in added)]
    if len(ids) > 2 * len(old["ids"]) + 20:
        return None
    until = old["until"]
    for entry in added:
        if entry.expires is not None:
            at = clock.parse(entry.expires).timestamp()
            until = at if until is None else min(until, at)
    return {**old, "ids": ids, "until": until}


def _ranked(config: dict[str, Any], old: dict[str, Any], added: list[Entry], now: float,
            now_iso: str, shortlist_until: float | None) -> tuple[list[Row], float] | None:
    """Each category's top entries among the memo's rows and the `added` ones, in the
    ranking's order at `now`, and until when that order holds (`memo.ranking_span`'s pairs);
    None when it cannot be told apart from SQLite's or holds no longer."""
    memory = config["memory_schema"]
    retrieval = memory.get("retrieval") or {}
    weight = float(retrieval.get("recency_weight", 0.2))
    minimum = float(retrieval.get("min_confidence", 0.6))
    per_category = int(memo.settings(config)["per_category"])
    categories: dict[str, list[Row]] = {name: [] for name in memory["categories"]}
    for row in old["rows"]:
        if len(row) != 11 or row[9] not in categories or not isinstance(row[1], (int, float)):
            return None
        categories[row[9]].append(_scored(row, weight, now))
    for entry in added:
        if not (entry.active(now_iso) and entry.confidence is not None
                and entry.confidence >= minimum):
            continue
        if entry.category not in categories or not entry.shown_plainly() or not math.isfinite(
                entry.confidence):
            return None
        categories[entry.category].append(_scored(
            [entry.id, entry.confidence, None, 0.0, 0.0, 0.0, entry.path, entry.first_line,
             entry.data, entry.category, entry.created], weight, now))
    until = min(math.inf if old["until"] is None else old["until"],
                math.inf if shortlist_until is None else shortlist_until)
    shown: list[Row] = []
    for rows in categories.values():
        rows.sort(key=_order)
        until = min(until, memo.ranking_until(rows, per_category, weight, now))
        shown.extend(rows[:per_category])
    shown.sort(key=_order)
    for above, below in pairwise(shown):
        until = min(until, memo.pair_until(above, below, weight, now))
    ids = [row[0] for row in shown]
    if not now < until or len(set(ids)) != len(ids):
        return None
    return shown, until


def _order(row: Row) -> tuple[float, str]:
    return -row[5], row[0]


def _scored(row: Row, weight: float, now: float) -> Row:
    """`row` with its recency and total at `now`, computed as `scoring.RECENCY_SQL` and the
    ranking's total are (the same operations in the same order: the same floats)."""
    created = row[10]
    recency = 0.0 if created is None else math.pow(
        0.5, max(0.0, (now - created) / 86400.0) / scoring.HALF_LIFE_DAYS)
    total = (1 - weight) * row[1] + weight * recency + row[4]
    return [*row[:3], recency, row[4], total, *row[6:]]


def meta_files(top: str) -> set[str] | None:
    """The `.meta.yml` files git lists (tracked and untracked, ignored ones excluded); None
    when git cannot answer."""
    from loa_mem.core import gitfast

    out = gitfast.output(["ls-files", "-z", "--cached", "--others", "--exclude-standard",
                          "--", f"*{META_SUFFIX}"], top)
    return None if out is None else {p for p in out.split("\0")
                                     if p.endswith(META_SUFFIX)}
