"""What validate found in each entry last time, so that an unchanged entry is not checked again.

An entry's own problems (schema, floor, expiry, archive, secrets) depend only on its text, the
file it is in (its category, archive or not), the config and loa-mem's code. The cache
(`<git dir>/loa-mem/validate.json`) keys them by the entry's text hash (the one the index keeps,
`core.spanhash`) and its file's category and place, and holds each entry's problems with their
lines as offsets from its first line, plus the fields the rules across entries read (its links).
The whole cache is dropped when the config or loa-mem's checking code changes. Rules across
entries (duplicate ids, supersede chains, related ids) always run on every entry, from these
fields, so a change in one file that breaks a link from another is still reported.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from hashlib import blake2b
from pathlib import Path
from typing import Any

import loa_mem
from loa_mem.memory.files import GrimoireFile

FORMAT = 1
CACHE_FILE = "validate.json"
# the fields `check.cross_rules` reads, besides the id
LINK_KEYS = ("supersedes", "superseded_by", "related_memories", "archived")
# the code an entry's own problems come from: a change to any of them empties the cache
_CODE = ("memory/check.py", "memory/rules.py", "core/sensitive.py", "core/detectors.py",
         "core/schemacheck.py", "core/schemas/memory.schema.json")


@dataclass(frozen=True)
class Noted:
    """One entry's own problems ((line offset, rule, message, severity)) and its links."""

    problems: list[tuple[int, str, str, str]]
    links: dict[str, Any]
    offsets: dict[str, int]


def key(grimoire: GrimoireFile, text_hash: int) -> str:
    return f"{grimoire.category}:{int(grimoire.in_archive)}:{text_hash}"


def links_of(data: dict[str, Any], key_offsets: dict[str, int]) -> tuple[dict[str, Any],
                                                                          dict[str, int]]:
    links = {k: data[k] for k in LINK_KEYS if data.get(k)}
    return links, {k: key_offsets[k] for k in links if k in key_offsets}


def _stamp(config: dict[str, Any]) -> str:
    package = Path(loa_mem.__file__).parent
    code = []
    for rel in _CODE:
        try:
            stat = (package / rel).stat()
            code.append([rel, stat.st_mtime_ns, stat.st_size])
        except OSError:
            code.append([rel, 0, 0])
    text = json.dumps([FORMAT, loa_mem.__version__, code, config], sort_keys=True, default=str)
    return blake2b(text.encode(), digest_size=16).hexdigest()


class Cache:
    def __init__(self, folder: Path, config: dict[str, Any]) -> None:
        self.path = folder / CACHE_FILE
        self.stamp = _stamp(config)
        self.clean: set[str] = set()
        self.noted: dict[str, Noted] = {}
        self.used: set[str] = set()
        self.changed = False
        try:
            with open(self.path, encoding="utf-8") as handle:
                saved = json.load(handle)
        except (OSError, ValueError):
            return
        if not isinstance(saved, dict) or saved.get("stamp") != self.stamp:
            return
        self.clean = set(saved.get("clean", []))
        self.noted = {k: Noted([tuple(p) for p in v[0]], v[1], v[2])
                      for k, v in saved.get("noted", {}).items()}

    def get(self, name: str) -> Noted | None:
        if name in self.clean:
            self.used.add(name)
            return Noted([], {}, {})
        found = self.noted.get(name)
        if found is not None:
            self.used.add(name)
        return found

    def put(self, name: str, noted: Noted) -> None:
        self.used.add(name)
        self.changed = True
        if noted.problems or noted.links:
            self.noted[name] = noted
        else:
            self.clean.add(name)

    def save(self) -> None:
        """Write what this run used (entries no file holds any more are left out); a cache
        that cannot be written is skipped: the next validate checks everything again."""
        if not self.changed and len(self.used) == len(self.clean) + len(self.noted):
            return
        saved = {"stamp": self.stamp, "clean": sorted(self.clean & self.used),
                 "noted": {k: [v.problems, v.links, v.offsets] for k, v in self.noted.items()
                           if k in self.used}}
        temporary = self.path.with_name(f"{CACHE_FILE}.{os.getpid()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(saved, handle, separators=(",", ":"))
            os.replace(temporary, self.path)
        except OSError:
            temporary.unlink(missing_ok=True)
