"""The built-in summarizer and compressor: extractive, deterministic, and honest about it.

Nothing here writes a sentence of its own. Every line of a summary is quoted from a source (cut
at 160 characters) or is a count or a structure read off it; the lines are picked by fixed rules
per style, so the same files always give the same summary. The text says so at the top, because
a reader must not mistake it for a model's understanding of the files.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_LINE = 160
MAX_PER_FILE = 8
_KEY = re.compile(r"\b(error|errors|fail(ed|ure)?|exception|traceback|warn(ing)?|fatal|todo|"
                  r"fixme|result|total|summary|conclusion|decided|decision)\b", re.IGNORECASE)
_DECIDED = re.compile(r"\b(decided|decision|we will|we'll|chose|choose|agreed|adopt(ed)?|"
                      r"settled on|going with|resolved)\b", re.IGNORECASE)
_WHY = re.compile(r"\b(because|since|so that|rationale|reason|in order to|due to)\b",
                  re.IGNORECASE)
_DEFINITION = re.compile(r"^\s*(def |class |async def |function |export |pub fn |fn |func |"
                         r"interface |type |struct |public |private |protected )")
_CODE = (".py", ".ts", ".tsx", ".js", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc",
         ".cpp", ".rb", ".php", ".cs", ".swift", ".scala", ".sh")


@dataclass(frozen=True)
class Source:
    """One file to summarize: its path, its text (None when it is not UTF-8 text), and for the
    diff style the previous committed text (None when git has no earlier version)."""

    path: str
    text: str | None
    previous: str | None = None


def header(style: str) -> str:
    return (f"_Extractive summary ({style}) by loa-mem's built-in summarizer, not written by a "
            "model: each line below is quoted from the sources or counted from them, picked "
            "by fixed rules. Read the sources for anything else._")


def _cut(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1].rstrip() + "…"


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _quote(line: str) -> str:
    return "`" + _cut(line).replace("`", "'") + "`"


def _dedupe(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _kind(path: str) -> str:
    lowered = path.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".yaml", ".yml")):
        return "yaml"
    if lowered.endswith((".md", ".markdown", ".rst", ".txt")):
        return "prose"
    if lowered.endswith(_CODE):
        return "code"
    return "text"


def _stats(source: Source) -> str:
    text = source.text or ""
    return f"{len(text.splitlines())} lines, {len(text)} characters"


def key_lines(source: Source, limit: int = MAX_PER_FILE) -> list[str]:
    """First line, headings and definitions, lines naming errors or results, last line."""
    # a line of punctuation alone (`{`, `}`, `]`) says nothing
    lines = [line for line in _lines(source.text or "") if re.search(r"\w", line)]
    if not lines:
        return []
    kind = _kind(source.path)
    picked = [lines[0]]
    for line in lines[1:-1]:
        if (kind in ("prose", "text") and line.lstrip().startswith("#")) or (
                kind == "code" and _DEFINITION.match(line)) or _KEY.search(line):
            picked.append(line)
    picked = _dedupe(picked)
    if len(picked) > limit - 1:
        picked = picked[:limit - 1]
    if lines[-1] not in picked:
        picked.append(lines[-1])
    return picked


def _structure(value: Any, depth: int = 0, name: str = "") -> list[str]:
    pad = "  " * depth
    label = f"{name}: " if name else ""
    if isinstance(value, dict):
        out = [f"{pad}- {label}object, {len(value)} key(s)"]
        if depth < 3:
            for key in list(value)[:12]:
                out += _structure(value[key], depth + 1, str(key))
        return out
    if isinstance(value, list):
        out = [f"{pad}- {label}list of {len(value)}"]
        if value and depth < 3:
            out += _structure(value[0], depth + 1, "[0]")
        return out
    return [f"{pad}- {label}{type(value).__name__ if value is not None else 'null'}"]


def _parsed(source: Source) -> Any:
    kind = _kind(source.path)
    try:
        if kind == "json":
            return json.loads(source.text or "")
        if kind == "yaml":
            from loa_mem.core import yamlio

            return yamlio.load(source.text or "", source.path)
    except Exception:  # a file that does not parse is summarized as text
        return None
    return None


def _bullet(source: Source) -> list[str]:
    from loa_mem.workingset import structured

    said = structured.summary_lines(source.path, source.text or "")
    if said is not None:
        return said
    return [f"- {_quote(line)}" for line in key_lines(source)]


def _narrative(source: Source) -> list[str]:
    paragraphs = [p for p in re.split(r"\n\s*\n", source.text or "") if p.strip()]
    firsts = []
    for paragraph in paragraphs:
        if paragraph.lstrip().startswith(("#", "```", "-", "*", "|")):
            continue
        sentence = re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()), maxsplit=1)[0]
        firsts.append(_cut(sentence))
        if len(firsts) == 3:
            break
    if not firsts:
        firsts = [_cut(line) for line in key_lines(source, 3)]
    return ["> " + " … ".join(firsts)] if firsts else []


def _schema(source: Source) -> list[str]:
    data = _parsed(source)
    if data is not None:
        return _structure(data)
    lines = _lines(source.text or "")
    outline = [line for line in lines if line.lstrip().startswith("#") or _DEFINITION.match(line)]
    if not outline and lines and ("," in lines[0] or "\t" in lines[0]):
        return [f"- columns: {_quote(lines[0])}"]
    return [f"- {_quote(line)}" for line in outline[:MAX_PER_FILE * 2]] or [
        "- no structure found (no headings, definitions, JSON or YAML)"]


def _diff(source: Source) -> list[str]:
    if source.previous is None:
        return ["- no earlier version in git history to compare with"]
    old, new = source.previous.splitlines(), (source.text or "").splitlines()
    added, removed = [], []
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
        elif line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
    if not added and not removed:
        return ["- unchanged since the last committed version"]
    out = [f"- {len(added)} line(s) added, {len(removed)} removed since the last committed "
           "version"]
    out += [f"  - added: {_quote(line)}" for line in added[:5] if line.strip()]
    out += [f"  - removed: {_quote(line)}" for line in removed[:5] if line.strip()]
    return out


def _decision(source: Source) -> list[str]:
    lines = _lines(source.text or "")
    decided = [line for line in lines if _DECIDED.search(line)][:MAX_PER_FILE]
    reasons = [line for line in lines if _WHY.search(line) and line not in decided][:MAX_PER_FILE]
    if not decided and not reasons:
        return ["- no line states a decision or a reason; nothing extracted"]
    out = [f"- decided: {_quote(line)}" for line in decided]
    out += [f"- why: {_quote(line)}" for line in reasons]
    return out


_STYLES = {"bullet": _bullet, "narrative": _narrative, "schema": _schema, "diff": _diff,
           "decision": _decision}


def summarize(sources: list[Source], style: str) -> str:
    """The summary body (a header saying what it is, then one section per file)."""
    parts = [header(style), ""]
    for source in sources:
        parts.append(f"### {source.path} ({_stats(source)})")
        if source.text is None:
            parts.append("- not UTF-8 text; nothing quoted")
        else:
            parts.extend(_STYLES[style](source) or ["- empty file"])
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def compress(text: str, keep_edges: int = 5) -> str:
    """A shorter version of a log-like text: the first and last lines, every line that names an
    error or a result, runs of repeated lines folded to one with a count, and a note of each cut.
    """
    lines = text.splitlines()
    if len(lines) <= 2 * keep_edges:
        return text
    keep = set(range(keep_edges)) | set(range(len(lines) - keep_edges, len(lines)))
    keep |= {n for n, line in enumerate(lines) if _KEY.search(line)}
    out: list[str] = []
    skipped = 0
    n = 0
    while n < len(lines):
        if n not in keep:
            skipped, n = skipped + 1, n + 1
            continue
        if skipped:
            out.append(f"[... {skipped} line(s) left out by loa-mem gc ...]")
            skipped = 0
        run = n
        while run + 1 < len(lines) and lines[run + 1] == lines[n] and run + 1 in keep:
            run += 1
        out.append(lines[n] + (f"  [x{run - n + 1}]" if run > n else ""))
        n = run + 1
    if skipped:
        out.append(f"[... {skipped} line(s) left out by loa-mem gc ...]")
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
