"""What validate found in each grimoire file last time, so that an unchanged file is neither read
nor checked again, and an unchanged entry of a changed file is not checked again.

An entry's own problems (schema, floor, expiry, archive, secrets) depend only on its text, the
file it is in (its category, archive or not), the config and loa-mem's code. The cache
(`<git dir>/loa-mem/validate.json`) holds, for each file, the hash of its whole content and, row by
row, each entry's text hash (the one the index keeps, `core.spanhash`), first line and id, plus,
for the rows that have any, the entry's problems (lines as offsets from its first line) and the
fields the rules across entries read (its links).

A file whose content hash is the one noted is taken from the cache as it is: it is not parsed and
the index is not consulted. In a changed file, an entry whose text hash (with the file's category
and place) is noted in any file is taken from the cache; only the others are checked. The whole
cache is dropped when the config or loa-mem's checking code changes. The rules across entries
(duplicate ids, supersede chains, related ids) always run on every entry, from the ids and links
noted here, so a change in one file that breaks a link from another is still reported.
"""

from __future__ import annotations

import array
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import loa_mem
from loa_mem.memory.files import GrimoireFile

FORMAT = 3
CACHE_FILE = "validate.json"
# the fields `check.cross_rules` reads, besides the id
LINK_KEYS = ("supersedes", "superseded_by", "related_memories", "archived")
# the problem of an item that is not a mapping with an id: it takes no part in the rules across
# entries, and its problems carry no id
NO_ID = "an entry must be a mapping with an id"
# the code an entry's own problems, and what is kept of them, come from: a change to any of them
# empties the cache
_CODE = ("memory/check.py", "memory/rules.py", "memory/validate.py", "memory/checkcache.py",
         "core/sensitive.py", "core/secretshapes.py", "core/detectors.py", "core/schemacheck.py",
         "core/schemas/memory.schema.json")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Noted:
    """One entry's own problems ((line offset, rule, message, severity)) and its links."""

    problems: list[tuple[int, str, str, str]]
    links: dict[str, Any]
    offsets: dict[str, int]

    @property
    def mapped(self) -> bool:
        return not any(p[1] == "schema" and p[2] == NO_ID for p in self.problems)


CLEAN = Noted([], {}, {})


@dataclass(frozen=True)
class FileNotes:
    """What one file held when validate last checked it: per row (in file order) its text hash,
    first line and id; the rows with problems or links by row number."""

    digest: str
    category: str
    archive: bool
    hashes: list[int | None]
    lines: list[int]
    ids: list[str]
    noted: dict[int, Noted]

    def unmapped(self) -> set[int]:
        return {row for row, noted in self.noted.items() if not noted.mapped}

    def mapped_ids(self) -> list[str]:
        """The id of every row that is a mapping with an id."""
        unmapped = self.unmapped()
        if not unmapped:
            return self.ids
        return [i for row, i in enumerate(self.ids) if row not in unmapped]


def links_of(data: dict[str, Any], key_offsets: dict[str, int]) -> tuple[dict[str, Any],
                                                                          dict[str, int]]:
    links = {k: data[k] for k in LINK_KEYS if data.get(k)}
    return links, {k: key_offsets[k] for k in links if k in key_offsets}


def digest(path: Path) -> str | None:
    """The hash of a file's content ("-" when there is no such file); None when it is checked
    through the index every time: it cannot be read, or it is empty (0 bytes), which is a
    problem or not depending on the last commit (`files.refuse_emptied`)."""
    found = hashlib.sha1(usedforsecurity=False)
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                found.update(chunk)
            if not handle.tell():
                return None
    except FileNotFoundError:
        return "-"
    except OSError:
        return None
    return found.hexdigest()


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
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _pack(values: list[int]) -> str:
    """64-bit integers as hex text: read back 20 times faster than a JSON list of them."""
    return array.array("q", values).tobytes().hex()


def _unpack(text: str) -> list[int]:
    packed = array.array("q")
    packed.frombytes(bytes.fromhex(text))
    return packed.tolist()


def _decode(saved: list[Any]) -> FileNotes:
    file_digest, category, archive, packed_hashes, unhashed, packed_lines, ids, noted = saved
    hashes: list[int | None] = list(_unpack(packed_hashes))
    for row in unhashed:
        hashes[row] = None
    lines = _unpack(packed_lines)
    if not len(hashes) == len(lines) == len(ids) or any(int(row) >= len(ids) for row in noted):
        raise ValueError("rows do not line up")
    return FileNotes(str(file_digest), str(category), bool(archive), hashes, lines, ids,
                     {int(row): Noted([tuple(p) for p in v[0]], v[1], v[2])
                      for row, v in noted.items()})


def _encode(notes: FileNotes) -> list[Any]:
    return [notes.digest, notes.category, notes.archive, _pack([h or 0 for h in notes.hashes]),
            [row for row, h in enumerate(notes.hashes) if h is None], _pack(notes.lines),
            notes.ids,
            {str(row): [v.problems, v.links, v.offsets] for row, v in notes.noted.items()}]


class Cache:
    def __init__(self, folder: Path, config: dict[str, Any]) -> None:
        self.path = folder / CACHE_FILE
        self.stamp = _stamp(config)
        self.saved: dict[str, FileNotes] = {}
        self.kept: dict[str, FileNotes] = {}
        self.changed = False
        self._entries: dict[tuple[str, bool], dict[int | None, Noted]] = {}
        try:
            with open(self.path, encoding="utf-8") as handle:
                saved = json.load(handle)
            if isinstance(saved, dict) and saved.get("stamp") == self.stamp:
                self.saved = {path: _decode(v) for path, v in saved["files"].items()}
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            self.saved = {}  # none, unreadable or from another version: everything is checked

    def file(self, grimoire: GrimoireFile, file_digest: str | None) -> FileNotes | None:
        """The notes of a file whose content is the one noted."""
        found = self.saved.get(grimoire.path)
        if (found is None or file_digest is None or found.digest != file_digest
                or found.category != grimoire.category or found.archive != grimoire.in_archive):
            return None
        self.kept[grimoire.path] = found
        return found

    def entry(self, grimoire: GrimoireFile, text_hash: int) -> Noted | None:
        """The notes of an entry whose text was checked before, in any file of its kind."""
        kind = (grimoire.category, grimoire.in_archive)
        entries = self._entries.get(kind)
        if entries is None:
            self._entries[kind] = entries = {}
            for notes in self.saved.values():
                if (notes.category, notes.archive) == kind:
                    entries.update(dict.fromkeys(notes.hashes, CLEAN))
                    for row, noted in notes.noted.items():
                        entries[notes.hashes[row]] = noted
            # an item that is not a mapping with an id is checked every time
            for text in [t for t, noted in entries.items() if not noted.mapped]:
                del entries[text]
        return entries.get(text_hash)

    def put(self, path: str, notes: FileNotes) -> None:
        self.kept[path] = notes
        self.changed = True

    def save(self) -> None:
        """Write the notes of the files this run checked (files gone are left out); a cache
        that cannot be written is skipped: the next validate checks everything again."""
        if not self.changed and self.kept.keys() == self.saved.keys():
            return
        saved = {"stamp": self.stamp, "files": {p: _encode(n) for p, n in self.kept.items()}}
        text = json.dumps(saved, separators=(",", ":"))  # 20x faster than json.dump to a file
        temporary = self.path.with_name(f"{CACHE_FILE}.{os.getpid()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, self.path)
        except OSError:
            temporary.unlink(missing_ok=True)
