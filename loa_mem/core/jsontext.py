"""JSON text of plain records without importing `json`, for the lines the session-start hook
writes (the personal access log records every session start).

`json` imports `re`, and with it enum, functools and collections: about 10 ms of the hook's
50 ms budget, to write one short line. `dumps` gives exactly what
`json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)` gives; anything beyond
strings, numbers, booleans, None, lists and dicts with string keys (a tuple, a date, a float
that is not finite...) is handed to `json` itself, so the text is the same in every case.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What JSON requires escaped in a string (as json.encoder's ESCAPE_DCT, ensure_ascii=False)
_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x20)}
_ESCAPES.update({ord("\\"): "\\\\", ord('"'): '\\"', ord("\b"): "\\b", ord("\f"): "\\f",
                 ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


class _NotPlain(Exception):
    """A value `dumps` leaves to `json`."""


def dumps(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)`."""
    try:
        return _text(value)
    except _NotPlain:
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _text(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return f'"{value.translate(_ESCAPES)}"'
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value - value == 0:  # finite: what json writes for it
        return float.__repr__(value)
    if kind is list:
        return "[" + ", ".join(map(_text, value)) + "]"
    if kind is dict and all(type(key) is str for key in value):
        return "{" + ", ".join(f"{_text(key)}: {_text(value[key])}"
                               for key in sorted(value)) + "}"
    raise _NotPlain
