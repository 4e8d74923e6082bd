"""A part of a grimoire file as a cold build reads it: each item of a layout met before is taken
by that layout's pattern where the item starts in the text, and its row made from the texts of
its values; only the other items are cut and read by `yamlfast` as before.

`yamlfast.load_part` cuts a part into items, then matches each item with the layouts it has met
in the file. Here the part is not cut: where an item starts, the layouts met in this process
(the last one met first) are tried (`Shape.item`); a match is exactly one item, as `yamlfast.cut`
cuts it (its pattern ends where the next item starts, or at the end of the text). An item none
of them takes is cut and left to `yamlfast.read_rows`, with all the others like it in the part
(the full parser reads their odd ones together, as it does for `load_part`); a layout is learnt
from the first such item of each run of them. Whichever way an item is read, its row is the one
`load_part`'s reading of it gives (the makers hold to that: `memory.fastrows`).
"""

from __future__ import annotations

from loa_mem.core import yamlfast
from loa_mem.core.yamlscalars import VALUES, uncached

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from collections.abc import Callable
    from typing import Any

    from loa_mem.core.yamlfast import Fused, Span
    from loa_mem.core.yamlshapes import Shape

    # what makes the rows of the items of a layout (None: `Fused` makes them): from an item's
    # groups (its text without its last line break, then its values' texts) and its first
    # line (0-based), its row, or None when `Fused` makes it
    Made = Callable[[Shape], Callable[[tuple[str, ...], int], Any] | None]

_RECENT: list[Shape] = []  # the layouts met in this process, the last one met first
_LEARN_EVERY = 8  # in a run of items no layout takes, the items a layout is learnt from: 1 in 8


def load_part_rows(text: str, path: str, shift: int, fused: Fused, other: Callable[[Span], Any],
                   made: Made) -> list[Any] | None:
    """What a caller makes of each item of a part (the items `yamlfast.load_part(text, path,
    shift)` reads): what `made(shape)` makes of an item a layout met before takes, else
    `fused(shape, values, chunk, first line)` of an item of a layout met before (its values
    not yet folded into mappings), `other(span)` of any other item; None as `load_part`."""
    first = yamlfast.head(text)
    if first is None:
        return None
    at, line = first
    size = len(text)
    rows: list[Any] = []
    left: list[tuple[int, str]] = []  # (first line, text) of the items left to `read_rows`
    places: list[int] = []  # where their rows go
    shapes = _RECENT
    missed = 0  # items in a row no layout took
    while at < size:
        found = None
        for shape in shapes:
            found = shape.item(text, at)
            if found is not None:
                break
        if found is None:
            end = _end(text, at)
            if missed % _LEARN_EVERY == 0:
                missed += 1
                yamlfast.learn(text[at:end], shapes)
                continue
            missed += 1
            places.append(len(rows))
            rows.append(None)
            left.append((line, text[at:end]))
            line += text.count("\n", at, end)
            at = end
            continue
        missed = 0
        if shape is not shapes[0]:
            shapes.remove(shape)
            shapes.insert(0, shape)
        line, at = _run(text, shape, found, line, shift, rows, (fused, made), (places, left))
    if left:
        read = yamlfast.read_rows(text, left, path, shift, fused, other, shapes)
        if read is None:
            return None
        for place, row in zip(places, read, strict=True):
            rows[place] = row
    return rows


def _run(text: str, shape: Shape, found: Any, line: int, shift: int, rows: list[Any],
         makers: tuple[Fused, Made], left: tuple[list[int], list[tuple[int, str]]]
         ) -> tuple[int, int]:
    """Make the rows of the item `found` and of the items of the same layout right after it
    (into `rows`, or their places and pieces into `left` for an item whose values are not all
    read); the line and the place in `text` after them."""
    fused, made = makers
    places, pieces = left
    item, get, variant = shape.item, VALUES.get, shape.variant
    while True:
        groups = found.groups()
        exact = variant(groups)  # the item's own lines, when a value is folded
        make = made(exact)
        row = None if make is None else make(groups, line + shift)
        if row is None:
            values = exact.read(groups[1:], get, uncached)
            if values is None:
                places.append(len(rows))
                pieces.append((line, groups[0] + "\n"))
            else:
                row = fused(exact, values, groups[0] + "\n", line + shift)
        rows.append(row)
        line += exact.size
        at = found.end()
        found = item(text, at)
        if found is None:
            return line, at


def _end(text: str, at: int) -> int:
    """Where the item that starts at `at` ends: where the next one starts, or the text ends."""
    found = yamlfast.item_pattern(0).search(text, at)
    return found.start() + 1 if found else len(text)
