"""A fast writer for the entries loa-mem appends, with the same text as `yamlio.dump_item`.

`remember` appends one new entry: plain words, numbers, a timestamp, a short list of tags.
Importing PyYAML to write that costs more than the rest of the append, so this module writes
the block list item itself when every value is of a form whose YAML text is certain (a one-line
text of printable characters, plain when it reads back as itself and single-quoted when YAML
could not read it plain, folded where PyYAML folds; a finite float; null; a flow list of short
plain words; a mapping of such values) and answers None for anything else (line breaks, tabs,
long lists, a text it cannot tell), which `yamlio.dump_item` writes instead. A property test
holds the two to the same text.
"""

from __future__ import annotations

import math
import re
from typing import Any

from loa_mem.core.yamlscalars import FLOAT, INT

WIDTH = 100  # yamlio's dump width: a plain scalar is folded at the first single space past it
_FLOW_LIMIT = 80  # yamlio writes a list in flow style when its items take less than this
_STEP = 2
_WORDS = frozenset(("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false",
                    "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null",
                    "NULL"))
# inside a block plain scalar: no ": " (or a colon last), no " #", nothing YAML escapes
_BLOCK_BODY = re.compile(r"(?:[ !\"$-9;-~]|[^\x00-\x7f]|:(?=[^ ])|(?<! )#)*")
_FLOW_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dump_item(data: dict[str, Any], indent: int = 0) -> str | None:
    """`data` as a block list item at `indent`, as `yamlio.dump_item` writes it, or None."""
    lines: list[str] = []
    if not _mapping(data, 2, lines):
        return None
    text = "- " + "\n".join(lines)[2:] + "\n"
    if indent <= 0:
        return text
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def _mapping(data: dict[str, Any], column: int, lines: list[str]) -> bool:
    if not data:
        return False
    for key, value in data.items():
        if not (isinstance(key, str) and _KEY.fullmatch(key) and key not in _WORDS):
            return False
        head = f"{' ' * column}{key}:"
        if isinstance(value, dict):
            lines.append(head)
            if not _mapping(value, column + _STEP, lines):
                return False
            continue
        text = _flow_list(value, len(head) + 1) if isinstance(value, list) else _scalar(
            value, len(head), column + _STEP)
        if text is None:
            return False
        lines.append(f"{head} {text}")
    return True


def _scalar(value: Any, column: int, indent: int) -> str | None:
    """`value` written after a key that ends at `column` (continuation lines at `indent`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value).lower()
        return text if math.isfinite(value) and "." in text and "e" not in text else None
    if not isinstance(value, str) or not value or not all(
            " " <= c <= "~" or (not c.isascii() and _printable(c)) for c in value):
        return None
    if _plain(value) and _BLOCK_BODY.fullmatch(value[1:]):
        return _folded(value, column + 1, indent)
    if _never_plain(value):
        return _single_quoted(value, column + 1, indent)
    return None


def _plain(text: str) -> bool:
    """Whether `text` starts as a plain scalar may, holds only characters written as they are,
    and reads back as this string."""
    if not text or text[-1] == " " or not text[0].isalnum():
        return False
    if any(not c.isascii() and not _printable(c) for c in text):
        return False
    if text[0].isascii() and text[0].isdigit():
        return not (INT.match(text) or FLOAT.match(text))
    return text not in _WORDS


def _never_plain(text: str) -> bool:
    """Whether PyYAML certainly quotes `text` (a one-line text of printable characters): an
    indicator first, a space at either end, `: ` or ` #` inside, a colon last, or a word that
    would read as another type."""
    return (text[0] in "#,[]{}&*!|>'\"%@`" or text[0] == " " or text[-1] in " :"
            or ": " in text or " #" in text or text in _WORDS
            or (text[0].isdigit() and bool(INT.match(text) or FLOAT.match(text))))


def _printable(char: str) -> bool:
    """A character other than ASCII that libyaml writes as it is (allow_unicode) and that is
    neither a line break nor a byte order mark to YAML. libyaml escapes every character past
    U+FFFF (an emoji is written as "\U0001F600", in double quotes)."""
    code = ord(char)
    return (0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD) and (
        code not in (0x2028, 0x2029, 0xFEFF))


def _folded(text: str, column: int, indent: int) -> str:
    """A plain scalar as PyYAML writes it: a single space past the width becomes a line break
    and the continuation line's indentation."""
    out = []
    spaces = False
    for position, char in enumerate(text):
        if char == " ":
            if not spaces and column > WIDTH and text[position + 1] != " ":
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(char)
                column += 1
            spaces = True
            continue
        out.append(char)
        column += 1
        spaces = False
    return "".join(out)


def _single_quoted(text: str, column: int, indent: int) -> str:
    """A single-quoted scalar as PyYAML writes it: quotes doubled, a single space past the
    width (neither first nor last) becomes a line break and the continuation's indentation."""
    out = ["'"]
    column += 1
    spaces = False
    last = len(text) - 1
    for position, char in enumerate(text):
        if char == " ":
            if (not spaces and column > WIDTH and 0 < position < last
                    and text[position + 1] != " "):
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(char)
                column += 1
            spaces = True
            continue
        out.append("''" if char == "'" else char)
        column += 2 if char == "'" else 1
        spaces = False
    out.append("'")
    return "".join(out)


def _flow_list(values: list[Any], column: int) -> str | None:
    """A short list of plain words as `[a, b]` (yamlio writes longer ones as a block)."""
    if sum(len(str(v)) + 2 for v in values) >= _FLOW_LIMIT:
        return None
    for value in values:
        if not (isinstance(value, str) and _FLOW_WORD.fullmatch(value) and _plain(value)):
            return None
    text = "[" + ", ".join(values) + "]"
    return text if column + len(text) <= WIDTH else None
