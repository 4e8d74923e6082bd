"""One grimoire item read line by line as a block mapping, for the fast reader (`yamlfast`):
nested mappings, block lists of scalars, plain and single-quoted scalars over several lines,
literal blocks (`|`, `|-`). Anything else raises `Unsure` (the item goes to the full parser).
`Document` reads a whole file that is such a mapping (the config), flow mappings of plain
scalars besides.
"""

from __future__ import annotations

from loa_mem.core import spanhash
from loa_mem.core.located import Located
from loa_mem.core.yamlscalars import (
    CONTINUED,
    FLOW_ODD,
    UNSURE,
    Unsure,
    closed,
    flow_list,
    fold,
    key,
    plain,
    quoted,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from typing import Any



class Item:
    """One item's lines (`lines[start:end]`, 0-based) read as a mapping."""

    def __init__(self, lines: list[str], start: int, end: int) -> None:
        first = lines[start]
        if not first.startswith("- ") or first[2:3] in (" ", ""):
            raise Unsure
        self.lines = ["  " + first[2:], *lines[start + 1:end]]
        self.file_lines = lines
        self.start = start
        self.last = 0

    def read(self) -> Located:
        data, keys, at = self._mapping(0, 2)
        if self._next_content(at) is not None:
            raise Unsure
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
                raise Unsure
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
            raise Unsure
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
        if any(line.strip(" ") and not CONTINUED.fullmatch(line.strip(" ")) for line in more):
            raise Unsure
        value = plain(fold([rest, *more]) if more else rest)
        if value is UNSURE or (more and not isinstance(value, str)):
            raise Unsure
        if more:
            self.last = end - 1
        return value, end

    def _quoted(self, rest: str, at: int, indent: int) -> tuple[Any, int]:
        end = self._continuation(at, indent) if not closed(rest) else at
        more = self.lines[at:end]
        value = quoted(fold([rest, *more]) if more else rest)
        if value is UNSURE:
            raise Unsure
        if more:
            self.last = end - 1
        return value, end

    def _literal(self, at: int, indent: int, strip: bool) -> tuple[str, int]:
        end = self._continuation(at, indent)
        body = self.lines[at:end]
        if not body or (end < len(self.lines) and not self.lines[end].strip(" ")):
            raise Unsure  # empty, or blank lines after it (the full parser counts them)
        if self.start + end == len(self.file_lines):
            raise Unsure  # the file's last line, without its line break: `|` keeps none
        # the indentation of its first line with text; blank lines before it as long or
        # shorter (longer ones are the full parser's, which refuses them)
        first = 0
        while not body[first].strip(" "):
            first += 1
        depth = len(body[first]) - len(body[first].lstrip(" "))
        if depth == 0 or any(len(line) > depth for line in body[:first]) or any(
                line.strip(" ") and not line.startswith(" " * depth) for line in body):
            raise Unsure
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
                raise Unsure
            text = line[column + 2:].strip(" ")
            value = quoted(text) if text.startswith("'") else plain(text)
            if value is UNSURE or text == "":
                raise Unsure
            items.append(value)
            self.last = found
            at = found + 1


class Document(Item):
    """A YAML document that is a block mapping at column 0, read as `Item` reads an item; a
    flow mapping (`{ttl: 90d, storage_file: errors.yaml}`) is read when each of its values is
    a plain scalar without flow indicators, quotes or colons."""

    def __init__(self, text: str) -> None:
        self.lines = self.file_lines = text.split("\n")
        self.start = self.last = 0

    def mapping(self) -> dict[str, Any]:
        data, _, at = self._mapping(0, 0)
        if not data or self._next_content(at) is not None:
            raise Unsure
        return data

    def _value(self, rest: str, at: int, indent: int) -> tuple[Any, int]:
        if rest.startswith("{") and rest != "{}":
            return _flow_mapping(rest), at
        return super()._value(rest, at, indent)


def _flow_mapping(text: str) -> dict[str, Any]:
    if not text.endswith("}"):
        raise Unsure
    found: dict[str, Any] = {}
    for part in text[1:-1].split(","):
        name, colon, value = part.strip(" ").partition(": ")
        name_key, value = key(name), value.strip(" ")
        if not colon or name_key is None or name_key in found or not value \
                or FLOW_ODD.search(value):
            raise Unsure
        found[name_key] = plain(value)
        if found[name_key] is UNSURE:
            raise Unsure
    return found
