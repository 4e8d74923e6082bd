"""Index rows made straight from the values of items of a known layout: a cold build's hot path.

`indexrows._columns` makes an entry's row from its data through `rowcodec.pack`: general, and
half of what a cold build spends per entry. An item of a layout the fast reader has met before
(`yamlshapes.Shape`) comes as its values, in the order of its lines. For a layout of the keys
loa-mem writes (id, category, content and the rest as scalars, `source` as a mapping with its
`timestamp`), a `_Plan` knows once where each column's value is, the layout's `layouts` text
and which keys go to the row's JSON; each item then only has its values checked and placed.
Whenever a value is not of the form the plan expects (a confidence that is not a float, a time
not written as loa-mem writes it, tags with odd words, a key with its own column rules such as
`effectiveness`), the item goes through `_columns` as before: both ways give the same row (a
property test holds them to it).
"""

from __future__ import annotations

from operator import itemgetter

from loa_mem.core import spanhash, yamlparts
from loa_mem.core.clock import written_epoch as _written_epoch
from loa_mem.core.yamlshapes import Shape
from loa_mem.memory import rowcodec
from loa_mem.memory.indexrows import FileRows, Prepared, Span, _columns, _epoch, file_rows
from loa_mem.memory.rules import normalize
from loa_mem.memory.textrows import TextRows, exact_float, tag_column, text_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from loa_mem.core.located import ListFile
    from loa_mem.core.yamlfast import Spans

    # a row from an item's pattern groups and first line (`textrows.TextRows.row`)
    ByText = Callable[[tuple[str, ...], int], Prepared | None]

# keys whose columns the plan does not fill itself: their items go through `_columns`
_OWN_RULES = frozenset(("effectiveness", "archived"))
_digest = spanhash.digest


class _Plan:
    """Where the values of one layout go (see the module's docstring)."""

    __slots__ = ("confidence", "expires", "fixed", "flat", "groups", "layout", "raw", "raw_json",
                 "rest", "size", "source", "stamp", "summary", "superseded", "tags", "texts",
                 "texts_json")

    def __init__(self, shape: Shape, at: dict[str, int], source: tuple[int, tuple[str, ...]]
                 | None) -> None:
        self.texts = (at["id"], at["category"], at["content"])
        self.summary = at.get("summary")
        self.confidence = at.get("confidence")
        self.tags = at.get("tags")
        self.expires = at.get("expires_at")
        self.superseded = at.get("superseded_by")
        self.source = source
        stamp = None if source is None else source[1].index("timestamp")
        self.stamp = None if source is None else source[0] + (stamp or 0)
        taken = [i for i, name in enumerate(shape.names) if name in rowcodec.TAKEN]
        key_lines = ",".join(map(str, shape.offsets.values()))
        self.layout = rowcodec.encode([shape.names, taken, key_lines, stamp])
        # the keys of the row's JSON: (key, its value's position) or, for `source`, (key,
        # [(key, position)] of its keys but the timestamp)
        self.rest: list[tuple[str, Any]] = []
        for name in shape.names:
            if name == "source" and source is not None:
                self.rest.append((name, [(key, source[0] + n) for n, key in enumerate(source[1])
                                         if key != "timestamp"]))
            elif name not in rowcodec.TAKEN:
                self.rest.append((name, at[name]))
        self.flat = [i for _, at in self.rest for i in (
            [i for _, i in at] if isinstance(at, list) else [at])]
        self.texts_json: dict[tuple[Any, ...], str] = {}
        self.size = shape.size
        # for `textrows`: where each column's value is among a pattern's groups (0: none), the
        # texts of the JSON's values there, and the JSON of the texts met
        self.groups = tuple(0 if at is None else at + 1 for at in (
            *self.texts, self.summary, self.confidence, self.tags, self.expires,
            self.superseded, self.stamp))
        self.raw = itemgetter(*(i + 1 for i in self.flat)) if self.flat else None
        self.raw_json: dict[Any, str | None] = {}
        self.fixed = self.json([]) if self.rest and not self.flat else None  # {"source": {}}

    def columns(self, values: list[Any]) -> tuple[Any, ...] | None:
        """(id, category, confidence, created, expires_at, superseded_by, normalized hash,
        tags, content, summary, JSON) of an item's `values`, or None when one of them is not
        of the form the plan expects."""
        at_id, at_category, at_content = self.texts
        ident, category, content = values[at_id], values[at_category], values[at_content]
        if type(ident) is not str or type(category) is not str or type(content) is not str:
            return None
        # a key the layout has must hold what its column gives back (null does not)
        summary = None if self.summary is None else values[self.summary]
        confidence = None if self.confidence is None else values[self.confidence]
        if (self.summary is not None and type(summary) is not str) or (
                self.confidence is not None and not exact_float(confidence)):
            return None
        tags = tag_column(values[self.tags]) if self.tags is not None else "  "
        expires = None if self.expires is None else values[self.expires]
        superseded = None if self.superseded is None else values[self.superseded]
        if tags is None or not (text_or_none(expires) and text_or_none(superseded)):
            return None
        created = None
        if self.stamp is not None:
            # a time in the form loa-mem writes gives that text back by construction
            created = _written_epoch(values[self.stamp])
            if created is None:
                created = _epoch(values[self.stamp])
                if created is None or rowcodec.stamp(created) != values[self.stamp]:
                    return None
        return (ident, category, confidence, created, expires, superseded,
                _digest(normalize(content)), tags, content,
                rowcodec.summary_column(summary, content), self._rest(values))

    def _rest(self, values: list[Any]) -> str | None:
        if not self.rest:
            return None
        # most items repeat a few such values (a session, a ttl): their JSON is kept, for
        # texts and nulls only (1, 1.0 and True are one key of a dict)
        known = tuple(values[i] for i in self.flat)
        if all(type(v) is str or v is None for v in known):
            found = self.texts_json.get(known)
            if found is None:
                found = self.json(values)
                if len(self.texts_json) >= 4096:
                    self.texts_json.clear()
                self.texts_json[known] = found
            return found
        return self.json(values)

    def json(self, values: list[Any]) -> str:
        return rowcodec.encode({
            name: {key: values[i] for key, i in at} if isinstance(at, list) else values[at]
            for name, at in self.rest})


def _plan(shape: Shape) -> _Plan | None:
    """The plan of a layout, or None for a layout whose items all go through `_columns`."""
    at: dict[str, int] = {}
    source = None
    for name, first, keys in shape.slots:
        if name in _OWN_RULES or (keys is not None and name != "source"):
            return None
        if keys is not None:
            if "timestamp" not in keys:
                return None
            source = (first, keys)
        else:
            at[name] = first
    if not {"id", "category", "content"} <= at.keys():
        return None
    return _Plan(shape, at, source)


_plans: dict[Shape, _Plan | None] = {}


def _plan_of(shape: Shape) -> _Plan | None:
    if shape in _plans:
        return _plans[shape]
    if len(_plans) >= 256:
        _plans.clear()
    plan = _plans[shape] = _plan(shape)
    return plan


def fused_rows(path: str, in_archive: bool
               ) -> tuple[Callable[[Shape, list[Any], str, int], Prepared],
                          Callable[[Span], Prepared], Callable[[Shape], ByText | None]]:
    """The three makers of rows `yamlparts.load_part_rows` takes, for the file `path`: a
    plan's from the values of an item, `indexrows._columns` for every item the plans do not
    take, and a plan's from the texts of the values (`textrows.TextRows`), given a layout."""
    archived = int(in_archive)

    def other(span: Span) -> Prepared:
        return _columns(span[0], path, in_archive, *span[1:])

    def fused(shape: Shape, values: list[Any], chunk: str, line: int) -> Prepared:
        plan = _plan_of(shape)
        found = None if plan is None else plan.columns(values)
        if plan is None or found is None:
            return other(shape.spanned(values, chunk, line))
        (ident, category, confidence, created, expires, superseded, norm, tags, content,
         summary, rest) = found
        return (ident, path, archived, archived, category, confidence, created, expires,
                superseded, norm, tags, None, line + 1, line + shape.size, plan.layout,
                _digest(chunk[:-1]), content, summary, rest)

    by_text: dict[Shape, ByText | None] = {}

    def made(shape: Shape) -> ByText | None:
        if shape not in by_text:
            plan = _plan_of(shape)
            by_text[shape] = None if plan is None else TextRows(plan, path, archived).row
        return by_text[shape]

    return fused, other, made


class Preparer:
    """`file_rows` for the grimoire files of a build (`archived`: those in the archive), and
    the rows of a part of a file read straight from the values of its items (`part_rows`)."""

    def __init__(self, archived: frozenset[str]) -> None:
        self.archived = archived

    def __call__(self, path: str, parsed: ListFile | Spans) -> FileRows:
        return file_rows(self.archived, path, parsed)

    def part_rows(self, path: str, text: str, shift: int) -> FileRows | None:
        """The rows of a part of a file (`yamlfast.load_part`'s items `shift` lines into the
        file), the same as `file_rows` of that part gives; None when the part cannot be read
        apart from the rest."""
        fused, other, made = fused_rows(path, path in self.archived)
        rows = yamlparts.load_part_rows(text, path, shift, fused, other, made)
        return None if rows is None else FileRows(0, False, rows)
