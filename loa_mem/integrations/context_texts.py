"""The side cache's record of each grimoire file's text (`texts` in `context_sources`):
[mtime_ns, size, CRC-32, line breaks, list indent] of the text the index held the file's rows
for when the side cache was written, and so the text its memo and fingerprints describe. The
session start after a pull (`context_pulled`) checks a changed file's beginning against it and
reads only what follows.

CRC-32 (`zlib`), not BLAKE2b: the start after a pull hashes the whole recorded text of the
changed file (9 MB for a category of 20,000 entries), 3.5 ms against 15, and the record only
vouches for a derived cache. Standard library only: the hook imports this module.
"""

from __future__ import annotations

import os
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from loa_mem.memory.index import Index


def text_record(top: str, path: str, signature: list[int] | tuple[int, int] | None,
                indent: int, lines: int | None = None) -> list[int] | None:
    """The `texts` record of the grimoire file `path` as it is with `signature` (the one the
    index holds its rows for): [mtime_ns, size, CRC-32, lines, indent]; None when the
    file no longer has that signature or its list is not at the margin (the fast reader reads
    a part of a file only there). `lines`: its line breaks, when known (else counted)."""
    if signature is None or indent != 0:
        return None
    read = scan(os.path.join(top, path), None, count=lines is None)
    if read is None or read.signature != list(signature):
        return None
    return [*read.signature, read.crc, read.lines if lines is None else lines, indent]


def text_records(top: str, previous: Any, signatures: dict[str, Any], index: Index
                 ) -> dict[str, list[int]]:
    """The `texts` records of the grimoire files `signatures` (path -> signature now): each
    previous record that still describes its file, else a new one when `index` holds the
    file's rows for that signature."""
    from loa_mem.memory import reread

    known = previous if isinstance(previous, dict) else {}
    found = {}
    for path, signature in signatures.items():
        record = known.get(path)
        if signature is not None and record is not None and record[:2] == list(signature):
            found[path] = record
            continue
        held = index.signature(path)
        indent, flow = index.layout(path)
        if held is not None and signature is not None and list(held) == list(signature) and (
                not flow):
            record = text_record(top, path, signature, indent,
                                 reread.recorded_lines(index, path))
            if record is not None:
                found[path] = record
    return found


class Scan:
    """What `scan` read of a file."""

    __slots__ = ("crc", "last", "lines", "marked", "signature", "tail")

    def __init__(self, signature: list[int], crc: int, lines: int, last: int,
                 tail: bytes, marked: bool = False) -> None:
        self.signature, self.crc, self.lines, self.last, self.tail = (signature, crc, lines,
                                                                       last, tail)
        # whether a document marker (`...`, `---`) may follow the first bytes' last item:
        # entries appended after `...` start a second document (the file does not parse)
        self.marked = marked


_CHUNK = 1 << 18


def scan(full: str, size: int | None, count: bool = False) -> Scan | None:
    """The file's signature, the CRC-32 of its first `size` bytes (all of them: None), their
    lines (counted only when `count`), their last byte, and the bytes after them; None when it is
    shorter or changed while it was read. The first bytes are read in chunks into one buffer:
    reading 9 MB whole into new memory took twice as long as hashing them."""
    with open(full, "rb", buffering=0) as handle:
        before = os.fstat(handle.fileno())
        end = before.st_size if size is None else size
        if end > before.st_size:
            return None
        crc = lines = last = read = 0
        buffer = bytearray(min(_CHUNK, end))
        with memoryview(buffer) as view:
            left = end
            while left:
                read = handle.readinto(view[:min(len(buffer), left)])
                if not read:
                    return None
                crc, last, left = zlib.crc32(view[:read], crc), buffer[read - 1], left - read
                if count:
                    lines += buffer.count(b"\n", 0, read)
        tail = handle.read() if size is not None else b""
        marked = size is not None and _marked(buffer, read, end)
    after = os.stat(full)
    signature = [before.st_mtime_ns, before.st_size]
    if signature != [after.st_mtime_ns, after.st_size] or end + len(tail) != before.st_size:
        return None
    return Scan(signature, crc, lines, last, tail, marked)


def _marked(buffer: bytearray, read: int, end: int) -> bool:
    """`Scan.marked` of a text whose last `read` bytes are in `buffer` (`end` bytes in all):
    a line that starts with `...` or `---` after its last item, or an item too far back to
    tell."""
    at = buffer.rfind(b"\n-", 0, read)
    if at < 0 and end > read:
        return True
    start = max(at, 0)
    return (buffer.find(b"\n...", start, read) >= 0 or buffer.find(b"\n---", start, read) >= 0
            or (at < 0 and buffer.startswith((b"...", b"---"))))
