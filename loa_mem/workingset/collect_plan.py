"""What gc will do, decided before anything is written (the mark step and its rules).

`plan()` reads the manifests, sidecars and index and returns the steps; `gc.py` carries them
out (or, with --dry-run, only reports them). Each step names its action and the rule behind it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import Refused
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta
from loa_mem.workingset import rules as ws_rules

EVICTED, SUMMARIZED, ARCHIVED, COMPRESSED = "evicted", "summarized", "archived", "compressed"
DEFERRED, OVERRIDDEN = "deferred", "overridden"
FORGOTTEN = "forgotten"  # an archived entry past memory_schema.lifecycle.archive_retention_days
RETENTION = "retention"
LEAVING = (EVICTED, SUMMARIZED, ARCHIVED)
ACTION_OF = {"delete_from_working_set": EVICTED, "summarize_then_evict": SUMMARIZED,
             "archive": ARCHIVED, "compress": COMPRESSED}


@dataclass(frozen=True)
class Step:
    path: str
    action: str
    reason: str
    tokens: int
    from_cold: bool


@dataclass
class Plan:
    store: Any
    settings: ws.Settings
    manifests: ws.Manifests
    now: str
    trigger: str
    budget: int | None
    working: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    entries: list[tuple[str, list[Any]]] = field(default_factory=list)
    note: str = ""
    acts: bool = True


def _untouched(m: ws.Manifests, item: Any, s: ws.Settings, now: str) -> str | None:
    last_turn = item.get("last_turn")
    if s.untouched_turns and isinstance(last_turn, int):
        idle = m.turn - last_turn
        if idle >= s.untouched_turns:
            return f"untouched for {idle} turns (limit {s.untouched_turns})"
    last = item.get("last_touch") or item.get("since")
    if s.untouched_minutes and last:
        try:
            minutes = (clock.parse(now) - clock.parse(str(last))).total_seconds() / 60
        except ValueError:
            return None
        if minutes >= s.untouched_minutes:
            return (f"untouched since {last} ({int(minutes)} minutes, limit "
                    f"{s.untouched_minutes})")
    return None


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))


def _candidates(p: Plan) -> list[tuple[str, str, str, bool]]:
    """(path, suggested action, reason, from the cold list) of every file to look at."""
    m, s = p.manifests, p.settings
    found = []
    for path in m.cold_paths():
        item = m.cold_item(path)
        action = item.get("suggested_action")
        action = action if action in ws_rules.ACTIONS else "delete_from_working_set"
        found.append((path, action, f"cold hint: {item.get('why') or 'no reason given'}", True))
    for path in m.hot_paths():
        if m.cold_item(path) is not None:
            continue
        reason = _untouched(m, m.hot_item(path), s, p.now)
        if reason is None:
            continue
        full = Path(p.store.top) / path
        long = full.is_file() and _line_count(full) > s.summarize_over_lines
        found.append((path, "summarize_then_evict" if long else "delete_from_working_set",
                      reason + (f"; over {s.summarize_over_lines} lines, so summarized first"
                                if long else ""), False))
    return found


def _judge(p: Plan, path: str, action: str, reason: str, from_cold: bool,
           not_committed: set[str]) -> Step:
    top = Path(p.store.top)
    if not (top / path).is_file():
        return Step(path, EVICTED, "no longer in the working tree; dropped from the working set",
                    0, from_cold)
    keep = ws.must_keep(p.store, p.settings, path)
    if keep is None and meta.is_pinned(top, path):
        keep = f"pinned (pin: true in {meta.sidecar_path(path)})"
    if keep is not None:
        return Step(path, OVERRIDDEN, keep, 0, from_cold)
    size = ws.file_tokens(top, path)
    if action == "compress":
        blocker = compress_blocker(top, path, not_committed)
        if blocker is None:
            from loa_mem.workingset import extractive

            text = (top / path).read_text(encoding="utf-8")
            if len(extractive.compress(text)) >= len(text):
                return Step(path, OVERRIDDEN, "already short: compressing would not shrink it",
                            0, from_cold)
        if blocker is not None:
            return Step(path, DEFERRED, blocker, 0, from_cold)
    return Step(path, ACTION_OF[action], reason, size, from_cold)


def _pressure(p: Plan) -> None:
    """Evict the least hot files until the working set is under 80% of the budget."""
    assert p.budget is not None
    m, top = p.manifests, Path(p.store.top)
    target = math.floor(ws_rules.BUDGET_THRESHOLD * p.budget)
    stepped = {s.path for s in p.steps}
    leaving = {s.path for s in p.steps if s.action in LEAVING}
    left = sum(ws.file_tokens(top, x) for x in m.working_set() if x not in leaving)
    if left <= target:
        return
    ranked = []
    for path in m.hot_paths():
        if path in stepped or not (top / path).is_file() or ws.must_keep(
                p.store, p.settings, path):
            continue
        sidecar = meta.load(top, path)
        pinned = sidecar is not None and sidecar.pinned
        if pinned:
            continue
        last_turn = m.hot_item(path).get("last_turn")
        ranked.append((ws.hotness(m, path, False)[0],
                       last_turn if isinstance(last_turn, int) else -1, path))
    for _, _, path in sorted(ranked):
        if left <= target:
            break
        size = ws.file_tokens(top, path)
        long = _line_count(top / path) > p.settings.summarize_over_lines
        p.steps.append(Step(path, SUMMARIZED if long else EVICTED,
                            f"budget pressure: the working set was {left} tokens, over 80% of "
                            f"{p.budget} ({target})" + (
                                f"; over {p.settings.summarize_over_lines} lines, so summarized "
                                "first" if long else ""), size, False))
        left -= size


def _entries(p: Plan) -> None:
    from loa_mem.memory.commands.lifecycle import expired_rows

    store = p.store
    if not store.config.enabled:
        return
    past = _past_retention(store, p.now)
    if past:
        p.entries.append((RETENTION, past))
    if not store.config.lifecycle.get("auto_archive", True):
        return
    chosen: set[str] = set()
    groups = (
        ("expired", expired_rows(store)),
        ("superseded", store.index.where("in_archive=0 AND superseded_by IS NOT NULL "
                                         "ORDER BY id")),
        ("ineffective", store.index.where("in_archive=0 AND tier='ineffective' ORDER BY id")),
    )
    for reason, rows in groups:
        fresh = [r for r in rows if r.id not in chosen]
        chosen |= {r.id for r in fresh}
        if fresh:
            p.entries.append((reason, fresh))


def _past_retention(store: Any, now: str) -> list[Any]:
    """Archived entries archived more than `archive_retention_days` ago (none when unset)."""
    days = store.config.lifecycle.get("archive_retention_days")
    if not days:
        return []
    cutoff = clock.iso(clock.parse(now) - clock.days(int(days)))
    return list(store.index.where(
        "in_archive=1 AND json_extract(data, '$.archived_at') IS NOT NULL AND "
        "json_extract(data, '$.archived_at')<=? ORDER BY id", (cutoff,)))


def plan(store: Any, trigger: str, budget: int | None) -> Plan:
    from loa_mem.core.git import uncommitted

    s = ws.settings(store)
    if budget is None and trigger == "budget_pressure":
        budget = s.context_budget
        if budget is None:
            raise Refused("budget pressure needs a budget",
                          "pass --budget TOKENS or set working_set.context_budget")
    m = ws.Manifests(store, s)
    now = clock.now_iso()
    before = m.working_set()
    size = m.tokens(before)
    threshold = math.floor(ws_rules.BUDGET_THRESHOLD * budget) if budget is not None else None
    working = {"files_before": len(before), "tokens_before": size, "budget": budget,
               "threshold": threshold}
    p = Plan(store, s, m, now, trigger, budget, working)
    if threshold is not None and size <= threshold:
        p.acts = False
        p.note = (f"the working set is {size} tokens, within 80% of the budget "
                  f"({threshold} of {budget}); nothing done")
        return p
    found = _candidates(p)
    compressing = [c[0] for c in found if c[1] == "compress"]
    not_committed = uncommitted(Path(store.top), compressing) if compressing else set()
    p.steps = [_judge(p, *c, not_committed) for c in found]
    if budget is not None:
        _pressure(p)
    _entries(p)
    if not p.steps and not p.entries:
        p.note = "nothing to do: no cold files, no expired, superseded or ineffective entries"
    return p


def compress_blocker(top: Path, rel: str, not_committed: set[str]) -> str | None:
    if rel in not_committed:
        return ("not committed: compressing would lose what git has not recorded; commit it "
                "first, or use archive")
    try:
        (top / rel).read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text: compress works on text; use archive"
    return None
