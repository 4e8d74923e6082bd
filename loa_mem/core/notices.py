"""Notes for the user that are not errors (a write left uncommitted, a set-up step done):
core code adds them, the CLI prints them on stderr after the command's output."""

from __future__ import annotations

_PENDING: list[str] = []


def add(message: str) -> None:
    if message not in _PENDING:
        _PENDING.append(message)


def drain() -> list[str]:
    found = list(_PENDING)
    _PENDING.clear()
    return found
