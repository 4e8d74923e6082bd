"""Items that repeat a layout the fast reader has already read, each read with one match.

Most items of a grimoire file share a few layouts: the same keys in the same order, one value per
line (`key: value`), a nested mapping of the same keys. Once `yamlfast` has read an item of such
a layout line by line, the layout becomes a `Shape`: a pattern of the whole item whose groups are
its values. An item the pattern matches has the same keys on the same lines, so only its values
are read, by the same scalar rules (`value`); an item it does not match (another layout, a
comment or a blank line inside, a last line without its line break), or with a value those rules
are unsure of, is read line by line as before. The same pattern, anchored where an item starts in
a file's text (`item`), takes the item only when the next one starts right after it: no chunk
of the item needs to be cut first.
"""

from __future__ import annotations

import re

from loa_mem.core import spanhash
from loa_mem.core.yamlscalars import UNSURE, Unsure

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from collections.abc import Callable
    from typing import Any


class Shape:
    """The layout of an item read line by line: `found` holds its lines' (indent, key, " value"
    or ""), as `yamlfast`'s line pattern gives them ("- " first, "  " for a key of the item,
    "    " for a key of the mapping under the key before it)."""

    __slots__ = ("item", "match", "names", "nested", "offsets", "size", "slots")

    def __init__(self, found: list[tuple[str, str, str]]) -> None:
        parts = []
        names: list[str] = []  # the item's keys
        nested: list[tuple[int, list[str]]] = []  # (first value, keys) of each nested mapping
        slots: list[tuple[str, int, list[str] | None]] = []
        offsets = {}
        values = 0
        for number, (indent, name, rest) in enumerate(found):
            parts.append(re.escape(f"{indent}{name}:") + (" (.*)" if rest else ""))
            if indent == "    ":
                nested[-1][1].append(name)
                values += 1
            else:
                offsets[name] = number
                names.append(name)
                if rest:
                    slots.append((name, values, None))
                    values += 1
                else:
                    nested.append((values, []))
                    slots.append((name, values, nested[-1][1]))  # its keys, as they come
        body = "\n".join(parts)
        self.match = re.compile(body + "\n").fullmatch
        # at an item's start in a file (`yamlfast.cut`): the item's text without its last line
        # break, then its values; the next item, or the end of the text, comes right after it
        self.item = re.compile(f"({body})\n(?=-(?:[ \n]|\\Z)|\\Z)").match
        self.names = tuple(names)
        # the last first: each one folds its values into one, the values before keep their place
        self.nested = [(at, at + len(keys), tuple(keys)) for at, keys in reversed(nested)]
        self.offsets = offsets  # {key: its line's offset from the first line}
        self.size = len(found)
        # each key's first value among the values `values` gives, and the keys of its mapping
        # (None for a key with one value)
        self.slots = tuple((name, at, tuple(keys) if keys is not None else None)
                           for name, at, keys in slots)

    def span(self, chunk: str, start: int, get: Callable[[str, Any], Any],
             value: Callable[[str], Any]) -> tuple[Any, int, int, dict[str, int], int] | None:
        """(data, first line, last line, {key: line offset}, text hash) of the item `chunk`
        (its text, lines from `start`, 0-based) when it has this layout and `value` reads each
        of its values (raising `Unsure` otherwise; `get`: a cache of known values, consulted
        first); None when not. The offsets are this shape's own: not to be changed."""
        values = self.values(chunk, get, value)
        return None if values is None else self.spanned(values, chunk, start)

    def values(self, chunk: str, get: Callable[[str, Any], Any], value: Callable[[str], Any]
               ) -> list[Any] | None:
        """The values of the item `chunk`, in the order of its lines (see `span`), or None."""
        found = self.match(chunk)
        return None if found is None else self.read(found.groups(), get, value)

    def read(self, texts: tuple[str, ...], get: Callable[[str, Any], Any],
             value: Callable[[str], Any]) -> list[Any] | None:
        """The values of an item of this layout from their `texts` (see `span`), or None."""
        values = []
        try:
            for text in texts:
                known = get(text, UNSURE)
                values.append(value(text) if known is UNSURE else known)
        except Unsure:
            return None
        return values

    def spanned(self, values: list[Any], chunk: str, start: int
                ) -> tuple[Any, int, int, dict[str, int], int]:
        """`span` of the item `chunk` from its `values` (a list this takes)."""
        for at, end, keys in self.nested:
            values[at:end] = [dict(zip(keys, values[at:end], strict=True))]
        return (dict(zip(self.names, values, strict=True)), start + 1, start + self.size,
                self.offsets, spanhash.digest(chunk[:-1]))


def key(found: list[tuple[str, str, str]]) -> tuple[tuple[str, str, bool], ...]:
    """What tells two layouts apart."""
    return tuple((indent, name, bool(rest)) for indent, name, rest in found)
