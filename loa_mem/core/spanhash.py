"""The fingerprint of one list item's text, shared by every reader of grimoire files.

An entry's hash is BLAKE2b (8 bytes, as a signed 64-bit integer, so SQLite stores it as an
integer) of its lines from its first to its last content line, joined by "\n". The index keeps it
per entry; when a file changed outside loa-mem, an item whose text hashes the same is the same
entry and is not parsed again.
"""

from __future__ import annotations

try:  # hashlib's own BLAKE2b, without hashlib: importing it loads OpenSSL (~3 ms)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["blake2b", "digest", "of_lines"]


def digest(text: str) -> int:
    return int.from_bytes(blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "big", signed=True)


def of_lines(lines: list[str], first: int, last: int) -> int:
    """The hash of `lines[first:last + 1]` (0-based, inclusive)."""
    return digest("\n".join(lines[first:last + 1]))
