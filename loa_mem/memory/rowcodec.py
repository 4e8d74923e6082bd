"""How the index stores an entry's data in few bytes, and how it reads it back whole.

Most of an entry is already in the index's columns (id, category, confidence, tags, expiry,
successor) or is the text the full-text index reads (content, summary). Those values are kept
once, in their columns, whenever the column gives back exactly the same value; the row's `data`
holds only the other keys, as JSON (NULL when none are left). The key order, which keys come
from columns, and the key lines (`indexrows.key_text`) are the entry's layout, stored once in
the `layouts` table for all the entries that share it (most entries of a store share a few).

A summary that starts the content (loa-mem derives one as the content's first sentence) is
stored as its length; a `source.timestamp` written as loa-mem writes it (whole seconds, UTC)
is read back from the creation time column.

Standard library only: the session-start hook reads memories through `unpack`.
"""

from __future__ import annotations

import contextlib
import json
import math
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The version of the index's layout: `indexrows`' tables and this module's rows. An index of
# another version is built again. Here, not in `indexrows`: recall's fast path checks it and
# must not import the fast reader that `indexrows` brings.
SCHEMA_VERSION = "14"


def _c_encoder() -> Any:
    try:
        from _json import encode_basestring_ascii, make_encoder
    except ImportError:  # pragma: no cover - a Python built without _json
        return None
    return make_encoder({}, str, encode_basestring_ascii, None, ":", ",", False, False, True)


_slow_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode
_encoders = [_c_encoder()]


def encode(value: Any) -> str:
    """`json.JSONEncoder(separators=(",", ":"), default=str).encode(value)`, with one C
    encoder for every call (that method makes one per call, ~70% of its cost here)."""
    encoder = _encoders[0]
    if encoder is None:  # pragma: no cover - a Python built without _json
        return _slow_encode(value)
    try:
        return "".join(encoder(value, 0))
    except BaseException:
        _encoders[0] = _c_encoder()  # its record of the containers being encoded may be left
        raise


_encode = encode

# The keys a column can hold; their position is the column's in `COLUMNS`' values.
TAKEN = ("id", "category", "confidence", "tags", "expires_at", "superseded_by", "content",
         "summary")


def columns(table: str) -> str:
    """The SQL of what `unpack` reads, for the entries table (or alias) `table`."""
    return (f"(SELECT keys FROM layouts WHERE layouts.layout = {table}.layout), {table}.id, "
            f"{table}.category, {table}.confidence, {table}.created_ts, {table}.tags, "
            f"{table}.expires_at, {table}.superseded_by, {table}.content, {table}.summary, "
            f"{table}.data")


def _exact(key: str, value: Any) -> bool:
    """Whether the column of `key` (as `indexrows` fills it) gives back `value` itself."""
    if key in ("id", "category", "content", "summary"):
        return isinstance(value, str)
    if key == "confidence":  # REAL: a finite float, not -0.0 (stored as 0)
        return type(value) is float and math.isfinite(value) and (
            value != 0.0 or math.copysign(1.0, value) > 0)
    if key == "tags":  # " a b ": words without spaces
        if not isinstance(value, list):
            return False
        try:
            joined = " ".join(value)
        except TypeError:  # not all texts
            return False
        return joined.split() == value
    # expires_at, superseded_by: the text, or NULL for null
    return value is None or (isinstance(value, str) and value != "")


def text_column(value: Any) -> str | None:
    """What the content column holds (the full-text index reads it): the text itself."""
    if value is None or isinstance(value, str):
        return value
    return _encode(value)


def summary_column(summary: Any, content: Any) -> str | int | None:
    """The summary's text, or its length when the content starts with it."""
    if isinstance(summary, str) and summary and isinstance(content, str) \
            and content.startswith(summary) and "\0" not in summary:  # SQL's substr stops at NUL
        return len(summary)
    return text_column(summary)


_stamps: dict[float, str | None] = {}


def stamp(created_ts: float | None) -> str | None:
    """A creation time as loa-mem writes `source.timestamp`; None when it has no such form."""
    if created_ts is None:
        return None
    found = _stamps.get(created_ts, "")
    if found == "":
        found = None
        if math.isfinite(created_ts) and created_ts == int(created_ts):
            with contextlib.suppress(OverflowError, OSError, ValueError):
                found = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(created_ts)))
        if len(_stamps) < 4096:
            _stamps[created_ts] = found
    return found


# per tuple of keys: whether all are text, and the (position, key) of those a column may hold
_shapes: dict[tuple[Any, ...], tuple[bool, list[tuple[int, str]]]] = {}
# per tuple of `source` keys: the position of "timestamp" when all keys are text
_source_shapes: dict[tuple[Any, ...], int | None] = {}
_layout_texts: dict[tuple[Any, ...], str] = {}


def _shape(keys: tuple[Any, ...]) -> tuple[bool, list[tuple[int, str]]]:
    found = _shapes.get(keys)
    if found is None:
        found = (all(isinstance(key, str) for key in keys),
                 [(i, key) for i, key in enumerate(keys) if key in TAKEN])
        if len(_shapes) < 1024:
            _shapes[keys] = found
    return found


def _stamp_at(source: Any, created_ts: float | None) -> int | None:
    """The position of `source.timestamp` when the creation time column gives it back."""
    if type(source) is not dict or source.get("timestamp") != stamp(created_ts) \
            or stamp(created_ts) is None:
        return None
    keys = tuple(source)
    if keys not in _source_shapes:
        at = keys.index("timestamp") if all(isinstance(k, str) for k in keys) else None
        if len(_source_shapes) >= 1024:
            return at
        _source_shapes[keys] = at
    return _source_shapes[keys]


def pack(data: dict[str, Any], key_lines: str, created_ts: float | None
         ) -> tuple[str, str | None]:
    """(layout, data left over as JSON or None) of an entry's `data`, created at
    `created_ts` (its `source.timestamp` as a time)."""
    keys = tuple(data)
    found = _shapes.get(keys)
    text_keys, candidates = found if found is not None else _shape(keys)
    if not text_keys:
        data = json.loads(_encode(data))  # the keys JSON gives back
        keys = tuple(data)
        candidates = _shape(keys)[1]
    rest = dict(data)
    taken = []
    for i, key in candidates:  # `_exact`, without a call per key (a cold build packs each entry)
        value = data[key]
        if key in _TEXTS:
            exact = isinstance(value, str)
        elif key == "confidence":
            exact = type(value) is float and _finite(value) and (
                value != 0.0 or _copysign(1.0, value) > 0)
        elif key == "tags":
            exact = _exact(key, value)
        else:
            exact = value is None or (isinstance(value, str) and value != "")
        if exact:
            taken.append(i)
            del rest[key]
    source: Any = rest.get("source")
    at = _stamp_at(source, created_ts) if type(source) is dict and "timestamp" in source else None
    if at is not None:
        rest["source"] = {k: v for k, v in source.items() if k != "timestamp"}
    shape = (keys, tuple(taken), key_lines, at)
    layout_text = _layout_texts.get(shape)
    if layout_text is None:
        layout_text = _encode([keys, taken, key_lines, at])
        if len(_layout_texts) < 1024:
            _layout_texts[shape] = layout_text
    return layout_text, _encode(rest) if rest else None


_TEXTS = frozenset(("id", "category", "content", "summary"))
_finite = math.isfinite
_copysign = math.copysign


_layouts: dict[str, tuple[list[str], set[int], str, int | None]] = {}


def layout(text: str) -> tuple[list[str], set[int], str, int | None]:
    """(keys in order, positions of the keys held in columns, key lines, position of the
    timestamp in `source` when the creation time holds it) of a layout."""
    found = _layouts.get(text)
    if found is None:
        keys, taken, key_lines, at = json.loads(text)
        found = (keys, set(taken), key_lines, at)
        if len(_layouts) < 4096:
            _layouts[text] = found
    return found


def unpack(layout_text: str, memory_id: str, category: str, confidence: float | None,
           created_ts: float | None, tags: str | None, expires_at: str | None,
           superseded_by: str | None, content: str | None, summary: str | int | None,
           data: str | None) -> dict[str, Any]:
    """The entry's data as the grimoire file holds it, from the values `columns` selects."""
    keys, taken, _, at = layout(text=layout_text)
    rest = json.loads(data) if data else {}
    if at is not None:
        items = list(rest["source"].items())
        items.insert(at, ("timestamp", stamp(created_ts)))
        rest["source"] = dict(items)
    found: dict[str, Any] = {}
    for position, key in enumerate(keys):
        if position not in taken:
            found[key] = rest[key]
        elif key == "tags":
            found[key] = (tags or "").split()
        elif key == "summary":
            found[key] = (content or "")[:summary] if isinstance(summary, int) else summary
        else:
            found[key] = {"id": memory_id, "category": category, "confidence": confidence,
                          "expires_at": expires_at, "superseded_by": superseded_by,
                          "content": content}[key]
    return found


def unpack_text(values: Any) -> str:
    """`unpack` as JSON text (what the ranking's rows carry)."""
    return _encode(unpack(*values))
