"""The file formats of `import` and `export`, as pure functions from text to entries and back.

- `jsonl`: loa-mem's own; one entry per line, exactly as stored (ids, links, effectiveness,
  archive fields), so an export imported into an empty store gives the same entries.
- `markdown`: a `## <Category>` section per category, one bullet per entry; an HTML comment
  after each bullet keeps id, confidence and tags (invisible when rendered).
- `claude`: Claude Code memory files (CLAUDE.md, MEMORY.md): every top-level bullet becomes an
  entry, its category taken from the heading above it (Decisions, Preferences, Gotchas, ...).
- `mdan`: an MDAN `.sidecar.json`; it is an agent's sidecar, not entries, so
  `loa_mem.agents.transfer` reads and writes it (this module only names and detects it).

Parsing never raises for one bad item: each item becomes a `Draft` or a `Skipped` with the line
it came from, and the import command decides (it refuses the whole file unless asked to skip).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import Refused
from loa_mem.memory import rules as model

FORMATS = ("jsonl", "markdown", "claude", "mdan")
_PLURAL = {"fact": "Facts", "decision": "Decisions", "learning": "Learnings", "error": "Errors",
           "preference": "Preferences"}
_HEADING_WORDS = (
    ("decision", ("decision", "decisions", "architecture", "adr")),
    ("preference", ("preference", "preferences", "style", "conventions", "convention",
                    "guidelines", "rules")),
    ("learning", ("learning", "learnings", "lessons", "lesson", "insights", "tips")),
    ("error", ("error", "errors", "gotchas", "gotcha", "pitfalls", "bugs", "known issues")),
    ("fact", ("fact", "facts", "context", "overview", "project")),
)
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_META = re.compile(r"\s*<!--\s*(MEM-\d{8}-(?:[a-z2-7]{6,}|\d{3,}))?([^>]*?)-->\s*$")


@dataclass(frozen=True)
class Draft:
    """One entry to import: either a whole stored entry (jsonl) or a request to build one."""

    line: int
    entry: dict[str, Any] | None = None
    request: model.NewEntry | None = None
    when: str | None = None


@dataclass(frozen=True)
class Skipped:
    line: int
    message: str


@dataclass
class Parsed:
    drafts: list[Draft] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def detect(name: str) -> str:
    lowered = name.lower()
    if lowered.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lowered.endswith(".json"):
        return "mdan"
    if lowered.rsplit("/", 1)[-1] in ("claude.md", "memory.md", "claude.local.md"):
        return "claude"
    if lowered.endswith((".md", ".markdown")):
        return "markdown"
    raise Refused(f"cannot tell the format of {name!r}",
                  f"pass --format with one of: {', '.join(FORMATS)}")


def _json_line(data: Any) -> str:
    """One JSON Lines record: readable UTF-8, with the characters that some readers take for
    line ends escaped (JSON allows the escape anywhere a string holds them)."""
    text = json.dumps(data, ensure_ascii=False)
    for char in ("\u2028", "\u2029", "\u0085"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def parse(text: str, fmt: str, name: str, default_category: str | None) -> Parsed:
    if fmt == "jsonl":
        return _parse_jsonl(text)
    if fmt == "mdan":
        raise Refused("an MDAN sidecar is an agent's sidecar, not entries",
                      "import it with `loa-mem import FILE -f mdan`")
    if fmt in ("markdown", "claude"):
        return _parse_markdown(text, fmt, name, default_category)
    raise Refused("unknown --format", f"use one of: {', '.join(FORMATS)}")


# -- reading ----------------------------------------------------------------------------------
def _lines(text: str) -> list[str]:
    """Lines as files end them (\n, \r\n): not at U+2028, U+2029, U+0085 or form feeds, which
    `str.splitlines` also breaks at and which content may hold."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _parse_jsonl(text: str) -> Parsed:
    parsed = Parsed()
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            parsed.skipped.append(Skipped(number, f"not JSON ({error.msg})"))
            continue
        if not isinstance(data, dict):
            parsed.skipped.append(Skipped(number, "not a JSON object"))
            continue
        parsed.drafts.append(Draft(number, entry=data))
    return parsed


def _heading_category(title: str) -> str | None:
    words = title.lower().strip("# ").strip()
    for category, names in _HEADING_WORDS:
        if any(re.search(rf"\b{re.escape(n)}\b", words) for n in names):
            return category
    return None


def _bullets(text: str) -> list[tuple[int, str | None, str]]:
    """(line, category of the heading above or None, text) of every top-level bullet; its
    indented lines and nested bullets belong to it."""
    found: list[tuple[int, str | None, list[str]]] = []
    current: list[str] | None = None
    category: str | None = None
    fenced = False
    for number, line in enumerate(_lines(text), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced, current = not fenced, None
            continue
        match = _BULLET.match(line)
        if fenced or not line.strip():
            continue
        if line.startswith("#"):
            category, current = _heading_category(line), None
        elif match and not match.group(1):
            current = [match.group(2)]
            found.append((number, category, current))
        elif current is not None and line[:1].isspace():
            current.append(f"; {match.group(2)}" if match else f" {line.strip()}")
        else:
            current = None
    return [(n, c, "".join(parts).strip()) for n, c, parts in found]


def _parse_markdown(text: str, fmt: str, name: str, default: str | None) -> Parsed:
    parsed = Parsed()
    for number, category, bullet in _bullets(text):
        body = bullet
        meta = _META.search(body)
        confidence: float | None = None
        tags: tuple[str, ...] = ("claude-code",) if fmt == "claude" else ()
        if meta:
            body = body[:meta.start()].rstrip()
            fields = dict(re.findall(r"(\w+)=(\S+)", meta.group(2)))
            confidence = _number(fields.get("confidence"))
            tags += tuple(t for t in fields.get("tags", "").split(",") if t)
        chosen = default or category or "fact"
        if not body:
            continue
        request = model.NewEntry(content=body, category=chosen, confidence=confidence,
                                 tags=tuple(dict.fromkeys(tags)), session=f"import:{name}",
                                 file_path=name, line_range=str(number))
        parsed.drafts.append(Draft(number, request=request))
    return parsed


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _when(value: Any) -> str | None:
    if not value:
        return None
    try:
        return clock.iso(clock.parse(str(value)))
    except ValueError:
        return None


# -- writing ----------------------------------------------------------------------------------
def render(entries: list[dict[str, Any]], fmt: str, agent: str | None = None) -> str:
    if fmt == "jsonl":
        return "".join(_json_line(e) + "\n" for e in entries)
    if fmt == "markdown":
        return _render_markdown(entries)
    if fmt == "claude":
        return _render_claude(entries)
    if fmt == "mdan":
        raise Refused("an MDAN sidecar is an agent's sidecar, not entries",
                      "export it with `loa-mem export -f mdan --agent NAME`")
    raise Refused("unknown --format", f"use one of: {', '.join(FORMATS)}")


def _by_category(entries: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(c, [e for e in entries if e.get("category") == c]) for c in model.CATEGORIES
            if any(e.get("category") == c for e in entries)]


def _render_markdown(entries: list[dict[str, Any]]) -> str:
    out = ["# Memories\n", "\n", f"<!-- loa-mem export, {clock.now_iso()}, {len(entries)} "
           "entries; `loa-mem import` reads this file back -->\n"]
    for category, group in _by_category(entries):
        out += ["\n", f"## {_PLURAL[category]}\n", "\n"]
        for entry in group:
            lines = str(entry.get("content", "")).strip().split("\n") or [""]
            tags = ",".join(str(t) for t in entry.get("tags") or [])
            meta = f"{entry.get('id')} confidence={entry.get('confidence')}" + (
                f" tags={tags}" if tags else "")
            out.append(f"- {lines[0]}" + ("" if len(lines) > 1 else f" <!-- {meta} -->") + "\n")
            out += [f"  {line}\n" if line.strip() else "\n" for line in lines[1:]]
            if len(lines) > 1:
                out[-1] = out[-1].rstrip("\n") + f" <!-- {meta} -->\n"
    return "".join(out)


def _render_claude(entries: list[dict[str, Any]]) -> str:
    out = ["# Project memory\n", "\n",
           "<!-- Written by `loa-mem export --format claude`; change memories with loa-mem. -->\n"]
    for category, group in _by_category(entries):
        out += ["\n", f"## {_PLURAL[category]}\n", "\n"]
        out += [f"- {' '.join(str(e.get('content', '')).split())}\n" for e in group]
    return "".join(out)
