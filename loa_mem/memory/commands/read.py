"""Commands that only read: recall (unless --track), show, history, status, schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loa_mem.core import clock, git, githistory, notices
from loa_mem.memory import rules as model
from loa_mem.memory.recall import Filters, Recalled, rank
from loa_mem.memory.store import Store


def recall(store: Store, filters: Filters, track: bool, actor: str,
           commit: bool = True, at_terminal: bool = False) -> Recalled:
    """`at_terminal`: a person reads the results, and is told when recall stays lexical only
    because the semantic extra's model was never fetched."""
    store.config.require_memory("recall")
    hits = rank(store.index.db, filters, float(store.config.retrieval["recency_weight"]),
                store.config.retrieval)
    if at_terminal and filters.query:
        from loa_mem.memory.semantic.fusion import unfetched_model

        note = unfetched_model(store.config.retrieval, filters.mode)
        if note:
            notices.add(note)
    if not (track and hits):
        return Recalled(filters.query, hits)
    from loa_mem.memory.commands.lifecycle import track as count_applications

    sha = count_applications(store, [h.id for h in hits], actor, commit)
    return Recalled(filters.query, hits, tracked=True, commit=sha)


# more results than any store holds; past 2^63 SQLite cannot even take the number
MAX_LIMIT = 1_000_000


def limit_problem(limit: int | None, name: str = "--limit") -> str | None:
    """What is wrong with a requested number of results (the command line's and the MCP
    tool's check), or None."""
    if limit is None or 1 <= limit <= MAX_LIMIT:
        return None
    if limit < 1:
        return f"{name} must be at least 1 (got {limit})"
    return f"{name} must be at most {MAX_LIMIT:,} (got {limit})"


def default_filters(store: Store, **given: Any) -> Filters:
    retrieval = store.config.retrieval
    values: dict[str, Any] = {"min_confidence": float(retrieval["min_confidence"]),
                              "limit": int(retrieval["max_per_query"])}
    values.update({k: v for k, v in given.items() if v is not None})
    return Filters(**values)


@dataclass(frozen=True)
class Shown:
    entry: dict[str, Any]
    path: str
    line: int
    state: str
    tier: str
    chain: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "path": self.path, "line": self.line, "state": self.state,
                "tier": self.tier, "chain": self.chain}


entry_state = model.state


def chain_of(store: Store, memory_id: str) -> list[str]:
    """The whole supersede chain through `memory_id`, oldest first."""
    index = store.index
    chain = [memory_id]
    current = memory_id
    while True:
        rows = index.by_id(current)
        previous = rows[0].data.get("supersedes") if rows else None
        if not previous or previous in chain:
            break
        chain.insert(0, str(previous))
        current = str(previous)
    current = memory_id
    while True:
        rows = index.by_id(current)
        following = rows[0].data.get("superseded_by") if rows else None
        if not following or following in chain:
            break
        chain.append(str(following))
        current = str(following)
    return chain


def show(store: Store, memory_id: str) -> Shown:
    store.config.require_memory("show")
    row = store.entry(memory_id)
    state = entry_state(row.data, row.in_archive, clock.now_iso())
    return Shown(row.data, row.path, row.first_line, state,
                 model.tier(row.data.get("effectiveness")), chain_of(store, memory_id))


@dataclass(frozen=True)
class History:
    id: str
    commits: list[githistory.CommitInfo]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "commits": [
            {"sha": c.sha, "date": c.date, "subject": c.subject} for c in self.commits]}


def history(store: Store, memory_id: str) -> History:
    store.config.require_memory("history")
    model.check_id(memory_id)
    rows = store.index.by_id(memory_id)
    span = (rows[0].path, rows[0].first_line, rows[0].last_line) if len(rows) == 1 else None
    if span is not None and not git.matches_head(store.top, span[0]):
        span = None  # line numbers of an uncommitted version would trace other entries
    commits = githistory.history(store.top, memory_id, [store.config.storage_dir,
                                                 store.config.archive_dir], span)
    shallow = bool(githistory.shallow_cuts(store.top))
    if not commits:
        from loa_mem.core.errors import NotFound

        raise NotFound(f"no commit touches {memory_id}" + (
            " in the history this clone holds" if shallow else ""),
            githistory.SHALLOW_HINT if shallow else "check the id")
    if shallow:
        from loa_mem.core import notices

        notices.add("this clone is shallow (cloned with --depth), so older commits may be "
                    "missing; `git fetch --unshallow` fetches them")
    return History(memory_id, commits)


@dataclass(frozen=True)
class Status:
    root: str
    counts: dict[str, dict[str, int]]
    expiring: list[dict[str, Any]]
    review: list[str]
    pending: list[str]
    warn_days: int
    forgotten: int = 0
    totals: dict[str, int] = field(default_factory=dict)
    enabled: bool = True
    auto_capture: dict[str, bool] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "counts": self.counts, "totals": self.totals,
                "expiring_soon": self.expiring, "review": self.review,
                "pending": self.pending, "forgotten": self.forgotten,
                "warn_before_archive_days": self.warn_days, "enabled": self.enabled,
                "auto_capture": self.auto_capture}


def expiring_soon(store: Store, within_days: int) -> list[dict[str, Any]]:
    now = clock.now()
    limit = clock.iso(now + clock.days(within_days))
    rows = store.index.where(
        "retired=0 AND superseded_by IS NULL AND expires_at IS NOT NULL AND expires_at>? "
        "AND expires_at<=? ORDER BY expires_at, id", (clock.iso(now), limit))
    return [{"id": r.id, "expires_at": r.data.get("expires_at"),
             "summary": r.data.get("summary")} for r in rows]


def status(store: Store) -> Status:
    now_iso = clock.now_iso()
    counts: dict[str, dict[str, int]] = {
        c: {"active": 0, "expired": 0, "superseded": 0, "archived": 0} for c in model.CATEGORIES}
    for category, in_archive, archived, superseded, expires in store.index.states():
        bucket = counts.setdefault(str(category), {"active": 0, "expired": 0, "superseded": 0,
                                                   "archived": 0})
        if in_archive or archived:
            bucket["archived"] += 1
        elif superseded:
            bucket["superseded"] += 1
        elif expires and expires <= now_iso:
            bucket["expired"] += 1
        else:
            bucket["active"] += 1
    totals = {k: sum(c[k] for c in counts.values())
              for k in ("active", "expired", "superseded", "archived")}
    warn = int(store.config.lifecycle["warn_before_archive_days"])
    review = [r.id for r in store.index.where("retired=0 AND tier IN ('review','ineffective') "
                                              "ORDER BY id")]
    pending = git.pending(store.top, [store.config.storage_dir, store.config.archive_dir])
    from loa_mem.memory.config import CAPTURE_SOURCES

    capture = {source: store.config.captures(source) for source in CAPTURE_SOURCES}
    return Status(str(store.top), counts, expiring_soon(store, warn), review, pending, warn,
                  len(store.index.forgotten_ids()), totals, store.config.enabled, capture)
