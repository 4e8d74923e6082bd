"""Where a key or a list item sits in a sidecar or manifest, by its text: a problem found in the
parsed data names the line a user opens, without a parser that keeps positions."""

from __future__ import annotations

import re


def key_line(lines: list[str], key: str, start: int = 0) -> int:
    """Line (1-based) of the first `key:` at or after line index `start`; the line after
    `start` (or 1) when there is none."""
    pattern = re.compile(rf"^\s*-?\s*{re.escape(key)}\s*:")
    for n in range(start, len(lines)):
        if pattern.match(lines[n]):
            return n + 1
    return start + 1 if start < len(lines) else 1


def item_line(lines: list[str], key: str, index: int) -> int:
    """Line of the index-th item of the top-level list `key` (its `- ` line)."""
    start = key_line(lines, key) - 1
    seen = -1
    for n in range(start + 1, len(lines)):
        stripped = lines[n].lstrip()
        if stripped.startswith("- ") and len(lines[n]) - len(stripped) <= 2:
            seen += 1
            if seen == index:
                return n + 1
    return start + 1
