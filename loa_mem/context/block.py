"""The session-start context: one block for an agent's context window, within a token budget.

`build()` is the only place that decides what the block says. Its two callers differ only in
how they make sure their inputs are fresh: the fast path (`context_fast.py`, stdlib only, for the
hook) reads the index and the side cache as they are; the slow path opens the `Store` (which
refreshes the index) and rebuilds the side cache (`context_sources.py`) first.

What goes in, in this order, which is also the order of priority when the budget is short:
pinned files, expiring-soon warnings, the user's applied preferences, the requested agents'
sidecar memories, the top memories of each category (recall's score, with `--query` its
relevance), and the hot working set. Items that do not fit are left out, lowest priority first
(memories by score), and a last line says what was cut. Tokens are `tokens.estimate`. The
lines each source offers are `context.candidates`'; this module fits them to the budget, orders
the sections and renders the block.

This module is imported by the hook: standard library, `clock`, `memo`, `scoring` and `tokens`
only, and `json` and `rowcodec` only when it reads the index (a memo has no JSON to decode).
"""

from __future__ import annotations

import math
import os

from loa_mem.context import candidates as source
from loa_mem.context import memo as ahead
from loa_mem.context.candidates import MAX_LINE, Candidate, Section, one_line
from loa_mem.context.memo import settings
from loa_mem.core import clock, tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection
    from typing import Any

MIN_BUDGET = 100


def budget_problem(budget: int | None, name: str = "--budget") -> str | None:
    """What is wrong with a requested token budget (the command line's and the MCP tool's
    check), or None."""
    if budget is None or budget >= MIN_BUDGET:
        return None
    return f"{name} must be at least {MIN_BUDGET} tokens (got {budget})"


def agents_problem(agents: tuple[str, ...] | list[str]) -> str | None:
    """What is wrong with the agents asked for, or None. A name becomes a sidecar's file name
    (`agents.sidecars.check_agent_name`: 1-64 letters, digits, '-' or '_', starting with a
    letter or digit), checked here without `re` for the session-start hook; the name is not
    repeated, as it may be anything pasted there."""
    for agent in agents:
        if not (isinstance(agent, str) and 0 < len(agent) <= 64 and agent.isascii()
                and agent[0].isalnum() and agent.replace("-", "a").replace("_", "a").isalnum()):
            return ("an agent name is 1-64 letters, digits, '-' or '_', starting with a letter "
                    "or digit")
    return None


class Options:
    """What the caller asked for: budget, query, agents, user, and the output format."""

    __slots__ = ("agents", "budget", "format", "query", "user")

    def __init__(self, budget: int | None = None, query: str = "", agents: tuple[str, ...] = (),
                 output: str = "markdown", user: str | None = None) -> None:
        self.budget = budget
        self.query = query
        self.agents = agents
        self.format = output
        self.user = user


class Block:
    """The finished block: its text and, for machines, its sections and what was cut."""

    __slots__ = ("budget", "cut", "root", "sections", "text", "tokens", "warnings")

    def __init__(self, root: str, budget: int, sections: list[Section], text: str,
                 cut: dict[str, int], warnings: list[str] | None = None) -> None:
        self.root = root
        self.budget = budget
        self.sections = sections
        self.text = text
        self.cut = cut
        self.tokens = tokens.estimate(text)
        self.warnings = warnings or []

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "budget_tokens": self.budget, "tokens": self.tokens,
                "sections": [{"name": s.name, "title": s.title, "items": s.items,
                              "omitted": s.omitted} for s in self.sections],
                "cut": self.cut, "text": self.text, "warnings": self.warnings}


# -- fitting to the budget --------------------------------------------------------------------


def _fill(budget: int, candidates: list[Candidate]) -> dict[str, int]:
    """Keep candidates in priority order while they fit (a section's headings are paid for with
    its first line); returns how many of each kind were left out."""
    left = budget
    opened: set[str] = set()
    cut: dict[str, int] = {}
    for section, line, item in candidates:
        cost = tokens.estimate(line + "\n") + sum(
            tokens.estimate(f"\n{h}\n") for h in section.headings if h not in opened)
        if cost <= left:
            left -= cost
            opened.update(section.headings)
            section.add(line, item)
        else:
            section.omitted += 1
            kind = section.name.split(":")[0]
            cut[kind] = cut.get(kind, 0) + 1
    return cut


# -- the block ---------------------------------------------------------------------------------
def build(db: Connection | None, config: dict[str, Any], side: dict[str, Any],
          options: Options, *, root: str, preference_lines: list[str] | None = None,
          warnings: list[str] | None = None, memo: dict[str, Any] | None = None,
          now_iso: str | None = None) -> Block:
    """The block for `options`, from a fresh index `db`, the validated `config`, the side cache
    `side` (pinned files, hot working set, agent sidecars; see `context_sources`) and the
    user's preference lines. `warnings` (files that could not be read) come first, always.
    With `memo` (see `context.memo`; its caller has checked it holds now), `db` is not read
    and may be None. `now_iso`: the time the caller checked its caches at (default: now)."""
    now_iso = now_iso or clock.now_iso()
    conf = settings(config)
    budget = max(MIN_BUDGET, int(options.budget or conf["budget_tokens"]))
    memory = config["memory_schema"]
    on = memory.get("enabled", True)
    categories, ranked = source.memories(db, memory, options.query, now_iso,
                                         int(conf["per_category"]),
                                         ahead.shortlist_ids(side, config, now_iso),
                                         memo["rows"] if memo else None) if on else ([], [])
    candidates = [*source.pinned(side), *(source.expiring(db, memory, now_iso, memo) if on else []),
                  *source.preferences(preference_lines or [], options.user),
                  *source.agents(side, options.agents), *ranked, *source.working_set(side)]
    head = _header(db, now_iso, options, side, memo) if on else _header_off(options, side)
    if warnings:
        head += "\n## Could not be read\n" + "".join(
            f"- {one_line(w, 4 * MAX_LINE)}\n" for w in warnings)
    room = budget - tokens.estimate(head)
    cut = _fill(room, candidates)
    if cut:
        for section in {id(c[0]): c[0] for c in candidates}.values():
            section.lines, section.items, section.omitted = [], [], 0
        reserve = tokens.estimate(_cut_note(budget, {k: v * 10 for k, v in cut.items()}))
        cut = _fill(room - reserve, candidates)
    sections = list({id(c[0]): c[0] for c in candidates}.values())
    ordered = [s for s in sections if not s.name.startswith("memories:")]
    at = next((i for i, s in enumerate(ordered) if s.name in ("working_set",)), len(ordered))
    ordered[at:at] = [s for s in categories if s.lines]
    text = _render(head, [s for s in ordered if s.lines], _cut_note(budget, cut) if cut else "")
    return Block(root, budget, [s for s in ordered if s.lines or s.omitted], text, cut,
                 warnings)


def make_memo(db: Connection, config: dict[str, Any], side: dict[str, Any],
              now_iso: str, active: int | None = None) -> dict[str, Any] | None:
    """What `build` reads from the index `db` for a block without --query, made at `now_iso`
    for as long as it holds (see `memo`); None without a shortlist that holds now. `active`:
    the number of active memories at `now_iso`, when the caller knows it (counting them is
    the costliest part at 100,000 entries)."""
    memory = config["memory_schema"]
    ids = ahead.shortlist_ids(side, config, now_iso)
    if ids is None:
        return None
    per_category = int(settings(config)["per_category"])
    until = ahead.ranking_span(db, memory, now_iso, ids, per_category,
                               side["shortlist"]["until"] or math.inf)
    rows = ahead.top_rows(db, memory, "", now_iso, per_category, len(memory["categories"]),
                          ids) if ids else []
    return {"key": ahead.key(config), "from": clock.parse(now_iso).timestamp(),
            "until": None if until == math.inf else until,
            "bounds": ahead.expiry_bounds(db, memory, now_iso),
            "active": ahead.active_count(db, now_iso) if active is None else active,
            "rows": [[*row[:8], source.entry_data(row[8]), row[9], _created(db, row[6], row[7])]
                     for row in rows],
            "expiring": [[line, item] for _, line, item in source.expiring(db, memory, now_iso)]}


def _created(db: Connection, path: str, first_line: int) -> float | None:
    """The created_ts of the row at `first_line` of `path`: a memo row keeps it, so that the
    memo can be extended with appended entries (`integrations.context_pulled`) at a later time."""
    found = db.execute("SELECT created_ts FROM entries WHERE first_line=? AND "
                       "file=(SELECT file FROM paths WHERE path=?)", (first_line, path)).fetchone()
    return None if found is None or found[0] is None else float(found[0])


def _header(db: Connection | None, now_iso: str, options: Options, side: dict[str, Any],
            memo: dict[str, Any] | None = None) -> str:
    active = memo["active"] if memo is not None else ahead.active_count(db, now_iso) if db else 0
    about = f" about {options.query!r}" if options.query else ""
    noun = "memory" if active == 1 else "memories"
    lines = ["# Project memory (loa-mem)",
             f"{now_iso} · {active} active {noun} · showing the most relevant{about}; "
             "`loa-mem recall QUERY` finds more."]
    others = [a for a in side.get("agent_names") or [] if a not in options.agents]
    if others and not options.agents:
        lines.append(f"Agents with sidecar memories: {', '.join(others)} "
                     "(`loa-mem context --agent NAME` adds theirs).")
    return "\n".join(lines) + "\n"


def _header_off(options: Options, side: dict[str, Any]) -> str:
    lines = ["# Project memory (loa-mem)",
             "Loa memory is switched off (memory_schema.enabled: false in .loa.config.yaml): "
             "no memories are shown."]
    if side.get("agent_names") and not options.agents:
        lines.append(f"Agents with sidecar memories: {', '.join(side['agent_names'])} "
                     "(`loa-mem context --agent NAME` adds theirs).")
    return "\n".join(lines) + "\n"


_KIND = {"memories": ("memory", "memories"), "working_set": ("hot file", "hot files"),
         "pinned": ("pinned file", "pinned files"),
         "expiring": ("expiry warning", "expiry warnings"),
         "preferences": ("preference", "preferences"),
         "agents": ("agent memory line", "agent memory lines")}


def _cut_note(budget: int, cut: dict[str, int]) -> str:
    said = [f"{n} {_KIND.get(k, (k, k))[n != 1]}" for k, n in cut.items()]
    parts = ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]
    return (f"_Cut to fit {budget} tokens: left out {parts}. "
            "A larger `--budget` shows them._\n")


def _render(head: str, sections: list[Section], note: str) -> str:
    out = [head]
    opened: set[str] = set()
    for section in sections:
        for heading in section.headings:
            if heading not in opened:
                out.append(f"\n{heading}\n")
                opened.add(heading)
        out.extend(line + "\n" for line in section.lines)
    if note:
        out.append("\n" + note)
    return "".join(out)


def agents_dir(config: dict[str, Any]) -> str:
    """Where agent sidecars live (the agents feature's setting, else the spec's default)."""
    agents = config.get("agents") or {}
    return str(agents.get("dir") or agents.get("sidecar_dir") or "grimoires/loa/agents")


def sidecar_path(config: dict[str, Any], agent: str) -> str:
    return f"{agents_dir(config)}/{agent}.yaml"


def agent_names(top: str, config: dict[str, Any]) -> list[str]:
    try:
        names = os.listdir(os.path.join(top, agents_dir(config)))
    except OSError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".yaml") and not n.startswith("."))
