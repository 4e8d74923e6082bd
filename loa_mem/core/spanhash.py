"""The fingerprint of one list item's text, shared by every reader of grimoire files.

An entry's hash is BLAKE2b (8 bytes, as a signed 64-bit integer, so SQLite stores it as an
integer) of its lines from its first to its last content line, joined by "\n". The index keeps it
per entry; when a file changed outside loa-mem, an item whose text hashes the same is the same
entry and is not parsed again.

`cut` finds the same items and hashes in a file's bytes, without decoding it or splitting it into
lines: a catch-up hashes every item of a changed file (9 MB for a category of 20,000 entries)
to find the few that changed.
"""

from __future__ import annotations

from bisect import bisect_right

try:  # hashlib's own BLAKE2b, without hashlib: importing it loads OpenSSL (~3 ms)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["blake2b", "cut", "digest", "of_lines", "unusual"]


def digest(text: str) -> int:
    """BLAKE2b (8 bytes) of the UTF-8 text, as a signed big-endian integer."""
    # a copy of a hash made once, and no keywords parsed: ~40% less than making one per text
    found = _EMPTY.copy()
    found.update(text.encode("utf-8", "surrogatepass"))
    value = _from_bytes(found.digest(), "big")
    return value - (value >> 63 << 64)  # as signed


_EMPTY = blake2b(digest_size=8)
_from_bytes = int.from_bytes


def of_lines(lines: list[str], first: int, last: int) -> int:
    """The hash of `lines[first:last + 1]` (0-based, inclusive)."""
    return digest("\n".join(lines[first:last + 1]))


# what a file may hold and still be cut: printable ASCII and "\n" (in a non-ASCII text, any byte
# of a longer character too, whose odd ones `unusual` looks for)
_PLAIN_ASCII = bytes(range(0x20, 0x7f)) + b"\n"
_PLAIN = _PLAIN_ASCII + bytes(range(0x80, 0x100))
# U+2028, U+2029 (line breaks to YAML), U+FFFE, U+FFFF (refused) in UTF-8
_ODD_LONG = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbf\xbe", b"\xef\xbf\xbf")


def unusual(data: bytes, ascii: bool) -> bool:
    """Whether the UTF-8 text `data` (`ascii`: it is ASCII) holds a character the fast readers
    leave to the full parser, which refuses it or reads it another way: a control character
    other than "\n" (a tab, a CR, NUL, ESC, DEL, a C1 control such as U+0086), a line break
    YAML counts besides "\n" (U+0085, U+2028, U+2029) or U+FFFE/U+FFFF. One pass over the
    bytes; a non-ASCII text then a search for each of those longer characters."""
    if data.translate(None, _PLAIN_ASCII if ascii else _PLAIN):
        return True
    if ascii:
        return False
    if b"\xc2" in data:  # U+0080..U+009F: C1 controls, and NEL
        import re  # not at the top: the session-start hook imports this module, but not re

        if re.search(rb"\xc2[\x80-\x9f]", data):
            return True
    return any(other in data for other in _ODD_LONG)
# a line that may not be content: blank, a comment, whitespace to `str.strip` (a non-ASCII or
# control character after the indentation), or the end of the file; the item holding one is
# hashed from its decoded text
_ODD_LINE = rb"\n *(?:[#\n\x1f\x80-\xff]|\Z)"
_BLANK_LINE = rb"\n *\n"


def item_starts(data: bytes, indent: int) -> list[int]:
    """Where each top-level list item (`-` at `indent`, then a space or the line's end) starts
    in `data`, found by its line alone."""
    import re  # not at the top: the session-start hook imports this module, but not re

    lead = b" " * indent + b"-"
    starts = [m.start() + 1 for m in re.finditer(rb"\n" + lead + rb"(?=[ \n]|\Z)", data)]
    if data.startswith(lead) and data[len(lead):len(lead) + 1] in (b" ", b"\n", b""):
        starts.insert(0, 0)
    return starts


def cut(data: bytes, indent: int = 0) -> list[tuple[int, int, int, int]] | None:
    """(first line, start, end, hash) of each top-level item of the UTF-8 text `data` (the bytes
    up to the next item): the items and hashes `yamlfast.cut` and `digest` give for its decoded
    text, whose trailing blank and comment lines are not hashed; None where `yamlfast.cut` gives
    None (not a plain block list)."""
    ascii = data.isascii()
    if unusual(data, ascii):
        return None
    import re  # not at the top: the session-start hook imports this module, but not re

    if (b"\n..." in data or b"\n---" in data) and re.search(rb"\n(?:\.\.\.|---)(?=[ \n]|\Z)",
                                                         data):
        return None  # a document's end or start, as `yamlfast.cut`: the full parser's to read
    starts = item_starts(data, indent)
    head = data[:starts[0]] if starts else data
    if any(line.strip() and not line.lstrip().startswith("#")
           for line in head.decode("utf-8").split("\n")):
        return None
    if not starts:
        return []
    ends = [*starts[1:], len(data)]
    odd = {bisect_right(starts, at) - 1 for at in _odd_lines(data, starts[0], ascii)}
    odd.add(len(starts) - 1)  # the last item may lack its final line break
    view, number, found = memoryview(data), head.count(b"\n"), []
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if index in odd:
            text_hash = digest(_content(data[start:end].decode("utf-8")))
        else:
            text_hash = int.from_bytes(blake2b(view[start:end - 1], digest_size=8).digest(),
                                       "big", signed=True)
        found.append((number, start, end, text_hash))
        number += data.count(b"\n", start, end)
    return found


def _content(chunk: str) -> str:
    """The item's text without its trailing blank and comment lines and final line break."""
    body = chunk[:-1] if chunk.endswith("\n") else chunk
    last = body[body.rfind("\n") + 1:].lstrip(" ")
    if last and last[0] != "#":
        return body
    lines = chunk.split("\n")
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return "\n".join(lines)


def _odd_lines(data: bytes, start: int, ascii: bool) -> list[int]:
    """Where the odd lines (`_ODD_LINE`) after `start` begin (the line break before each). In
    ASCII text a line is odd only when blank or a comment: blank lines are found by a regex
    that skips from line break to line break, and each "#" is looked at, instead of each line."""
    import re

    odd_line = re.compile(_ODD_LINE)
    if not ascii or b"\x1f" in data:
        return [m.start() for m in odd_line.finditer(data, start)]
    found = [m.start() for m in re.compile(_BLANK_LINE).finditer(data, start)]
    at = data.find(b"#", start)
    while at >= 0:
        line = data.rfind(b"\n", start, at)
        if line >= 0 and odd_line.match(data, line):
            found.append(line)
        at = data.find(b"#", at + 1)
    return found
