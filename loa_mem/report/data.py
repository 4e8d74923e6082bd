"""The report's data: a model of the store at one moment (`LOA_MEM_NOW`), in plain JSON values.

Everything the page shows comes from here, and `report --json` prints exactly this, so a test or
a script can check the page against the numbers it was drawn from. Sources: the derived index
(entries, their state, tier and chains), the working-set manifests and file sidecars, the agent
sidecars, the events log (what gc did), and one `git log -p` over the memory files (growth over
time, and which commits touched each entry). The person's own store is never read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from loa_mem import __version__
from loa_mem.core import clock, git
from loa_mem.core.errors import LoaMemError
from loa_mem.memory import rules as model
from loa_mem.memory.store import Store

STATES = ("active", "expired", "superseded", "archived")
TIERS = ("high", "normal", "review", "ineffective", "untested")
RELATIONSHIP_KINDS = ("agrees_with", "disagrees_with", "complements")
GC_RUNS = 10  # the most recent gc runs shown
GROWTH_POINTS = 400  # commits drawn one by one; more are drawn a day at a time

# An entry's id line in a diff of a grimoire file: `+- id: MEM-…` (also `+  id:` when id is not
# the first key, and quoted ids). `supersedes:` and `related_memories` items never match.
_ID_LINE = re.compile(r"^([+-])[ \t-]*id:[ \t]*['\"]?(MEM-\d{8}-[A-Za-z0-9]+)")


@dataclass(frozen=True)
class Report:
    meta: dict[str, Any]
    overview: dict[str, Any]
    chains: list[dict[str, Any]]
    effectiveness: dict[str, Any]
    working_set: dict[str, Any]
    agents: dict[str, Any]
    entries: list[dict[str, Any]]
    history: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta, "overview": self.overview, "chains": self.chains,
                "effectiveness": self.effectiveness, "working_set": self.working_set,
                "agents": self.agents, "entries": self.entries, "history": self.history}


def gather(store: Store) -> Report:
    from loa_mem.memory.commands.read import status

    now_iso = clock.now_iso()
    entries = [_entry(row.id, row.data, row.in_archive, row.path, row.first_line, now_iso)
               for row in sorted(store.index.all_rows(), key=lambda r: (r.id, r.path))]
    counted = status(store)
    growth, history = _git_pass(store)
    head = git.run(store.top, "rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    meta = {"store": store.top.name, "generated_at": now_iso, "head": head or None,
            "version": __version__}
    overview = {"counts": counted.counts, "totals": counted.totals,
                "entries": len(entries), "expiring_soon": counted.expiring,
                "warn_before_archive_days": counted.warn_days, "growth": growth,
                "pending": counted.pending}
    return Report(meta, overview, chains(entries), effectiveness(entries),
                  working_set(store), agents(store), entries, history)


# -- entries ------------------------------------------------------------------------------------
def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _entry(memory_id: str, data: dict[str, Any], in_archive: bool, path: str, line: int,
           now_iso: str) -> dict[str, Any]:
    from loa_mem.memory.commands.read import entry_state

    effect = _mapping(data.get("effectiveness"))
    source = _mapping(data.get("source"))
    tags = data.get("tags") if isinstance(data.get("tags"), list) else []
    summary = data.get("summary") or model.derive_summary(str(data.get("content") or ""))
    try:
        state = entry_state(data, in_archive, now_iso)
    except LoaMemError:  # a hand-written expires_at that is not a time: validate names it
        state = "active"
    return {"id": memory_id, "category": str(data.get("category")), "state": state,
            "confidence": data.get("confidence"), "tier": model.tier(effect or None),
            "score": effect.get("score"), "applications": int(effect.get("applications") or 0),
            "successes": int(effect.get("successes") or 0),
            "failures": int(effect.get("failures") or 0),
            "created": str(source.get("timestamp") or ""), "expires_at": _text(
                data.get("expires_at")), "summary": str(summary),
            "tags": [str(t) for t in tags or ()], "supersedes": _text(data.get("supersedes")),
            "superseded_by": _text(data.get("superseded_by")), "path": path, "line": line}


# -- supersede chains ---------------------------------------------------------------------------
def chains(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every supersede chain, newest head first: its entries oldest first and its edges old -> new,
    each dated by the replacement's creation. A fork (two replacements of one entry) stays one
    chain with two edges from the same entry."""
    by_id = {e["id"]: e for e in entries}
    edges: set[tuple[str, str]] = set()
    for entry in entries:
        if entry["supersedes"] in by_id:
            edges.add((entry["supersedes"], entry["id"]))
        if entry["superseded_by"] in by_id:
            edges.add((entry["id"], entry["superseded_by"]))
    found = []
    for members in _components(edges):
        nodes = _old_to_new(members, [e for e in edges if e[0] in members],
                            lambda i: (by_id[i]["created"], i))
        found.append({
            "ids": nodes, "head": nodes[-1],
            "nodes": [{k: by_id[i][k] for k in ("id", "category", "state", "created", "summary")}
                      for i in nodes],
            "edges": [{"from": a, "to": b, "date": by_id[b]["created"]}
                      for a, b in sorted(e for e in edges if e[0] in members)]})
    found.sort(key=lambda c: (by_id[c["head"]]["created"], c["head"]), reverse=True)
    return found


def _old_to_new(members: set[str], edges: list[tuple[str, str]],
                key: Callable[[str], tuple[str, str]]) -> list[str]:
    """The chain's entries so that every entry comes after the one it replaced (a topological
    order; creation time breaks ties, then the id). A cycle, which validate reports, is broken
    at its oldest entry."""
    incoming = {m: 0 for m in members}
    following: dict[str, list[str]] = {}
    for a, b in edges:
        incoming[b] += 1
        following.setdefault(a, []).append(b)
    order: list[str] = []
    ready = sorted((m for m in members if not incoming[m]), key=key)
    while len(order) < len(members):
        if not ready:  # a cycle
            ready = [min((m for m in members if m not in order), key=key)]
            incoming[ready[0]] = 0
        node = ready.pop(0)
        if node in order:
            continue
        order.append(node)
        for nxt in following.get(node, []):
            incoming[nxt] -= 1
            if incoming[nxt] <= 0 and nxt not in order:
                ready.append(nxt)
        ready.sort(key=key)
    return order


def _components(edges: Iterable[tuple[str, str]]) -> list[set[str]]:
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in edges:
        parent[root(a)] = root(b)
    groups: dict[str, set[str]] = {}
    for node in list(parent):
        groups.setdefault(root(node), set()).add(node)
    return list(groups.values())


# -- effectiveness ------------------------------------------------------------------------------
def effectiveness(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Tiers of the learnings in the store (archived ones left out), the scores of those applied
    at least once, and the entries of any category queued for review or for archival."""
    live = [e for e in entries if e["state"] != "archived"]
    learnings = [e for e in live if e["category"] == "learning"]
    tiers = dict.fromkeys(TIERS, 0)
    for entry in learnings:
        tiers[entry["tier"]] = tiers.get(entry["tier"], 0) + 1
    scored = sorted((e for e in learnings if e["applications"]),
                    key=lambda e: (e["score"] is None, -(e["score"] or 0), e["id"]))
    keys = ("id", "category", "tier", "score", "applications", "successes", "failures",
            "summary")
    return {"tiers": tiers, "learnings": [{k: e[k] for k in keys} for e in scored],
            "review": [{k: e[k] for k in keys} for e in live if e["tier"] == "review"],
            "archive": [{k: e[k] for k in keys} for e in live if e["tier"] == "ineffective"]}


# -- working set --------------------------------------------------------------------------------
def working_set(store: Store) -> dict[str, Any]:
    from loa_mem.workingset import manifests as ws

    settings = ws.settings(store)
    manifests = ws.Manifests(store, settings)
    pins = pinned_files(store)

    def described(item: Any, keys: tuple[str, ...]) -> dict[str, Any]:
        path = str(item.get("path"))
        hotness, _ = ws.hotness(manifests, path, path in pins)
        row = {"path": path, "hotness": hotness, "pinned": path in pins}
        row.update({k: _plain(item.get(k)) for k in keys})
        return row

    return {"turn": manifests.turn,
            "hot": [described(i, ("why", "touches", "since", "last_touch"))
                    for i in manifests.hot["keep"]],
            "cold": [described(i, ("why", "suggested_action", "last_touch"))
                     for i in manifests.cold["evict"]],
            "pins": sorted(pins), "gc": gc_runs(store)}


def _plain(value: Any) -> Any:
    from loa_mem.agents.sidecars import plain

    return plain(value)


def pinned_files(store: Store) -> set[str]:
    """Files whose `.meta.yml` sidecar says `pin: true` (tracked or not, unless ignored)."""
    from loa_mem.workingset import meta as sidecar_meta
    from loa_mem.workingset.manifests import SIDECAR_SUFFIX

    listing = git.run(store.top, "ls-files", "-z", "-co", "--exclude-standard", "--",
                      f"*{SIDECAR_SUFFIX}", check=False)
    pins = set()
    for rel in filter(None, listing.split("\0")):
        source = rel[:-len(SIDECAR_SUFFIX)]
        try:
            if sidecar_meta.is_pinned(store.top, source):
                pins.add(source)
        except LoaMemError:  # a broken sidecar: validate reports it
            continue
    return pins


def gc_runs(store: Store) -> list[dict[str, Any]]:
    """The last gc runs the events log holds, newest first, with what each did."""
    from loa_mem.core import yamlio

    runs = []
    for event in [e for e in store.read_events() if e.get("op") == "gc"][
            -GC_RUNS:][::-1]:
        try:
            report = _mapping(_mapping(yamlio.load(str(event.get("report_yaml") or ""),
                                                   "gc report")).get("gc_report"))
        except LoaMemError:
            report = {}
        actions = [a for a in report.get("actions") or [] if isinstance(a, dict)]
        runs.append({"time": event.get("time"), "actor": event.get("actor"),
                     "trigger": report.get("triggered_by") or str(
                         event.get("reason") or "").removeprefix("trigger: "),
                     "tokens_freed": report.get("tokens_freed"),
                     "files_affected": report.get("files_affected"),
                     "actions": [{k: _plain(a.get(k)) for k in
                                  ("path", "id", "action", "summary", "to", "reason")}
                                 for a in actions]})
    return runs


# -- agents -------------------------------------------------------------------------------------
def agents(store: Store) -> dict[str, Any]:
    """Each agent's sidecar memories, relationships and trust record; relationships as edges."""
    from loa_mem.agents import sidecars

    found: list[dict[str, Any]] = []
    for name in sidecars.agent_names(store):
        try:
            data = _mapping(sidecars.plain(sidecars.read_sidecar(store, name)))
        except LoaMemError as error:
            found.append({"name": name, "error": error.one_line()})
            continue
        found.append(_agent(name, data))
    edges = [{"from": a["name"], "to": other, "kind": kind} for a in found
             for kind in RELATIONSHIP_KINDS for other in a.get("relationships", {}).get(kind, [])]
    return {"agents": found, "edges": edges}


def _agent(name: str, data: dict[str, Any]) -> dict[str, Any]:
    memories = [m for m in data.get("memories") or [] if isinstance(m, dict)]
    relations = _mapping(data.get("relationships"))
    trust = _mapping(data.get("trust"))
    history = [h for h in trust.get("trust_score_history") or [] if isinstance(h, dict)]
    return {
        "name": name, "sessions": data.get("sessions_participated"),
        "last_updated": data.get("last_updated"),
        "memories": [{k: m.get(k) for k in ("id", "type", "content", "confidence",
                                            "unreinforced_sessions")} for m in memories],
        "relationships": {k: [str(o) for o in relations.get(k) or []
                              if isinstance(relations.get(k), list)]
                          for k in RELATIONSHIP_KINDS},
        "trust": {"score": trust.get("trust_score"), "probation": trust.get("probation"),
                  "rounds": trust.get("rounds_participated"),
                  "history": [{k: h.get(k) for k in ("timestamp", "score", "reason", "round_id")}
                              for h in history]} if trust else None}


# -- git: growth over time and each entry's commits ---------------------------------------------
def _git_pass(store: Store) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One `git log -p` over the memory files, oldest first. Growth: the number of distinct ids in
    the files after each commit. History: the commits that name an
    entry in a `Loa-Id` trailer (every loa-mem commit does) or add or remove its id line (hand
    edits, imports, merges of branches)."""
    if not git.has_commits(store.top):
        return [], {"commits": [], "by_id": {}}
    paths = list(dict.fromkeys([store.config.storage_dir, store.config.archive_dir]))
    fmt = "--format=%x1e%H%x1f%aI%x1f%s%x1f%(trailers:key=Loa-Id,valueonly,separator=%x1d)"
    output = git.run(store.top, "log", "--reverse", "--no-renames", "--no-color",
                     "--no-ext-diff", "-p", "--unified=0", fmt, "--", *paths, check=False)
    walk = _Walk()
    for line in output.split("\n"):  # not splitlines(): it splits on \x1e, \x1d and \x1f too
        if line.startswith("\x1e"):
            walk.start(line[1:].split("\x1f"))
        elif line[:1] in "+-":
            found = _ID_LINE.match(line)
            if found:
                walk.id_line(found.group(2), 1 if found.group(1) == "+" else -1)
    walk.finish()
    return walk.growth(), walk.history()


class _Walk:
    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.present = 0
        self.points: list[tuple[str, int]] = []  # (commit time, entries after it), oldest first
        self.commits: list[tuple[str, str, str]] = []
        self.touched: dict[str, list[int]] = {}
        self.current: tuple[str, str, str] | None = None
        self.ids: set[str] = set()

    def start(self, fields: list[str]) -> None:
        self.finish()
        sha, date, subject = [*fields, "", "", ""][:3]
        trailers = fields[3] if len(fields) > 3 else ""
        self.current = (sha, date, subject)
        self.ids = {t.strip() for t in trailers.split("\x1d") if t.strip()}

    def id_line(self, memory_id: str, step: int) -> None:
        before = self.live.get(memory_id, 0)
        after = self.live[memory_id] = before + step
        self.present += (after > 0) - (before > 0)
        self.ids.add(memory_id)

    def finish(self) -> None:
        if self.current is None:
            return
        self.points.append((self.current[1], self.present))
        if self.ids:
            self.commits.append(self.current)
            for memory_id in self.ids:
                self.touched.setdefault(memory_id, []).append(len(self.commits) - 1)
        self.current = None
        self.ids = set()

    def growth(self) -> list[dict[str, Any]]:
        """A point per commit (its time, the entries after it); past GROWTH_POINTS commits, the
        last commit of each day stands for the day."""
        if len(self.points) <= GROWTH_POINTS:
            return [{"date": d, "entries": n, "commits": 1} for d, n in self.points]
        days: dict[str, dict[str, Any]] = {}
        for date, n in self.points:
            day = days.setdefault(date[:10], {"date": date, "entries": n, "commits": 0})
            day.update(date=date, entries=n, commits=day["commits"] + 1)
        return list(days.values())

    def history(self) -> dict[str, Any]:
        """Commits newest first; each entry's list of commit indices, newest first."""
        last = len(self.commits) - 1
        return {"commits": [{"sha": s, "date": d, "subject": t}
                            for s, d, t in reversed(self.commits)],
                "by_id": {i: [last - n for n in reversed(ns)]
                          for i, ns in sorted(self.touched.items())}}
