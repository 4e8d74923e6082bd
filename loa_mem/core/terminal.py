"""Text made safe for a terminal. Light (only `re`): the session-start hook imports it."""

from __future__ import annotations

import re

# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts escape
# sequences that recolour, retitle or rewrite the screen; BEL rings), the line and paragraph
# separators, and the bidirectional overrides that make text read differently than it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, one_line: bool = False) -> str:
    """`text` safe to print on a terminal: each control character shown as an escape
    (`\\x1b`), so stored text can neither drive the terminal nor hide what it says; with
    `one_line`, newlines and tabs too. Only human output is escaped: JSON stays exact."""
    pattern = _UNSAFE_IN_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text) if pattern.search(text) else text
