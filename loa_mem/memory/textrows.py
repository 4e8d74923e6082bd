"""Index rows made from the texts of an item's values, where its layout's pattern found them in a
part of a file (`yamlparts`): a cold build's hottest path.

`fastrows._Plan.columns` makes a row from an item's values, each one read first by the fast
reader's rules (`yamlscalars.cached`) and then checked against what its column gives back. Here
each column has its own reader of a value's text: a text (id, category, content, summary) is
told by the few tests of `yamlscalars.prose`; a confidence, an expiry or a successor is read
once per distinct text; tags written as loa-mem writes them (`[a, b-c]`) are the column's words
as they stand; a time written as loa-mem writes it is the sum of the times of its day, its minute
and its second (`clock.written_epoch`, remembered); the row's JSON is made once per distinct
texts of its values (sessions, ttls repeat). When a text is in a form no reader here is sure of,
the item goes the plan's way (`row` gives None): both ways give the same row (a property test
holds them to it).
"""

from __future__ import annotations

import math
import re

from loa_mem.core import spanhash
from loa_mem.core.clock import written_epoch
from loa_mem.core.yamlscalars import WORDS, Unsure, cached
from loa_mem.memory.rules import normalize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_digest = spanhash.digest
_isfinite = math.isfinite
_copysign = math.copysign
_NO: Any = object()


class TextRows:
    """The rows of the items of one layout in the file `path`, from their pattern's groups."""

    __slots__ = ("archived", "at", "layout", "path", "plan", "raw", "raw_json", "size")

    def __init__(self, plan: Any, path: str, archived: int) -> None:
        self.plan = plan  # a `fastrows._Plan`: where the values go, the layout, the JSON
        self.at = plan.groups
        self.layout, self.size, self.raw, self.raw_json = (plan.layout, plan.size, plan.raw,
                                                           plan.raw_json)
        self.path = path
        self.archived = archived

    def row(self, groups: tuple[str, ...], line: int) -> tuple[Any, ...] | None:
        """The row of an item (its first line `line`, 0-based) from its pattern's `groups`
        (its text, then its values' texts); None when a value is not of the form the plan
        expects or not in a form read here."""
        at_id, at_category, at_content, at_summary, at_confidence, at_tags, at_expires, \
            at_superseded, at_stamp = self.at
        ident, category, content = (_text(groups[at_id]), _short(groups[at_category]),
                                    _text(groups[at_content]))
        if ident is None or category is None or content is None:
            return None
        summary: Any = None
        if at_summary:
            summary = _text(groups[at_summary])
            if summary is None:
                return None
            if summary and content.startswith(summary) and "\0" not in summary:
                summary = len(summary)  # `rowcodec.summary_column`
        confidence = _confidence(groups[at_confidence]) if at_confidence else None
        tags = _tag_text(groups[at_tags]) if at_tags else "  "
        expires = _nullable(groups[at_expires]) if at_expires else None
        superseded = _nullable(groups[at_superseded]) if at_superseded else None
        created = _written(groups[at_stamp]) if at_stamp else None
        if (confidence is None and at_confidence) or tags is None or expires is _NO or \
                superseded is _NO or (created is None and at_stamp):
            return None
        rest = self.plan.fixed  # JSON of no values of the item's own, if any
        if self.raw is not None:
            texts = self.raw(groups)
            rest = self.raw_json.get(texts, _NO)
            if rest is _NO:
                rest = self._json(groups)
                if rest is _NO:
                    return None
                if len(self.raw_json) >= 4096:
                    self.raw_json.clear()
                self.raw_json[texts] = rest
        return (ident, self.path, self.archived, self.archived, category, confidence, created,
                expires, superseded, _digest(normalize(content)), tags, None, line + 1,
                line + self.size, self.layout, _digest(groups[0]), content, summary, rest)

    def _json(self, groups: tuple[str, ...]) -> Any:
        """The row's JSON from the texts of its values (`_NO` when one is not read)."""
        values: list[Any] = [None] * len(groups)
        try:
            for i in self.plan.flat:
                values[i] = cached(groups[i + 1])
        except Unsure:
            return _NO
        return self.plan.json(values)


def exact_float(value: Any) -> bool:
    """A confidence its REAL column gives back (as `rowcodec.pack` tells)."""
    return type(value) is float and _isfinite(value) and (value != 0.0
                                                          or _copysign(1.0, value) > 0)


def text_or_none(value: Any) -> bool:
    """An expiry or a successor its column gives back."""
    return value is None or (type(value) is str and value != "")


def tag_column(value: Any) -> str | None:
    """The tags column of a list of words its text gives back; None for anything else."""
    if type(value) is not list or not all(type(tag) is str for tag in value):
        return None
    joined = " ".join(value)
    return f" {joined} " if joined.split() == value else None


def _text(text: str) -> str | None:
    """The value of a scalar when it is a text (`yamlscalars.prose`, told inline for prose);
    None for any other value, or a text the fast reader does not read."""
    if text[:1].isalpha() and text[0].isascii() and text[-1] != " " and ":" not in text \
            and "#" not in text and "\t" not in text and "\n" not in text:
        return None if text in WORDS else text
    try:
        value = cached(text)
    except Unsure:
        return None
    return value if type(value) is str else None


_shorts: dict[str, str | None] = {}


def _short(text: str) -> str | None:
    """`_text` of a text that repeats (a category), remembered."""
    found = _shorts.get(text, _NO)
    if found is _NO:
        found = _text(text)
        if len(text) < 64:
            _keep(_shorts, text, found)
    return found  # type: ignore[no-any-return]


_confidences: dict[str, float | None] = {}


def _confidence(text: str) -> float | None:
    """A confidence its REAL column gives back (`exact_float`), or None."""
    found = _confidences.get(text, _NO)
    if found is _NO:
        try:
            value = cached(text)
        except Unsure:
            return None
        found = value if exact_float(value) else None
        _keep(_confidences, text, found)
    return found  # type: ignore[no-any-return]


# tags as loa-mem writes them, each word one that reads as itself: not one of `WORDS`
_TAG = "(?!(?:{})[,\\]])[a-z][a-z0-9-]*".format("|".join(
    re.escape(word) for word in WORDS if word.islower()))
_TAG_WORDS = re.compile(rf"\[{_TAG}(?:, {_TAG})*\]").fullmatch
_tag_columns: dict[str, str | None] = {}


def _tag_text(text: str) -> str | None:
    """The tags column of a flow list its text gives back (`tag_column`), or None."""
    if _TAG_WORDS(text) is not None:
        return f" {text[1:-1].replace(', ', ' ')} "
    found = _tag_columns.get(text, _NO)
    if found is _NO:
        try:
            found = tag_column(cached(text))
        except Unsure:
            return None
        _keep(_tag_columns, text, found)
    return found  # type: ignore[no-any-return]


_nullables: dict[str, str | None] = {}


def _nullable(text: str) -> Any:
    """An expiry's or successor's column: a text that is not empty, None for null; `_NO` for
    anything else."""
    found = _nullables.get(text, _NO)
    if found is _NO:
        try:
            value = cached(text)
        except Unsure:
            return _NO
        found = value if text_or_none(value) else _NO
        _keep(_nullables, text, found)
    return found


_days: dict[str, float] = {}  # "2026-02-01T": the Unix time of its midnight
_minutes: dict[str, float] = {}  # "10:30:": seconds from midnight to that minute
_SECONDS = {f"{second:02d}Z": float(second) for second in range(60)}


def _written(text: str) -> float | None:
    """`clock.written_epoch(text)` as the sum of the times of its day, its minute and its
    second (the first two remembered when met: a store's entries were written on a few days)."""
    day, minute, second = (_days.get(text[:11]), _minutes.get(text[11:17]),
                           _SECONDS.get(text[17:]))
    if day is not None and minute is not None and second is not None:
        return day + minute + second
    found = written_epoch(text)
    if found is not None:
        day = written_epoch(text[:11] + "00:00:00Z")
        if day is not None and len(_days) < 16384:
            _days[text[:11]] = day
        if day is not None:  # at most 1,440
            _minutes[text[11:17]] = found - day - _SECONDS[text[17:]]
    return found


def _keep(cache: dict[str, Any], text: str, value: Any) -> None:
    if len(cache) >= 4096:  # full of texts met once: start again
        cache.clear()
    cache[text] = value
