"""Grimoire items in the plainest layout loa-mem writes, read with str methods alone: no `re`,
none of the fast reader's patterns (importing `yamlfast` costs the session-start hook about
15 ms, most of it `re` and its patterns, where reading the 20 entries a pull appended costs
well under one).

It reads only what it is sure of, with the values `yamlfast` (and so `yamlio`) gives it, and
answers None for anything else (the caller then reads the text with `yamlfast`):
- ASCII text of whole items, each line ending in "\\n", no blank or comment line;
- an item is `- key: value` then `  key: value` lines, keys among `KEYS`, each once; `source:`
  alone on its line, then `    key: value` lines of `SOURCE_KEYS`;
- a value is `null`; a time as loa-mem writes it (`2026-11-22T11:00:00Z`, kept as text); a
  number as loa-mem writes confidences (`0.85`, `1`); a ttl (`90d`); a flow list of words
  (`[a, b-c]`, each starting with a letter); or prose: an ASCII letter first, no ':', '#' or
  tab, no space last, and not one of the words YAML reads as a boolean or null.
A test compares it with `yamlfast` on generated items.
"""

from __future__ import annotations

from loa_mem.core import spanhash

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # (data, first line, last line, {key: line offset from the first line}, text hash)
    Span = tuple[Any, int, int, dict[str, int], int]

KEYS = frozenset(("id", "category", "content", "summary", "confidence", "source", "ttl",
                  "expires_at", "tags"))
SOURCE_KEYS = frozenset(("session_id", "timestamp"))
_OTHER_WORDS = frozenset(("yes", "no", "true", "false", "on", "off", "null", "y", "n", "nan",
                          "inf", "~"))  # besides their capitalised forms
_UNSURE = object()


def read(text: str, shift: int) -> list[Span] | None:
    """The items of `text`, whose first line is line `shift` + 1 of its file, as
    `yamlfast.load_part(text, path, shift).spans` gives them; None when not sure."""
    if not text.endswith("\n") or not text.isascii():
        return None
    lines = text[:-1].split("\n")
    if not lines[0].startswith("- "):
        return None
    found: list[Span] = []
    start = 0
    for at in range(1, len(lines) + 1):
        if at == len(lines) or lines[at].startswith("- "):
            item = _item(lines[start:at], shift + start + 1)
            if item is None:
                return None
            found.append(item)
            start = at
    return found


def _item(lines: list[str], first: int) -> Span | None:
    data: dict[str, Any] = {}
    offsets: dict[str, int] = {}
    parent: dict[str, Any] | None = None
    for at, line in enumerate(lines):
        if not line.isprintable():
            return None
        if line.startswith("    ") and parent is not None:
            name, value = _pair(line[4:], SOURCE_KEYS)
            if name is None or name in parent or value is _UNSURE:
                return None
            parent[name] = value
            continue
        if parent is not None and not parent:
            return None  # `source:` with nothing under it
        if not (line.startswith("  ") if at else line.startswith("- ")) or line[2:3] == " ":
            return None
        parent = None
        if line[2:] == "source:" and "source" not in data:
            parent = data["source"] = {}
            offsets["source"] = at
            continue
        name, value = _pair(line[2:], KEYS)
        if name is None or name in data or name == "source" or value is _UNSURE:
            return None
        data[name] = value
        offsets[name] = at
    if parent is not None and not parent:
        return None
    return data, first, first + len(lines) - 1, offsets, spanhash.digest("\n".join(lines))


def _pair(text: str, names: frozenset[str]) -> tuple[str | None, Any]:
    name, colon, value = text.partition(": ")
    if not colon or name not in names:
        return None, _UNSURE
    return name, _value(value)


def _value(text: str) -> Any:
    if text == "null":
        return None
    first = text[:1]
    if first.isalpha():
        if ":" in text or "#" in text or "\t" in text or text[-1] == " " or (
                text.lower() in _OTHER_WORDS):
            return _UNSURE
        return text
    if first.isdigit():
        return _number_or_time(text)
    if first == "[" and text[-1] == "]":
        return _words(text[1:-1])
    return _UNSURE


def _number_or_time(text: str) -> Any:
    if len(text) == 20 and text[4] == text[7] == "-" and text[10] == "T" and (
            text[13] == text[16] == ":" and text[19] == "Z") and (
            text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]).isdigit():
        return text  # a time as loa-mem writes it: kept as text
    whole, dot, part = text.partition(".")
    if not dot and whole[-1] == "d" and whole[:-1].isdigit():
        return text  # a ttl: `90d`
    if not whole.isdigit() or (len(whole) > 1 and whole[0] == "0"):
        return _UNSURE
    if not dot:
        return int(whole)
    return float(text) if part.isdigit() else _UNSURE


def _words(inner: str) -> Any:
    if not inner:
        return []
    words = inner.split(", ")
    for word in words:
        if not (word[:1].isalpha() and word.replace("-", "").isalnum() and word.islower()
                and word not in _OTHER_WORDS):
            return _UNSURE
    return words
