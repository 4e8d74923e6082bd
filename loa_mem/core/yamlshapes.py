"""Items that repeat a layout the fast reader has already read, each read with one match.

Most items of a grimoire file share a few layouts: the same keys in the same order, one value per
key (`key: value`, a long text folded over the lines after it as loa-mem writes it), a nested
mapping of the same keys. Once `yamlfast` has read an item of such a layout line by line, the
layout becomes a `Shape`: a pattern of the whole item whose groups are its values. An item the
pattern matches has the same keys, so only its values are read, by the same scalar rules
(`value`); its lines are told by how many lines each value takes (`Shape.variant`). An item it
does not match (other keys, a comment or a blank line inside, a last line without its line
break), or with a value those rules are unsure of, is read line by line as before. The same
pattern, anchored where an item starts in a file's text (`item`), takes the item only when the
next one starts right after it: no chunk of the item needs to be cut first.
"""

from __future__ import annotations

import re
import sys

from loa_mem.core import spanhash
from loa_mem.core.yamlscalars import UNSURE, Unsure

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from collections.abc import Callable
    from typing import Any


# a value's text as a layout's pattern takes it: its line, and the lines loa-mem folds a long
# text onto (two spaces deeper than its key, something other than a space or a comment first).
# Possessive where Python has it (3.11): an item of other keys fails the match without the
# engine giving back each value's text one character at a time.
_ONCE = "+" if sys.version_info >= (3, 11) else ""
_VALUE = f" (.*{_ONCE}(?:\n    [^ \n#].*{_ONCE})*{_ONCE})"
_NESTED_VALUE = f" (.*{_ONCE}(?:\n      [^ \n#].*{_ONCE})*{_ONCE})"
_VARIANTS = 256  # the line arrangements a layout remembers (any more are made for each item)


class Shape:
    """The layout of an item read line by line: `found` holds its keys' (indent, key, " value"
    or ""), as `yamlfast`'s line pattern gives them ("- " first, "  " for a key of the item,
    "    " for a key of the mapping under the key before it); a value folded over several
    lines holds their line breaks.

    The pattern takes an item of the same keys whichever of its values are folded, and over
    how many lines; `variant` gives the layout of the item it took, with that item's lines
    (`size`, `offsets`). The layouts of one set of keys share their pattern."""

    __slots__ = ("counts", "item", "keys", "match", "names", "nested", "offsets", "size",
                 "slots", "unfolded", "variants")

    def __init__(self, found: list[tuple[str, str, str]], family: Shape | None = None) -> None:
        parts = []
        names: list[str] = []  # the item's keys
        nested: list[tuple[int, list[str]]] = []  # (first value, keys) of each nested mapping
        slots: list[tuple[str, int, list[str] | None]] = []
        offsets = {}
        values = 0
        number = 0  # the key's line, from the item's first
        for indent, name, rest in found:
            parts.append(re.escape(f"{indent}{name}:") + (
                "" if not rest else _NESTED_VALUE if indent == "    " else _VALUE))
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
            number += 1 + rest.count("\n")
        self.keys = key(found)
        # the lines each value is continued on; the item's lines and counts with none folded
        self.counts = tuple(rest.count("\n") for _, _, rest in found if rest)
        self.unfolded = (len(found), (0,) * len(self.counts))
        if family is None:
            body = "\n".join(parts)
            self.match = re.compile(body + "\n").fullmatch
            # at an item's start in a file (`yamlfast.cut`): the item's text without its last
            # line break, then its values; the next item, or the end of the text, right after it
            self.item = re.compile(f"({body})\n(?=-(?:[ \n]|\\Z)|\\Z)").match
            self.variants: dict[tuple[int, ...], Shape] = {}
        else:
            self.match, self.item, self.variants = family.match, family.item, family.variants
        if len(self.variants) < _VARIANTS:
            self.variants.setdefault(self.counts, self)
        self.names = tuple(names)
        # the last first: each one folds its values into one, the values before keep their place
        self.nested = [(at, at + len(keys), tuple(keys)) for at, keys in reversed(nested)]
        self.offsets = offsets  # {key: its line's offset from the first line}
        self.size = number
        # each key's first value among the values `values` gives, and the keys of its mapping
        # (None for a key with one value)
        self.slots = tuple((name, at, tuple(keys) if keys is not None else None)
                           for name, at, keys in slots)

    def variant(self, groups: tuple[str, ...]) -> Shape:
        """The layout of the item this layout's pattern took, from the pattern's `groups` (its
        text without its last line break, then its values' texts)."""
        lines, none = self.unfolded
        if groups[0].count("\n") + 1 == lines:  # no value folded
            counts = none
        else:
            counts = tuple([text.count("\n") for text in groups[1:]])
        if counts == self.counts:
            return self
        found = self.variants.get(counts)
        if found is None:
            texts = iter(counts)
            found = Shape([(indent, name, " " + "\n" * next(texts) if rest else "")
                           for indent, name, rest in self.keys], self)
        return found

    def span(self, chunk: str, start: int, get: Callable[[str, Any], Any],
             value: Callable[[str], Any]) -> tuple[Any, int, int, dict[str, int], int] | None:
        """(data, first line, last line, {key: line offset}, text hash) of the item `chunk`
        (its text, lines from `start`, 0-based) when it has this layout and `value` reads each
        of its values (raising `Unsure` otherwise; `get`: a cache of known values, consulted
        first); None when not. The offsets are the layout's own: not to be changed."""
        found = self.values(chunk, get, value)
        return None if found is None else found[0].spanned(found[1], chunk, start)

    def values(self, chunk: str, get: Callable[[str, Any], Any], value: Callable[[str], Any]
               ) -> tuple[Shape, list[Any]] | None:
        """The layout of the item `chunk` (`variant`) and its values, in the order of its
        lines (see `span`), or None."""
        found = self.match(chunk)
        if found is None:
            return None
        groups = found.groups()
        values = self.read(groups, get, value)
        return None if values is None else (self.variant((chunk[:-1], *groups)), values)

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
    """What tells two patterns apart: the keys, and which of them have a value."""
    return tuple((indent, name, bool(rest)) for indent, name, rest in found)
