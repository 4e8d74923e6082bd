"""A grimoire file as the store knows it, and the signature that says whether it changed."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

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
