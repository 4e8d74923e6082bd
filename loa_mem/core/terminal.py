"""Text made safe for a terminal. Light (no imports at all, not even `re`): the session-start
hook imports it."""

from __future__ import annotations

# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts escape
# sequences that recolour, retitle or rewrite the screen; BEL rings), the line and paragraph
# separators, and the bidirectional overrides that make text read differently than it is.
_SEPARATORS_AND_OVERRIDES = [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_UNSAFE_CODES = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
                 *_SEPARATORS_AND_OVERRIDES]


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# str.translate tables: one pass in C over the text, where a regex would cost the hook `re`
_UNSAFE = {code: _escape(code) for code in _UNSAFE_CODES}
_UNSAFE_IN_LINE = {**_UNSAFE, 0x09: "\\x09", 0x0A: "\\x0a"}


def printable(text: str, one_line: bool = False) -> str:
    """`text` safe to print on a terminal: each control character shown as an escape
    (`\\x1b`), so stored text can neither drive the terminal nor hide what it says; with
    `one_line`, newlines and tabs too. Only human output is escaped: JSON stays exact."""
    return text.translate(_UNSAFE_IN_LINE if one_line else _UNSAFE)
