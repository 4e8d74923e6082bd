"""The report as one HTML page: sections, tables, inline SVG charts, and a few lines of script
(search, sort, each entry's history). Nothing is loaded from anywhere: styles and script are
inline and the Content-Security-Policy forbids every other request.

Each section is a `<section id=…>`; the numbers a reader (or a test) checks carry data attributes:
`data-count="CATEGORY.STATE"` in the counts table, `data-from`/`data-to` on chain and relationship
edges, `data-id`/`data-score` on effectiveness rows, `data-id` on every entry row. The page's
style sheet and script are `report.assets`'; the charts are `report.svg`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from html import escape
from typing import Any

from loa_mem.report import svg
from loa_mem.report.assets import SCRIPT, STYLE
from loa_mem.report.data import STATES, TIERS, Report

CHAIN_ROWS = 60  # chains drawn; all of them are in the JSON

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'")


def render(report: Report) -> str:
    meta = report.meta
    body = [
        _header(report),
        _overview(report.overview),
        _chains(report.chains),
        _effectiveness(report.effectiveness),
        _working_set(report.working_set),
        _agents(report.agents),
        _entries(report.entries),
        _history(report.history),
    ]
    history = json.dumps(report.history, ensure_ascii=False, separators=(",", ":"))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="loa-mem {escape(str(meta["version"]))}">'
            f"<title>Memory report: {escape(str(meta['store']))}</title>"
            f"<style>{STYLE}</style></head><body>{''.join(body)}"
            f'<script type="application/json" id="report-history">'
            f'{history.replace("<", chr(92) + "u003c")}</script>'
            f"<script>{SCRIPT}</script></body></html>\n")


# -- small builders -----------------------------------------------------------------------------
def _cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return escape(", ".join(str(v) for v in value)) or "-"
    return escape(str(value))


def _table(table_id: str, columns: Sequence[str], rows: Iterable[tuple[dict[str, Any], list[str]]],
           empty: str) -> str:
    """`rows`: (attributes of the <tr>, cells already escaped)."""
    body = []
    for attributes, cells in rows:
        attrs = "".join(f' {k}="{escape(str(v))}"' for k, v in attributes.items())
        body.append(f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    if not body:
        return f'<p class="empty" id="{table_id}">{escape(empty)}</p>'
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    return (f'<table id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _link(memory_id: str) -> str:
    return f'<a href="#h-{escape(memory_id)}">{escape(memory_id)}</a>'


def _section(section_id: str, title: str, *parts: str) -> str:
    return f'<section id="{section_id}"><h2>{escape(title)}</h2>{"".join(parts)}</section>'


def _header(report: Report) -> str:
    meta, totals = report.meta, report.overview["totals"]
    links = " · ".join(f'<a href="#{i}">{t}</a>' for i, t in (
        ("overview", "Overview"), ("chains", "Supersede chains"),
        ("effectiveness", "Effectiveness"), ("working-set", "Working set"), ("agents", "Agents"),
        ("entries", "Entries")))
    head = (meta["head"] or "")[:10] or "no commit yet"
    return (f"<header><h1>Memory of {escape(str(meta['store']))}</h1>"
            f'<p class="meta">generated <time id="generated-at">{escape(meta["generated_at"])}'
            f"</time> from commit <code>{escape(head)}</code> by loa-mem "
            f"{escape(str(meta['version']))} · {report.overview['entries']} entries: "
            + ", ".join(f"{totals.get(s, 0)} {s}" for s in STATES)
            + f"</p><nav>{links}</nav></header>")


# -- sections -----------------------------------------------------------------------------------
def _overview(overview: dict[str, Any]) -> str:
    counts: dict[str, dict[str, int]] = overview["counts"]
    rows = []
    for category, by_state in counts.items():
        cells = [escape(category)] + [
            f'<span data-count="{escape(category)}.{s}">{by_state.get(s, 0)}</span>'
            for s in STATES] + [str(sum(by_state.values()))]
        rows.append(({"data-category": category}, cells))
    total_cells = ["total"] + [f'<span data-count="total.{s}">{overview["totals"].get(s, 0)}'
                               "</span>" for s in STATES] + [str(overview["entries"])]
    rows.append(({"class": "total"}, total_cells))
    table = _table("counts", ["category", *STATES, "all"], rows, "no entries")
    chart = svg.stacked_bars("states", "Entries by category and state",
                             [(c, [s.get(k, 0) for k in STATES]) for c, s in counts.items()],
                             STATES, svg.STATE_COLORS)
    growth = overview["growth"]
    growth_chart = svg.time_lines(
        "growth", "Entries in the store after each commit",
        [("entries", [(g["date"], g["entries"]) for g in growth])], step=True,
    ) if growth else '<p class="empty">no commit holds memory files yet</p>'
    expiring = _table("expiring", ["id", "expires", "summary"], (
        ({"data-id": e["id"]}, [_link(e["id"]), _cell(e["expires_at"]), _cell(e["summary"])])
        for e in overview["expiring_soon"]),
        f"nothing expires within {overview['warn_before_archive_days']} days")
    pending = (f'<p class="note">{len(overview["pending"])} memory file(s) not committed yet: '
               f'{_cell(overview["pending"])}</p>' if overview["pending"] else "")
    return _section(
        "overview", "Overview", '<div class="row"><div>', table, "</div><div>", chart,
        "</div></div><h3>Growth over time</h3>", growth_chart,
        f"<h3>Expiring within {overview['warn_before_archive_days']} days</h3>", expiring,
        pending)


def _chains(chains: list[dict[str, Any]]) -> str:
    if not chains:
        return _section("chains", "Supersede chains",
                        '<p class="empty">no entry has been superseded yet</p>')
    edges = sum(len(c["edges"]) for c in chains)
    shown = chains[:CHAIN_ROWS]
    note = (f'<p class="note">showing the {len(shown)} chains with the newest heads; '
            "`loa-mem report --json` lists every one</p>" if len(chains) > len(shown) else "")
    return _section(
        "chains", "Supersede chains",
        f'<p><span id="chain-count">{len(chains)}</span> chain(s), {edges} replacement(s); '
        "each row reads old to new, dated by the replacement. Click an entry for its history."
        "</p>", note, '<div class="scroll">',
        svg.chain_graph("chains", "Supersede chains, old to new", shown), "</div>")


def _effect_rows(items: list[dict[str, Any]]) -> Iterable[tuple[dict[str, Any], list[str]]]:
    for e in items:
        yield ({"data-id": e["id"], "data-tier": e["tier"], "data-score": _cell(e["score"])},
               [_link(e["id"]), escape(e["category"]), escape(e["tier"]), _cell(e["score"]),
                str(e["applications"]), str(e["successes"]), str(e["failures"]),
                _cell(e["summary"])])


def _effectiveness(effect: dict[str, Any]) -> str:
    columns = ["id", "category", "tier", "score", "applied", "successes", "failures", "summary"]
    tiers = effect["tiers"]
    return _section(
        "effectiveness", "Effectiveness",
        "<p>score = round(100 &times; successes / applications); tiers: 80 and up high, "
        "50 to 79 normal, 20 to 49 review, under 20 after 3 or more applications ineffective "
        "(gc archives it); "
        "untested until an outcome is recorded.</p><h3>Learnings by tier</h3>",
        svg.bars("tiers", "Learnings by effectiveness tier", [(t, tiers.get(t, 0))
                                                              for t in TIERS], svg.TIER_COLORS),
        "<h3>Scores of applied learnings</h3>",
        _table("scores", columns, _effect_rows(effect["learnings"]),
               "no learning has been applied yet"),
        "<h3>Queued for review</h3>",
        _table("review", columns, _effect_rows(effect["review"]), "nothing to review"),
        "<h3>Queued for archive (ineffective)</h3>",
        _table("ineffective", columns, _effect_rows(effect["archive"]),
               "nothing is ineffective"))


def _working_set(ws: dict[str, Any]) -> str:
    hot = _table("hot", ["path", "hotness", "pinned", "touches", "since", "last touch", "why"], (
        ({"data-path": i["path"], "data-hotness": i["hotness"]},
         [escape(i["path"]), _cell(i["hotness"]), _cell(i["pinned"]), _cell(i["touches"]),
          _cell(i["since"]), _cell(i["last_touch"]), _cell(i["why"])]) for i in ws["hot"]),
        "no file is on the hot list")
    cold = _table("cold", ["path", "suggested action", "hotness", "pinned", "last touch", "why"], (
        ({"data-path": i["path"], "data-hotness": i["hotness"]},
         [escape(i["path"]), _cell(i["suggested_action"]), _cell(i["hotness"]),
          _cell(i["pinned"]), _cell(i["last_touch"]), _cell(i["why"])]) for i in ws["cold"]),
        "no file is on the cold list")
    pins = ("<ul id=\"pins\">" + "".join(f'<li data-path="{escape(p)}">{escape(p)}</li>'
                                          for p in ws["pins"]) + "</ul>"
            if ws["pins"] else '<p class="empty" id="pins">no file is pinned</p>')
    chart = svg.bars("hotness", "Hotness of the files in the working set", [
        (i["path"], round(100 * i["hotness"])) for i in [*ws["hot"], *ws["cold"]]], {}) \
        if ws["hot"] or ws["cold"] else ""
    return _section(
        "working-set", "Working set",
        f"<p>turn {ws['turn']}; hotness = .3 recent touches + .2 in working set + .3 hot-listed "
        "+ .2 pinned (the chart shows it in percent).</p>", chart,
        "<h3>Hot</h3>", hot, "<h3>Cold</h3>", cold, "<h3>Pinned</h3>", pins,
        "<h3>What gc did recently</h3>", _gc_runs(ws["gc"]))


def _gc_runs(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return '<p class="empty" id="gc-runs">gc has not run yet</p>'
    parts = ['<div id="gc-runs">']
    for run in runs:
        parts.append(f'<div class="gc-run" data-time="{escape(str(run["time"]))}"><p>'
                     f'<b>{_cell(run["time"])}</b> trigger {_cell(run["trigger"])}, '
                     f'{_cell(run["tokens_freed"])} tokens freed, {_cell(run["files_affected"])}'
                     " file(s) affected</p>")
        parts.append(_table("", ["what", "action", "summary / to", "reason"], (
            ({}, [escape(a["id"] + " in " if a.get("id") else "") + _cell(a["path"]),
                  _cell(a["action"]), _cell(a["summary"] or a["to"]), _cell(a["reason"])])
            for a in run["actions"]), "nothing to do").replace(' id=""', ""))
        parts.append("</div>")
    return "".join(parts) + "</div>"


def _agents(agents: dict[str, Any]) -> str:
    found = agents["agents"]
    if not found:
        return _section("agents", "Agents", '<p class="empty">no agent has a sidecar yet</p>')
    names = [a["name"] for a in found]
    graph = svg.relation_graph("relationships", "Relationships between agents", names,
                               agents["edges"])
    series = [(a["name"], [(h["timestamp"], h["score"]) for h in a["trust"]["history"]
                           if h.get("timestamp") and isinstance(h.get("score"), (int, float))])
              for a in found if a.get("trust")]
    trust = svg.time_lines("trust", "Trust score over time, per agent", series, y_max=1.0) \
        if any(points for _, points in series) else '<p class="empty">no trust record yet</p>'
    cards = "".join(_agent_card(a) for a in found)
    return _section("agents", "Agents", '<div class="row"><div><h3>Relationships</h3>', graph,
                    "</div><div><h3>Trust score over time</h3>", trust, "</div></div>", cards)


def _agent_card(agent: dict[str, Any]) -> str:
    name = agent["name"]
    if agent.get("error"):
        return (f'<div class="agent" data-agent="{escape(name)}"><h3>{escape(name)}</h3>'
                f'<p class="error">{escape(agent["error"])}</p></div>')
    trust = agent.get("trust")
    score = (f'trust <span class="trust-score">{trust["score"]:.4f}</span>'
             f'{" (on probation)" if trust.get("probation") else ""}, {_cell(trust["rounds"])} '
             "round(s)" if trust and isinstance(trust.get("score"), (int, float))
             else "no trust record")
    relations = "; ".join(f"{k}: {', '.join(v)}" for k, v in agent["relationships"].items() if v)
    memories = _table("", ["id", "type", "confidence", "unreinforced", "content"], (
        ({"data-id": m["id"]}, [_cell(m["id"]), _cell(m["type"]), _cell(m["confidence"]),
                                _cell(m["unreinforced_sessions"]), _cell(m["content"])])
        for m in agent["memories"]), "no memories").replace(' id=""', "")
    return (f'<div class="agent" data-agent="{escape(name)}"><h3>{escape(name)}</h3>'
            f"<p>{_cell(agent['sessions'])} session(s) · {score} · "
            f"{escape(relations) or 'no relationships'}</p>{memories}</div>")


_ENTRY_COLUMNS: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
    ("id", "text", lambda e: _link(e["id"])),
    ("category", "text", lambda e: escape(e["category"])),
    ("state", "text", lambda e: escape(e["state"])),
    ("confidence", "num", lambda e: _cell(e["confidence"])),
    ("tier", "text", lambda e: escape(e["tier"])),
    ("score", "num", lambda e: _cell(e["score"])),
    ("created", "text", lambda e: escape(e["created"][:10])),
    ("expires", "text", lambda e: _cell((e["expires_at"] or "")[:10])),
    ("tags", "text", lambda e: _cell(e["tags"])),
    ("summary", "text", lambda e: _cell(e["summary"])),
]


def _entries(entries: list[dict[str, Any]]) -> str:
    head = "".join(f'<th data-type="{kind}" title="sort">{name}</th>'
                   for name, kind, _ in _ENTRY_COLUMNS)
    rows = "".join(f'<tr data-id="{escape(e["id"])}"><td>'
                   + "</td><td>".join(show(e) for _, _, show in _ENTRY_COLUMNS)
                   + "</td></tr>" for e in entries)
    return _section(
        "entries", "Entries",
        '<p><label>Search <input id="search" type="search" placeholder="words, ids, tags, '
        f'states…" autocomplete="off"></label> <span id="shown">{len(entries)}</span> of '
        f"{len(entries)} shown; click a column to sort, an id for its history.</p>",
        f'<div class="scroll"><table id="entries-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>")


def _history(history: dict[str, Any]) -> str:
    return _section(
        "history", "History",
        '<div id="history-panel"><p class="empty">Click an entry id to list the commits that '
        f"touched it ({len(history['commits'])} commit(s) touch entries; "
        "`loa-mem history ID` also follows hand edits line by line).</p></div>")
