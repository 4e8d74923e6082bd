"""Charts as inline SVG text: stacked bars, bars, time lines and two small graphs.

Plain SVG needs no library, no script and no network, weighs a few kilobytes per chart, and is
read by every browser the same way; the charts a memory report needs (counts, a few lines over
time, chains of boxes, a handful of agents in a ring) are simple enough to draw by hand. Every
chart has `class="chart"`, a `data-chart` name, a fixed size and a `<title>` that says what it
shows; every text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from typing import Any

PALETTE = ("#2f6fb0", "#e08a1e", "#3a9a5b", "#c0392b", "#8e5bb5", "#6b7b8c", "#b8860b",
           "#17a2b8", "#d35f9d", "#556b2f")
STATE_COLORS = {"active": "#3a9a5b", "expired": "#e08a1e", "superseded": "#6b7b8c",
                "archived": "#b0b7bf"}
TIER_COLORS = {"high": "#3a9a5b", "normal": "#2f6fb0", "review": "#e08a1e",
               "ineffective": "#c0392b", "untested": "#b0b7bf"}
RELATION_COLORS = {"agrees_with": "#3a9a5b", "disagrees_with": "#c0392b",
                   "complements": "#2f6fb0"}
FONT = "font-family=\"system-ui, sans-serif\" font-size=\"12\""


def _open(name: str, width: int, height: int, title: str) -> str:
    return (f'<svg class="chart" data-chart="{escape(name)}" role="img" xmlns="http://www.w3.org/'
            f'2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'{FONT}><title>{escape(title)}</title>')


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>'
            f'{escape(text)}</text>')


def _legend(items: Sequence[tuple[str, str]], y: float, x: float = 0) -> str:
    parts = []
    for label, color in items:
        parts.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" '
                     f'fill="{color}"/>' + _text(x + 14, y, label))
        x += 24 + 7 * len(label)
    return "".join(parts)


def _label_width(labels: Sequence[str]) -> int:
    return min(320, max(60, 7 * max([len(label) for label in labels] + [0]) + 12))


def stacked_bars(name: str, title: str, rows: Sequence[tuple[str, Sequence[int]]],
                 keys: Sequence[str], colors: dict[str, str], width: int = 640) -> str:
    """One horizontal bar per row, split by `keys` (e.g. categories by state)."""
    label_w, bar_h, gap, top = _label_width([label for label, _ in rows]), 20, 8, 22
    height = top + len(rows) * (bar_h + gap) + 10
    most = max([sum(values) for _, values in rows] + [1])
    scale = (width - label_w - 50) / most
    parts = [_open(name, width, height, title),
             _legend([(k, colors.get(k, PALETTE[0])) for k in keys], 12)]
    for n, (label, values) in enumerate(rows):
        y = top + n * (bar_h + gap)
        parts.append(_text(label_w - 6, y + 14, label, "end"))
        x = float(label_w)
        for key, value in zip(keys, values, strict=True):
            if value:
                w = max(value * scale, 1.0)
                parts.append(f'<rect class="bar" data-key="{escape(label)}.{escape(key)}" '
                             f'data-value="{value}" x="{x:.1f}" y="{y}" width="{w:.1f}" '
                             f'height="{bar_h}" fill="{colors.get(key, PALETTE[0])}">'
                             f'<title>{escape(label)} {escape(key)}: {value}</title></rect>')
                x += w
        parts.append(_text(x + 6, y + 14, str(sum(values))))
    return "".join(parts) + "</svg>"


def bars(name: str, title: str, items: Sequence[tuple[str, int]], colors: dict[str, str],
         width: int = 640) -> str:
    """One horizontal bar per item, coloured by its label."""
    label_w, bar_h, gap, top = _label_width([label for label, _ in items]), 20, 8, 6
    height = top + len(items) * (bar_h + gap) + 4
    scale = (width - label_w - 50) / max([v for _, v in items] + [1])
    parts = [_open(name, width, height, title)]
    for n, (label, value) in enumerate(items):
        y = top + n * (bar_h + gap)
        w = max(value * scale, 1.0) if value else 0
        parts.append(_text(label_w - 6, y + 14, label, "end"))
        parts.append(f'<rect class="bar" data-key="{escape(label)}" data-value="{value}" '
                     f'x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                     f'fill="{colors.get(label, PALETTE[0])}"/>')
        parts.append(_text(label_w + w + 6, y + 14, str(value)))
    return "".join(parts) + "</svg>"


def _epoch(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d")


def time_lines(name: str, title: str, series: Sequence[tuple[str, Sequence[tuple[str, float]]]],
               y_max: float | None = None, step: bool = False, width: int = 640,
               height: int = 220) -> str:
    """Lines over time: each series a list of (ISO time, value). `step` draws a staircase (a
    count that holds until the next change)."""
    left, right, top, bottom = 48, 16, 26, 28
    points = [[(t, v) for t, v in ((_epoch(s), v) for s, v in values) if t is not None]
              for _, values in series]
    times = [t for p in points for t, _ in p] or [0.0]
    t0, t1 = min(times), max(times)
    if t1 - t0 < 86400:
        t0, t1 = t0 - 43200, t1 + 43200
    top_value = y_max if y_max is not None else max([v for p in points for _, v in p] + [1])
    top_value = top_value or 1

    def x(t: float) -> float:
        return left + (t - t0) / (t1 - t0) * (width - left - right)

    def y(v: float) -> float:
        return top + (1 - v / top_value) * (height - top - bottom)

    parts = [_open(name, width, height, title),
             _legend([(label, PALETTE[n % len(PALETTE)]) for n, (label, _) in enumerate(series)],
                     12, left)]
    for n in range(5):  # grid and y labels
        value = top_value * n / 4
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" stroke="#e3e6ea"/>')
        parts.append(_text(left - 6, y(value) + 4, f"{value:.4g}", "end"))
    days = sorted({_day(t) for t in times})
    ticks = [(min(times), "middle")] if len(days) == 1 else [
        (t0, "start"), ((t0 + t1) / 2, "middle"), (t1, "end")]
    for t, anchor in ticks:
        parts.append(_text(x(t), height - 8, _day(t), anchor))
    for n, ((label, _), pts) in enumerate(zip(series, points, strict=True)):
        color = PALETTE[n % len(PALETTE)]
        coords: list[str] = []
        for i, (t, v) in enumerate(sorted(pts)):
            if step and i:
                coords.append(f"{x(t):.1f},{float(coords[-1].split(',')[1]):.1f}")
            coords.append(f"{x(t):.1f},{y(v):.1f}")
        parts.append(f'<polyline class="line" data-series="{escape(label)}" fill="none" '
                     f'stroke="{color}" stroke-width="2" points="{" ".join(coords)}"/>')
        if len(pts) <= 60:
            parts += [f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="{color}">'
                      f'<title>{escape(label)} {_day(t)}: {v:g}</title></circle>'
                      for t, v in pts]
    return "".join(parts) + "</svg>"


def chain_graph(name: str, title: str, chains: Sequence[dict[str, Any]],
                width: int = 900) -> str:
    """Each supersede chain on one row, oldest left, arrows old -> new labelled by date; a node
    links to its entry's history."""
    box_w, box_h, gap_x, row_h, left = 190, 40, 44, 64, 8
    longest = max([len(c["ids"]) for c in chains] + [1])
    width = max(width, left + longest * (box_w + gap_x))
    height = 12 + len(chains) * row_h
    parts = [_open(name, width, height, title), '<defs><marker id="chain-arrow" viewBox="0 0 10 '
             '10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
             '<path d="M0,0 L10,5 L0,10 z" fill="#556"/></marker></defs>']
    for row, chain in enumerate(chains):
        y = 12 + row * row_h
        nodes = chain["nodes"]
        place = {str(node["id"]): n for n, node in enumerate(nodes)}
        for edge in chain["edges"]:
            a, b = place[edge["from"]], place[edge["to"]]
            x1, x2 = left + a * (box_w + gap_x) + box_w, left + b * (box_w + gap_x)
            mid = y + box_h / 2
            if b == a + 1:
                path = f"M{x1},{mid} L{x2},{mid}"
            else:
                path = f"M{x1 - box_w / 2},{y} C{x1},{y - 18} {x2},{y - 18} {x2 + box_w / 2},{y}"
            parts.append(f'<path class="edge" data-from="{escape(edge["from"])}" data-to="'
                         f'{escape(edge["to"])}" d="{path}" fill="none" stroke="#556" '
                         f'stroke-width="1.5" marker-end="url(#chain-arrow)"><title>'
                         f'{escape(edge["from"])} -> {escape(edge["to"])} '
                         f'({escape(str(edge["date"])[:10])})</title></path>')
        for n, node in enumerate(nodes):
            x = left + n * (box_w + gap_x)
            color = STATE_COLORS.get(str(node["state"]), "#888")
            parts.append(
                f'<a href="#h-{escape(node["id"])}"><g class="node" data-id="'
                f'{escape(node["id"])}"><rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" '
                f'rx="5" fill="#fff" stroke="{color}" stroke-width="2"/>'
                + _text(x + 8, y + 16, str(node["id"]), extra=' font-weight="600"')
                + _text(x + 8, y + 32, f'{str(node["created"])[:10]}  {node["state"]}',
                        extra=' fill="#555"')
                + f'<title>{escape(str(node["summary"]))}</title></g></a>')
    return "".join(parts) + "</svg>"


def relation_graph(name: str, title: str, names: Sequence[str],
                   edges: Sequence[dict[str, str]], size: int = 420) -> str:
    """Agents on a ring; an arrow per relationship, coloured by kind."""
    center, radius = size / 2, size / 2 - 70
    where = {}
    for n, agent in enumerate(names):
        angle = 2 * math.pi * n / max(len(names), 1) - math.pi / 2
        where[agent] = (center + radius * math.cos(angle), center + 20 + radius * math.sin(angle))
    parts = [_open(name, size, size + 30, title), "<defs>"]
    for kind, color in RELATION_COLORS.items():
        parts.append(f'<marker id="rel-{kind}" viewBox="0 0 10 10" refX="10" refY="5" '
                     f'markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 '
                     f'L0,10 z" fill="{color}"/></marker>')
    parts.append("</defs>" + _legend([(k, c) for k, c in RELATION_COLORS.items()], 14, 4))
    for edge in edges:
        if edge["from"] not in where or edge["to"] not in where:
            continue
        (x1, y1), (x2, y2) = where[edge["from"]], where[edge["to"]]
        length = math.hypot(x2 - x1, y2 - y1) or 1
        dx, dy = (x2 - x1) / length * 22, (y2 - y1) / length * 22
        bend = 0.15 * length
        cx, cy = (x1 + x2) / 2 - dy / 22 * bend, (y1 + y2) / 2 + dx / 22 * bend
        color = RELATION_COLORS.get(edge["kind"], "#888")
        parts.append(f'<path class="edge" data-from="{escape(edge["from"])}" data-to="'
                     f'{escape(edge["to"])}" data-kind="{escape(edge["kind"])}" d="M{x1 + dx:.1f},'
                     f'{y1 + dy:.1f} Q{cx:.1f},{cy:.1f} {x2 - dx:.1f},{y2 - dy:.1f}" fill="none" '
                     f'stroke="{color}" stroke-width="2" marker-end="url(#rel-{edge["kind"]})">'
                     f'<title>{escape(edge["from"])} {escape(edge["kind"])} '
                     f'{escape(edge["to"])}</title></path>')
    for agent, (x, y) in where.items():
        parts.append(f'<g class="node" data-id="{escape(agent)}"><circle cx="{x:.1f}" '
                     f'cy="{y:.1f}" r="20" fill="#eef3f9" stroke="#2f6fb0" stroke-width="2"/>'
                     + _text(x, y + 36, agent, "middle") + "</g>")
    return "".join(parts) + "</svg>"
