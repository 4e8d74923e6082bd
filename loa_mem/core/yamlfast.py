"""A fast reader for grimoire files in the layout loa-mem writes, with the same result as
`yamlio.load_list` (data, lines, key lines, text hash) at a fraction of its cost.

A grimoire file is cut at its top-level items (`cut`); each item is read line by line when it
holds only what loa-mem writes: block mappings of simple keys, plain, single-quoted and literal
(`|`, `|-`) scalars, flow lists of plain words, block lists of scalars, comments. An item with
anything else (double quotes, anchors, tags, inline comments, odd indentation) is read by the
full parser, together with the other such items; a file that cannot be cut, or whose odd items
do not read as one item each, is read whole by the full parser, which reports its errors. An
item of one `key: value` per line in a layout already met in the file is read with one pattern
match (`yamlshapes`); other items line by line (`_simple`, then `yamlitem`).
"""

from __future__ import annotations

import re

from loa_mem.core import spanhash
from loa_mem.core.errors import InvalidFile
from loa_mem.core.located import ListFile, Located
from loa_mem.core.yamlitem import Document, Item
from loa_mem.core.yamlscalars import UNSURE, VALUES, Unsure, cached, key, uncached
from loa_mem.core.yamlshapes import Shape
from loa_mem.core.yamlshapes import key as shape_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from collections.abc import Callable
    from typing import Any

    # (data, first line, last line, {key: line offset from the first line}, text hash)
    Span = tuple[Any, int, int, dict[str, int], int]
    # what a caller makes of an item of a known layout from its values (`read_rows`)
    Fused = Callable[[Shape, list[Any], str, int], Any]


def _odd(text: str) -> bool:
    """Whether `text` holds a character the full parser must read (`spanhash.unusual`: line
    breaks YAML counts besides "\n", tabs, the control characters YAML refuses, C0 and C1)."""
    ascii = text.isascii()
    return spanhash.unusual(text.encode("ascii") if ascii else text.encode(
        "utf-8", "surrogatepass"), ascii)
_MARKER = re.compile(r"\n(?:\.\.\.|---)(?=[ \n]|$)")


def cut(text: str, indent: int = 0) -> list[tuple[int, str]] | None:
    """(first line, text) of each top-level item (the lines up to the next item), or None when
    the file is not a plain block list (`head`)."""
    first = head(text, indent)
    if first is None:
        return None
    at, line = first
    # a literal "\n" first lets the regex engine jump between line starts (9 MB: 0.3 s -> 20 ms)
    starts = [at, *(m.start() + 1 for m in item_pattern(indent).finditer(text, at))]
    found = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        if start < end:  # no items: the one start is the end of the text
            chunk = text[start:end]
            found.append((line, chunk))
            line += chunk.count("\n")
    return found


def head(text: str, indent: int = 0) -> tuple[int, int] | None:
    """(where the first top-level item starts, its line; the end of the text when there is
    none), or None when the file is not a plain block list: content before the first item
    ("[]", a document marker...), other line breaks (`_odd`)."""
    if _odd(text):
        return None
    if ("\n..." in text or "\n---" in text) and _MARKER.search(text):
        return None  # a document's end or start: how it splits the file is the full parser's
    lead = " " * indent + "-"
    if text.startswith(lead) and text[len(lead):len(lead) + 1] in (" ", "\n", ""):
        return 0, 0
    found = item_pattern(indent).search(text)
    at = found.start() + 1 if found else len(text)
    if any(line.strip() and not line.lstrip().startswith("#") for line in text[:at].split("\n")):
        return None
    return at, text.count("\n", 0, at)


def item_pattern(indent: int) -> re.Pattern[str]:
    """Where a top-level item starts: its "-" first on a line, then a space, a break or the end."""
    return re.compile(rf"\n{' ' * indent}-(?=[ \n]|\Z)")


def load_list(text: str, path: str) -> ListFile:
    """What `yamlio.load_list(text, path)` returns, read faster."""
    pieces = cut(text)
    found = _read(text, None, pieces, path) if pieces is not None else None
    if found is None:
        from loa_mem.core import yamlio

        return yamlio.load_list(text, path)
    return ListFile([_located(item) for item in found], 0, False)


def load_mapping(text: str) -> dict[str, Any] | None:
    """What `yamlio.load` reads from a document that is a block mapping in the simple forms
    `yamlitem.Document` reads (the config as `loa-mem init` writes it, or edited by hand in
    the same style), without importing YAML; None for anything else (the caller uses
    `yamlio.load`, which also reports errors)."""
    if _odd(text) or "\ufeff" in text:
        return None
    try:
        return Document(text).mapping()
    except Unsure:
        return None


class Spans:
    """A grimoire file as the index takes it: its list's layout and each item's `Span`."""

    __slots__ = ("flow", "indent", "spans")

    def __init__(self, indent: int, flow: bool, spans: list[Span]) -> None:
        self.indent = indent
        self.flow = flow
        self.spans = spans


def load_spans(text: str, path: str) -> Spans:
    """What `load_list` reads, as `Located.span()` gives each item (without the objects)."""
    pieces = cut(text)
    found = _read(text, None, pieces, path) if pieces is not None else None
    if found is None:
        from loa_mem.core import yamlio

        parsed = yamlio.load_list(text, path)
        return Spans(parsed.indent, parsed.flow, [item.span() for item in parsed.items])
    return Spans(0, False, [item.span() if isinstance(item, Located) else item
                            for item in found])


def load_part(text: str, path: str, shift: int) -> Spans | None:
    """`load_spans` of a part of a file (whole items, the first one `shift` lines into the
    file); None when the part cannot be read apart from the rest (the caller reads the file)."""
    pieces = cut(text)
    found = _read(text, None, pieces, path, shift, apart=True) if pieces is not None else None
    if found is None:
        return None
    return Spans(0, False, [item.span(shift) if isinstance(item, Located) else item
                            for item in found])


def read_rows(text: str, pieces: list[tuple[int, str]], path: str, shift: int, fused: Fused,
              other: Callable[[Span], Any], shapes: list[Shape]) -> list[Any] | None:
    """What a caller makes of each of the items `pieces` of a part (as `load_part` reads them):
    `fused(shape, values, chunk, first line)` for an item of a layout in `shapes` or met before
    among them (its values not yet folded into mappings; `shapes` learns it), `other(span)`
    for any other item; None as `load_part`."""
    found = _read(text, None, pieces, path, shift, fused, apart=True, shapes=shapes)
    if found is None:
        return None
    return [other(item.span(shift)) if isinstance(item, Located) else item for item in found]


def learn(chunk: str, shapes: list[Shape]) -> None:
    """Add the layout of the item `chunk` to `shapes` (first) when it is one `_simple` reads
    and `shapes` does not hold it yet."""
    lines = chunk.split("\n")
    try:
        simple = _simple(lines, 0, len(lines) - chunk.endswith("\n"), chunk)
    except Unsure:
        return
    if simple is not None:
        _learn(shapes, simple[1])


def read(lines: list[str], pieces: list[tuple[int, str]], path: str
         ) -> list[Located] | None:
    """The items `cut` found (`lines`: the file's text split at "\n"); None when the odd ones
    among them do not read as one item each (the caller then reads the whole file)."""
    found = _read("", lines, pieces, path)
    return None if found is None else [_located(item) for item in found]


def _located(item: Located | Span) -> Located:
    if isinstance(item, Located):
        return item
    data, first, last, offsets, text_hash = item
    return Located(data, first, last, {key: first + at for key, at in offsets.items()},
                   text_hash)


def _read(text: str, lines: list[str] | None, pieces: list[tuple[int, str]], path: str,
          shift: int = 0, fused: Fused | None = None, apart: bool = False,
          shapes: list[Shape] | None = None) -> list[Any] | None:
    """`read`, with an item of a layout met before as its span (`yamlshapes`; its lines moved
    `shift` further down; the items' are not), or as `fused` makes it; `lines` are split from
    `text` when an item needs them. `apart`: the text is a part of its file, and an item
    the full parser reads that may hold an anchor makes it None (the same anchor elsewhere in
    the file makes the file one that does not parse)."""
    items: list[Any] = []
    shapes = [] if shapes is None else shapes  # the layouts met, the last one met first
    get = VALUES.get
    for start, chunk in pieces:
        item: Any = None
        for shape in shapes:
            if fused is None:
                item = shape.span(chunk, start + shift, get, uncached)
            else:
                taken = shape.values(chunk, get, uncached)
                item = None if taken is None else fused(*taken, chunk, start + shift)
            if item is not None:
                if shape is not shapes[0]:
                    shapes.remove(shape)
                    shapes.insert(0, shape)
                break
        if item is None:
            if lines is None:
                lines = text.split("\n")
            end = start + chunk.count("\n") + (not chunk.endswith("\n"))
            item = _read_one(lines, start, end, chunk, shapes)
        items.append(item)
    odd = [piece for piece, item in zip(pieces, items, strict=True) if item is None]
    if not odd:
        return [i for i in items if i is not None]
    if apart and any(may_anchor(chunk, "&") for _, chunk in odd):
        return None
    found = read_pieces(odd, path)
    if found is None:
        return None
    others = iter(found)
    return [item if item is not None else next(others) for item in items]


def _read_one(lines: list[str], start: int, end: int, chunk: str, shapes: list[Shape]
              ) -> Located | None:
    try:
        simple = _simple(lines, start, end, chunk)
    except Unsure:
        simple = None
    if simple is not None:
        item, found = simple
        _learn(shapes, found)
        return item
    try:
        return _general(lines, start, end, chunk)
    except Unsure:
        return None


_SHAPES: dict[tuple[tuple[str, str, bool], ...], Shape] = {}


def _learn(shapes: list[Shape], found: list[tuple[str, str, str]]) -> None:
    """Remember the layout of an item read by `_simple` (at most a few per file)."""
    known = shape_key(found)
    shape = _SHAPES.get(known)
    if shape is None:
        shape = Shape(found)
        if len(_SHAPES) < 256:
            _SHAPES[known] = shape
    if shape not in shapes:
        shapes.insert(0, shape)
        del shapes[4:]


def _general(lines: list[str], start: int, end: int, chunk: str) -> Located:
    return Item(lines, start, end).read()


# an anchor or an alias where a node may start: a line's first text, after "- ", ": ", "? ", a
# flow indicator or a tag (and, rarely, where it is text, as in a block's line: a false alarm)
_PROPERTY = re.compile(r"(?:^ *|[-:?] +|[\[{,] *|![^ \n]* +)[&*][^ \n,\[\]{}]", re.MULTILINE)


def may_anchor(text: str, marks: str = "&*") -> bool:
    """Whether `text` may hold an anchor or an alias (only anchors: `marks` "&"), which ties
    its items to others: told by one pattern, after a test for the characters."""
    return any(mark in text for mark in marks) and any(
        found.group()[-2] in marks for found in _PROPERTY.finditer(text))


def read_pieces(pieces: list[tuple[int, str]], path: str) -> list[Located] | None:
    """Items cut from a file, read together by the full parser, with their lines in the file;
    None when they do not read as one item each."""
    from loa_mem.core import yamlio

    # as they stand: a last line without its line break is read as such (`|`, `|+`, `>` keep
    # the break when there is one); only the file's last item can end so
    texts = [chunk for _, chunk in pieces]
    try:
        parsed = yamlio.load_list("".join(texts), path)
    except InvalidFile:
        return None
    if len(parsed.items) != len(pieces):
        return None
    found = []
    line = 0
    for (start, _), text, item in zip(pieces, texts, parsed.items, strict=True):
        size = text.count("\n") + (not text.endswith("\n"))
        if not line < item.first_line <= item.last_line <= line + size:
            return None
        shift = start - line
        found.append(Located(item.data, item.first_line + shift, item.last_line + shift,
                                    {k: v + shift for k, v in item.key_lines.items()},
                                    item.text_hash))
        line += size
    return found


# a key of an item in the simple layout: its indent ("- " or "  " for the item's own keys,
# "    " for the keys of a mapping under one of them), its name, and " value" when there is one,
# with the lines a value is continued on as loa-mem writes them (long texts are folded: two
# spaces deeper than its key, something other than a space or a comment first)
_SIMPLE = re.compile(r"^(?:(- |  )|(    ))([A-Za-z_][A-Za-z0-9_]*):"
                     r"( .*(?:\n(?(2)      |    )[^ \n#].*)*)?$", re.MULTILINE)
_KEYS: set[str] = set()  # names already known to read as themselves


def _simple(lines: list[str], start: int, end: int, chunk: str
            ) -> tuple[Located, list[tuple[str, str, str]]] | None:
    """The item and its keys' (indent, key, " value") when each of its keys is `key: value`,
    the value on one line or folded as loa-mem folds long texts, at most one level deep (what
    loa-mem writes); None for anything else. `chunk`: its lines' text."""
    last = end - 1
    while last > start and (not lines[last].strip(" ") or lines[last].lstrip(" ")[:1] == "#"):
        last -= 1
    found = [(top or nested, name, rest) for top, nested, name, rest in _SIMPLE.findall(chunk)]
    # every line up to the last one matched (the blank and comment lines after it never match)
    if not found or found[0][0] != "- " or len(found) + sum(
            rest.count("\n") for _, _, rest in found) != last - start + 1:
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
        value = VALUES.get(rest[1:], UNSURE) if rest else None
        if value is UNSURE:
            value = cached(rest[1:])
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
        number += rest.count("\n")  # the lines its value is continued on
    if not all(parents):
        return None  # `key:` with nothing under it (null), left to the general reader
    return Located(data, start + 1, last + 1, keys, spanhash.of_lines(lines, start, last)), found


def _known(name: str) -> bool:
    """Whether a key reads as its own text (remembered: a file repeats a few keys)."""
    if key(name) is None:
        return False
    if len(_KEYS) < 1024:
        _KEYS.add(name)
    return True
