"""A fast reader for grimoire files in the layout loa-mem writes, with the same result as
`yamlio.load_list` (data, lines, key lines, text hash) at a fraction of its cost.

A grimoire file is cut at its top-level items (`cut`); each item is read line by line when it
holds only what loa-mem writes: block mappings of simple keys, plain, single-quoted and literal
(`|`, `|-`) scalars, flow lists of plain words, block lists of scalars, comments. An item with
anything else (double quotes, anchors, tags, inline comments, odd indentation) is read by the
full parser, together with the other such items; a file that cannot be cut, or whose odd items
do not read as one item each, is read whole by the full parser, which reports its errors.
"""

from __future__ import annotations

import re

from loa_mem.core import spanhash
from loa_mem.core.errors import InvalidFile
from loa_mem.core.located import ListFile, Located
from loa_mem.core.yamlscalars import UNSURE, flow_list, fold, key, plain, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from typing import Any

# line breaks YAML counts besides "\n": a file holding any is read by the full parser
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\t"
_CONTINUED = re.compile(r"[^\s#](?:[^\t:#]|:(?=\S)|(?<=\S)#)*")


class _Unsure(Exception):
    """This item holds something the fast reader does not read."""


def cut(text: str, indent: int = 0) -> list[tuple[int, str]] | None:
    """(first line, text) of each top-level item (the lines up to the next item), or None when
    the file is not a plain block list (content before the first item, other line breaks)."""
    if any(c in text for c in _OTHER_BREAKS):
        return None
    lead = " " * indent + "-"
    # a literal "\n" first lets the regex engine jump between line starts (9 MB: 0.3 s -> 20 ms)
    starts = [m.start() + 1 for m in re.finditer(rf"\n{lead}(?=[ \n])", text)]
    if text.startswith(lead) and text[len(lead):len(lead) + 1] in (" ", "\n", ""):
        starts.insert(0, 0)
    if text.endswith("\n" + lead):
        starts.append(len(text) - len(lead))
    head = text[:starts[0]] if starts else text
    if any(line.strip() and not line.lstrip().startswith("#") for line in head.split("\n")):
        return None  # "[]", a document marker, or anything else before the first item
    found = []
    line = head.count("\n")
    for at, end in zip(starts, [*starts[1:], len(text)][:len(starts)], strict=True):
        chunk = text[at:end]
        found.append((line, chunk))
        line += chunk.count("\n")
    return found


def load_list(text: str, path: str) -> ListFile:
    """What `yamlio.load_list(text, path)` returns, read faster."""
    pieces = cut(text)
    items = read(text.split("\n"), pieces, path) if pieces else None
    if items is None:
        from loa_mem.core import yamlio

        return yamlio.load_list(text, path)
    return ListFile(items, 0, False)


def read(lines: list[str], pieces: list[tuple[int, str]], path: str
         ) -> list[Located] | None:
    """The items `cut` found (`lines`: the file's text split at "\n"); None when the odd ones
    among them do not read as one item each (the caller then reads the whole file)."""
    items: list[Located | None] = []
    for start, chunk in pieces:
        end = start + chunk.count("\n") + (not chunk.endswith("\n"))
        items.append(_read_one(lines, start, end, chunk))
    odd = [piece for piece, item in zip(pieces, items, strict=True) if item is None]
    if not odd:
        return [i for i in items if i is not None]
    found = read_pieces(odd, path)
    if found is None:
        return None
    others = iter(found)
    return [item if item is not None else next(others) for item in items]


def _read_one(lines: list[str], start: int, end: int, chunk: str) -> Located | None:
    for reader in (_simple, _general):
        try:
            found = reader(lines, start, end, chunk)
        except _Unsure:
            continue
        if found is not None:
            return found
    return None


def _general(lines: list[str], start: int, end: int, chunk: str) -> Located:
    return _Item(lines, start, end).read()


def read_pieces(pieces: list[tuple[int, str]], path: str) -> list[Located] | None:
    """Items cut from a file, read together by the full parser, with their lines in the file;
    None when they do not read as one item each."""
    from loa_mem.core import yamlio

    texts = [chunk if chunk.endswith("\n") else chunk + "\n" for _, chunk in pieces]
    try:
        parsed = yamlio.load_list("".join(texts), path)
    except InvalidFile:
        return None
    if len(parsed.items) != len(pieces):
        return None
    found = []
    line = 0
    for (start, _), text, item in zip(pieces, texts, parsed.items, strict=True):
        if not line < item.first_line <= item.last_line <= line + text.count("\n"):
            return None
        shift = start - line
        found.append(Located(item.data, item.first_line + shift, item.last_line + shift,
                                    {k: v + shift for k, v in item.key_lines.items()},
                                    item.text_hash))
        line += text.count("\n")
    return found


# one line of an item in the simple layout: its indent, its key, and " value" when there is one
_SIMPLE = re.compile(r"^(- |  |    )([A-Za-z_][A-Za-z0-9_]*):( .*)?$", re.MULTILINE)
_VALUES: dict[str, Any] = {}
_KEYS: set[str] = set()  # names already known to read as themselves


def _simple(lines: list[str], start: int, end: int, chunk: str) -> Located | None:
    """The item when each of its lines is `key: value` on one line, at most one level deep
    (what loa-mem writes for short texts); None for anything else. `chunk`: its lines' text."""
    last = end - 1
    while last > start and (not lines[last].strip(" ") or lines[last].lstrip(" ")[:1] == "#"):
        last -= 1
    found = _SIMPLE.findall(chunk)
    # every line up to the last one matched (the blank and comment lines after it never match)
    if len(found) != last - start + 1 or found[0][0] != "- ":
        return None
    data: dict[str, Any] = {}
    keys: dict[str, int] = {}
    parent: dict[str, Any] | None = None
    parents = []
    number = start
    for indent, name, rest in found:
        number += 1
        if name not in _KEYS and not _known(name):
            return None
        value = _VALUES.get(rest[1:], UNSURE) if rest else None
        if value is UNSURE:
            value = _cached(rest[1:])
        if indent == "    ":
            if parent is None or name in parent:
                return None
            parent[name] = value
        elif name in data:
            return None
        else:
            keys[name] = number
            parent = None
            if rest:
                data[name] = value
            else:
                parent = data[name] = {}
                parents.append(parent)
    if not all(parents):
        return None  # `key:` with nothing under it (null), left to the general reader
    return Located(data, start + 1, last + 1, keys, spanhash.of_lines(lines, start, last))


def _known(name: str) -> bool:
    """Whether a key reads as its own text (remembered: a file repeats a few keys)."""
    if key(name) is None:
        return False
    if len(_KEYS) < 1024:
        _KEYS.add(name)
    return True


def _cached(text: str) -> Any:
    """`_value`, remembered for short texts (categories, ttls, sessions repeat)."""
    value = _VALUES.get(text, UNSURE)
    if value is UNSURE:
        value = _value(text)
        if len(_VALUES) < 4096 and len(text) < 64 and not isinstance(value, (list, dict)):
            _VALUES[text] = value
    return value


def _value(text: str) -> Any:
    if text.startswith("'"):
        value = quoted(text)
    elif text.startswith("["):
        value = flow_list(text)
    elif text == "{}":
        raise _Unsure  # an empty mapping: left to the general reader
    else:
        value = plain(text.rstrip(" "))
    if value is UNSURE:
        raise _Unsure
    return value


class _Item:
    """One item's lines (`lines[start:end]`, 0-based) read as a mapping."""

    def __init__(self, lines: list[str], start: int, end: int) -> None:
        first = lines[start]
        if not first.startswith("- ") or first[2:3] in (" ", ""):
            raise _Unsure
        self.lines = ["  " + first[2:], *lines[start + 1:end]]
        self.file_lines = lines
        self.start = start
        self.last = 0

    def read(self) -> Located:
        data, keys, at = self._mapping(0, 2)
        if self._next_content(at) is not None:
            raise _Unsure
        first, last = self.start, self.start + self.last
        return Located(data, first + 1, last + 1,
                              {k: self.start + line + 1 for k, line in keys.items()},
                              spanhash.of_lines(self.file_lines, first, last))

    def _next_content(self, at: int) -> int | None:
        while at < len(self.lines):
            stripped = self.lines[at].lstrip(" ")
            if stripped and not stripped.startswith("#"):
                return at
            at += 1
        return None

    def _mapping(self, at: int, indent: int) -> tuple[dict[str, Any], dict[str, int], int]:
        result: dict[str, Any] = {}
        keys: dict[str, int] = {}
        while True:
            found = self._next_content(at)
            if found is None:
                return result, keys, len(self.lines)
            line = self.lines[found]
            column = len(line) - len(line.lstrip(" "))
            if column < indent:
                return result, keys, found
            name, colon, rest = line[column:].partition(":")
            name_key = key(name)
            if column > indent or not colon or name_key is None or name_key in result or (
                    rest and not rest.startswith(" ")):
                raise _Unsure
            keys[name_key] = found
            self.last = found
            result[name_key], at = self._value(rest.strip(" "), found + 1, indent)

    def _value(self, rest: str, at: int, indent: int) -> tuple[Any, int]:
        if rest == "":
            return self._nested(at, indent)
        if rest in ("|", "|-"):
            return self._literal(at, indent, rest == "|-")
        if rest.startswith("'"):
            return self._quoted(rest, at, indent)
        if rest.startswith("["):
            value = flow_list(rest)
        elif rest == "{}":
            value = {}
        else:
            return self._plain(rest, at, indent)
        if value is UNSURE:
            raise _Unsure
        return value, at

    def _continuation(self, at: int, indent: int) -> int:
        """The end of the lines after `at` indented deeper than `indent` (blank lines within)."""
        end = at
        while end < len(self.lines):
            line = self.lines[end]
            if line.strip(" ") and len(line) - len(line.lstrip(" ")) <= indent:
                break
            end += 1
        while end > at and not self.lines[end - 1].strip(" "):
            end -= 1
        return end

    def _plain(self, rest: str, at: int, indent: int) -> tuple[Any, int]:
        end = self._continuation(at, indent)
        more = self.lines[at:end]
        if any(line.strip(" ") and not _CONTINUED.fullmatch(line.strip(" ")) for line in more):
            raise _Unsure
        value = plain(fold([rest, *more]) if more else rest)
        if value is UNSURE or (more and not isinstance(value, str)):
            raise _Unsure
        if more:
            self.last = end - 1
        return value, end

    def _quoted(self, rest: str, at: int, indent: int) -> tuple[Any, int]:
        end = self._continuation(at, indent) if not _closed(rest) else at
        more = self.lines[at:end]
        value = quoted(fold([rest, *more]) if more else rest)
        if value is UNSURE:
            raise _Unsure
        if more:
            self.last = end - 1
        return value, end

    def _literal(self, at: int, indent: int, strip: bool) -> tuple[str, int]:
        end = self._continuation(at, indent)
        body = self.lines[at:end]
        if not body or (end < len(self.lines) and not self.lines[end].strip(" ")):
            raise _Unsure  # empty, or blank lines after it (the full parser counts them)
        depth = len(body[0]) - len(body[0].lstrip(" "))
        if depth == 0 or any(line.strip(" ") and not line.startswith(" " * depth)
                             for line in body):
            raise _Unsure
        self.last = end - 1
        text = "\n".join(line[depth:] for line in body)
        return (text if strip else text + "\n"), end

    def _nested(self, at: int, indent: int) -> tuple[Any, int]:
        found = self._next_content(at)
        if found is None:
            return None, at
        line = self.lines[found]
        column = len(line) - len(line.lstrip(" "))
        stripped = line[column:]
        if stripped.startswith("- ") and column >= indent:
            return self._sequence(found, column)
        if column > indent:
            data, _, end = self._mapping(found, column)
            return data, end
        return None, at

    def _sequence(self, at: int, indent: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        while True:
            found = self._next_content(at)
            if found is None:
                return items, len(self.lines)
            line = self.lines[found]
            column = len(line) - len(line.lstrip(" "))
            if column < indent or (column == indent and not line[column:].startswith("- ")):
                return items, found
            if column > indent:
                raise _Unsure
            text = line[column + 2:].strip(" ")
            value = quoted(text) if text.startswith("'") else plain(text)
            if value is UNSURE or text == "":
                raise _Unsure
            items.append(value)
            self.last = found
            at = found + 1


def _closed(rest: str) -> bool:
    """Whether a single-quoted scalar starting `rest` ends on this line."""
    body = rest[1:].replace("''", "")
    return body.endswith("'") and body.count("'") == 1
