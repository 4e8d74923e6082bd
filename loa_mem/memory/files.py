"""A grimoire file as the store knows it, the signature that says whether it changed, and the
check that it was not emptied by accident."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from loa_mem.core.errors import InvalidFile
from loa_mem.memory.index import Signature


class GrimoireFile(NamedTuple):
    category: str
    path: str
    in_archive: bool


def signature_of(path: Path) -> Signature | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def refuse_emptied(top: Path, path: str) -> None:
    """A grimoire file of 0 bytes whose last commit held entries was emptied by accident (a
    crash, a full disk, a truncating editor), never by loa-mem: reading it as an empty list
    would hide entries git still has, and the next write would commit their loss."""
    from loa_mem.core import git, yamlio

    try:
        committed = git.run(top, "show", f"HEAD:{path}", check=False)
        held = len(yamlio.load_list(committed, path).items) if committed else 0
    except (InvalidFile, UnicodeError, OSError):
        return
    if held:
        raise InvalidFile(path, 1, 1, f"is empty (0 bytes) but the last commit holds {held} "
                          "entr" + ("y" if held == 1 else "ies"),
                          f"restore it with `git checkout -- {path}`, or write `[]` in it to "
                          "empty it on purpose; nothing was written")
