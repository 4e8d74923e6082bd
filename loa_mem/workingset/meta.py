"""`.meta.yml` sidecars: what loa-mem knows about one working-tree file (spec section 7).

`<file>.meta.yml` sits beside its file. loa-mem creates it, with the defaults of the MOOLLM
document (title from the file name, summary "(needs summary)", no tags, hotness 0.5, not
pinned, provenance), the first time it tracks the file: a hint, a pin, a summary. Later writes
change only the keys they own and keep everything else; a sidecar with hand-written comments is
edited through a ruamel round trip so the comments survive.

Besides the fields of the spec, gc records where a file went: `archived_in`/`archive_date`
(moved to the archive directory), `postmortem` (an archived attempt's one line on why it
failed) and `compressed_date` (replaced by a compressed version). The
sidecar of an archived file stays where the file was, pointing at it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import clock, yamledit, yamlio
from loa_mem.core.errors import InvalidFile, Refused
from loa_mem.workingset.manifests import SIDECAR_SUFFIX

FIELDS = ("title", "summary", "tags", "hotness", "pin", "provenance", "links", "summarized_in",
          "summary_date", "superseded_by", "custom", "archived_in", "archive_date",
          "postmortem", "compressed_date")
SETTABLE = ("title", "summary", "tags", "links", "pin", "superseded_by", "summarized_in",
            "summary_date")
LIST_FIELDS = ("tags", "links")
NEEDS_SUMMARY = "(needs summary)"


def sidecar_path(rel: str) -> str:
    return rel + SIDECAR_SUFFIX


def title_of(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    return stem or name


def defaults(rel: str, actor: str, now: str) -> dict[str, Any]:
    """A new sidecar, as the MOOLLM document's auto-created example."""
    provenance: dict[str, Any] = {"created_by": actor, "created_at": now, "updated_at": now}
    session = os.environ.get("LOA_MEM_SESSION")
    if session:
        provenance["session"] = session
    return {"title": title_of(rel), "summary": NEEDS_SUMMARY, "tags": [], "hotness": 0.5,
            "pin": False, "provenance": provenance}


@dataclass
class Sidecar:
    rel: str
    doc: Any
    exists: bool
    round_trip: bool = False
    changed: bool = False

    @property
    def path(self) -> str:
        return sidecar_path(self.rel)

    @property
    def pinned(self) -> bool:
        return self.doc.get("pin") is True

    def set(self, key: str, value: Any) -> None:
        if self.doc.get(key) != value or key not in self.doc:
            self.doc[key] = value
            self.changed = True

    def clear(self, *keys: str) -> None:
        for key in keys:
            if key in self.doc:
                del self.doc[key]
                self.changed = True

    def stamp(self, now: str) -> None:
        """Record an update in provenance (only when something else changed)."""
        if not self.changed:
            return
        provenance = self.doc.get("provenance")
        if not isinstance(provenance, dict):
            self.doc["provenance"] = provenance = {}
        provenance["updated_at"] = now

    def text(self) -> str:
        if self.round_trip:
            return yamledit.round_trip_dump(self.doc)
        return yamlio.dump(dict(self.doc))


def load(top: Path, rel: str) -> Sidecar | None:
    """The sidecar of `rel` as it is on disk, or None when there is none."""
    path = sidecar_path(rel)
    try:
        text = (top / path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidFile(path, 1, 1, "not UTF-8 text") from None
    commented = "#" in text
    doc = yamledit.round_trip_load(text, path) if commented else yamlio.load(text, path)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise InvalidFile(path, 1, 1, "a sidecar must be a mapping of fields",
                          "fix it, or delete it and loa-mem writes a new one")
    return Sidecar(rel, doc, True, commented)


def ensure(top: Path, rel: str, actor: str) -> Sidecar:
    """The sidecar of `rel`, created with the defaults when there is none yet."""
    found = load(top, rel)
    if found is not None:
        return found
    return Sidecar(rel, defaults(rel, actor, clock.now_iso()), False, changed=True)


def is_pinned(top: Path, rel: str) -> bool:
    found = load(top, rel)
    return found is not None and found.pinned


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key=value` from `meta --set`: lists are comma-separated, pin is true/false, custom.K
    takes a YAML scalar. hotness and provenance are loa-mem's and cannot be set."""
    from loa_mem.core.sensitive import refuse_sensitive

    if "=" not in text:
        raise Refused("a --set value is not key=value", "for example --set title='Build log'")
    key, raw = (part.strip() for part in text.split("=", 1))
    refuse_sensitive(key, "a --set field name")
    refuse_sensitive(raw, f"--set {key}")
    if key in ("hotness", "provenance") or key.startswith("provenance."):
        raise Refused(f"{key} is computed by loa-mem and cannot be set",
                      "pin or hint the file instead (hotness follows the working set)")
    if key.startswith("custom."):
        name = key.split(".", 1)[1]
        if not name:
            raise Refused("custom. needs a name", "for example --set custom.owner=alice")
        return key, yamlio.load(raw, f"--set {key}") if raw else None
    if key not in SETTABLE:
        raise Refused("unknown sidecar field in --set",
                      f"use one of: {', '.join(SETTABLE)}, or custom.NAME")
    if key in LIST_FIELDS:
        return key, [item.strip() for item in raw.split(",") if item.strip()]
    if key == "pin":
        lowered = raw.lower()
        if lowered not in ("true", "false", "yes", "no"):
            raise Refused("--set pin is not true or false", "use --set pin=true")
        return key, lowered in ("true", "yes")
    return key, raw or None


def apply_assignment(sidecar: Sidecar, key: str, value: Any) -> None:
    if key.startswith("custom."):
        custom = sidecar.doc.get("custom")
        if not isinstance(custom, dict):
            sidecar.doc["custom"] = custom = {}
        name = key.split(".", 1)[1]
        if custom.get(name) != value or name not in custom:
            custom[name] = value
            sidecar.changed = True
        return
    sidecar.set(key, value)
