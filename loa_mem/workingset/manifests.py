"""The working set of MOOLLM's memory management (spec section 7): its settings, the hot and cold
manifests, what may never be evicted, and hotness.

The model advises, loa-mem decides. What the model said lives in two manifests in the kernel
format (`hot.yml`: `{protocol, updated, keep: [{path, why, since, touches}]}`, `cold.yml`:
`{protocol, updated, evict: [{path, why, last_touch, suggested_action}]}`). loa-mem adds what
its own rules need and the kernel format leaves out: `turn` (a counter of `advise` calls, the
"turn" of "untouched for N turns") and, per kept file, `last_touch` and `last_turn`.

The working set is every path in either manifest: a cold file stays in the model's context
until `gc` evicts it. A manifest without comments is read with the fast loader and written
fresh; one with hand-written comments goes through a ruamel round trip so they survive.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import tokens, yamledit, yamlio
from loa_mem.core.errors import InvalidFile, Refused
from loa_mem.workingset import rules
from loa_mem.workingset.rules import PROTOCOL, glob_match

SIDECAR_SUFFIX = ".meta.yml"


@dataclass(frozen=True)
class Settings:
    dir: str
    summaries_dir: str
    archive_dir: str
    untouched_turns: int | None
    untouched_minutes: int | None
    defer_turns: int
    summarize_over_lines: int
    context_budget: int | None
    keep: tuple[str, ...]
    summarizer_command: str | None
    summarizer_timeout: float

    @property
    def hot_path(self) -> str:
        return f"{self.dir}/hot.yml"

    @property
    def cold_path(self) -> str:
        return f"{self.dir}/cold.yml"


def settings(store: Any) -> Settings:
    from loa_mem.memory.config import BUILTIN, merged

    # Merged over the built-in defaults again: a config cached before this section existed
    # would otherwise read as empty.
    raw = merged(store.config.section("working_set"), BUILTIN["working_set"])
    summarizer = raw.get("summarizer") or {}
    return Settings(
        dir=str(raw["dir"]).rstrip("/"), summaries_dir=str(raw["summaries_dir"]).rstrip("/"),
        archive_dir=str(raw["archive_dir"]).rstrip("/"),
        untouched_turns=raw.get("untouched_turns"), untouched_minutes=raw.get("untouched_minutes"),
        defer_turns=int(raw["defer_turns"]), summarize_over_lines=int(raw["summarize_over_lines"]),
        context_budget=raw.get("context_budget"), keep=tuple(raw.get("keep") or ()),
        summarizer_command=summarizer.get("command"),
        summarizer_timeout=float(summarizer.get("timeout_seconds") or 120))


# -- paths ------------------------------------------------------------------------------------
def relative(store: Any, given: str) -> str:
    """`given` as a path inside the store: absolute, or relative to the current directory when
    that is inside the store (as a shell user means it), else to the store root (--root from
    elsewhere, a model naming files from the project root)."""
    if not given.strip():
        raise Refused("an empty path", "name a file in the working tree")
    path = Path(given)
    top = Path(store.top)
    cwd = Path.cwd()
    base = cwd if cwd == top or top in cwd.parents else top
    absolute = path if path.is_absolute() else base / path
    try:
        rel = Path(os.path.normpath(absolute)).relative_to(top)
    except ValueError:
        try:
            rel = absolute.resolve().relative_to(top.resolve())
        except ValueError:
            raise Refused(f"{given} is outside the store at {top}",
                          "name a file inside the repository") from None
    text = rel.as_posix()
    if text in ("", ".") or text.split("/")[0] == ".git":
        raise Refused(f"{given} is not a working-tree file", "name a file inside the repository")
    return text


def existing_file(store: Any, given: str) -> str:
    """The store-relative path of an existing file; a missing path is refused by name."""
    rel = relative(store, given)
    full = Path(store.top) / rel
    if full.is_dir():
        raise Refused(f"{rel} is a directory", "name the files in it one by one")
    if not full.is_file():
        from loa_mem.core.sensitive import first_finding

        kinds = first_finding(rel)  # a secret pasted as a path is not repeated
        raise Refused(f"no such file in the working tree (the path looks like it contains {kinds})"
                      if kinds else f"no file {rel} in the working tree",
                      "check the path (hints and summaries are about files that exist)")
    return rel


def own_file_reason(store: Any, s: Settings, rel: str) -> str | None:
    """Why `rel` is one of loa-mem's own files (never evicted, never given a sidecar)."""
    from loa_mem.memory.config import CONFIG_FILE

    if rel == CONFIG_FILE:
        return "the store's config (.loa.config.yaml) is always kept"
    if rel in store.event_logs():
        return "the events log is the append-only audit trail; it is always kept"
    grimoires = store.grimoire_files()
    if rel in {g.path for g in grimoires if g.category == "decision"}:
        return "decisions are the audit trail; the decisions file is always kept"
    if rel in {g.path for g in grimoires}:
        return "a grimoire file: gc archives its entries one by one, never the file"
    if rel.endswith(SIDECAR_SUFFIX):
        return "sidecar metadata follows its file; it is never evicted on its own"
    if rel in (s.hot_path, s.cold_path) or rel.startswith(s.archive_dir + "/"):
        return "one of loa-mem's working-set files"
    return None


def must_keep(store: Any, s: Settings, rel: str) -> str | None:
    """Why `rel` may never be evicted (the spec's "what must be kept"), or None."""
    reason = own_file_reason(store, s, rel)
    if reason:
        return reason
    for pattern in s.keep:
        if glob_match(pattern, rel):
            return (f"matches {pattern!r} in working_set.keep (constitution, deliverables): "
                    "always kept")
    return None


def file_tokens(top: Path, rel: str) -> int:
    try:
        return tokens.estimate_bytes((top / rel).stat().st_size)
    except OSError:
        return 0


# -- manifests --------------------------------------------------------------------------------
def _read_doc(top: Path, rel: str, key: str) -> tuple[Any, bool]:
    try:
        text = (top / rel).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"protocol": PROTOCOL, "updated": None, key: []}, False
    except UnicodeDecodeError:
        raise InvalidFile(rel, 1, 1, "not UTF-8 text") from None
    commented = "#" in text
    data = yamledit.round_trip_load(text, rel) if commented else yamlio.load(text, rel)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidFile(rel, 1, 1, "expected a mapping (protocol, updated, "
                          f"{key})", "fix the file or delete it to start afresh")
    if data.get(key) is None:
        data[key] = []
    items = data[key]
    if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get("path"), str) for i in items):
        raise InvalidFile(rel, 1, 1, f"{key} must be a list of mappings, each with a path",
                          "run `loa-mem validate` for the details")
    return data, commented


class Manifests:
    """hot.yml and cold.yml, read once and changed in place."""

    def __init__(self, store: Any, s: Settings) -> None:
        self.top = Path(store.top)
        self.settings = s
        self.hot, self._hot_rt = _read_doc(self.top, s.hot_path, "keep")
        self.cold, self._cold_rt = _read_doc(self.top, s.cold_path, "evict")
        self._hot_by_path = {str(i["path"]): i for i in self.hot["keep"]}
        self._cold_by_path = {str(i["path"]): i for i in self.cold["evict"]}

    # -- reading
    @property
    def turn(self) -> int:
        value = self.hot.get("turn")
        return int(value) if isinstance(value, int) else 0

    def hot_item(self, path: str) -> Any:
        return self._hot_by_path.get(path)

    def cold_item(self, path: str) -> Any:
        return self._cold_by_path.get(path)

    def hot_paths(self) -> list[str]:
        return list(self._hot_by_path)

    def cold_paths(self) -> list[str]:
        return list(self._cold_by_path)

    def working_set(self) -> list[str]:
        return list(dict.fromkeys([*self._hot_by_path, *self._cold_by_path]))

    def tokens(self, paths: list[str] | None = None) -> int:
        return sum(file_tokens(self.top, p) for p in (self.working_set() if paths is None
                                                       else paths))

    # -- changing
    def next_turn(self) -> int:
        self.hot["turn"] = self.turn + 1
        return self.turn

    def touch(self, path: str, why: str, now: str, count: int = 1) -> Any:
        """Put `path` on the hot list (or refresh it): touches go up, times are kept."""
        item = self._hot_by_path.get(path)
        if item is None:
            item = {"path": path, "why": why, "since": now, "touches": 0}
            self.hot["keep"].append(item)
            item = self.hot["keep"][-1]
            self._hot_by_path[path] = item
        item["why"] = why
        item["touches"] = int(item.get("touches") or 0) + count
        item["last_touch"] = now
        item["last_turn"] = self.turn
        return item

    def set_cold(self, path: str, why: str, action: str, postmortem: str | None = None
                 ) -> None:
        """Put `path` on the cold list; an archive hint carries its postmortem line."""
        hot = self._hot_by_path.get(path)
        last_touch = hot.get("last_touch") or hot.get("since") if hot is not None else None
        item = self._cold_by_path.get(path)
        if item is None:
            self.cold["evict"].append({"path": path, "why": why, "last_touch": last_touch,
                                       "suggested_action": action})
            item = self.cold["evict"][-1]
            self._cold_by_path[path] = item
        item["why"] = why
        item["last_touch"] = last_touch or item.get("last_touch")
        item["suggested_action"] = action
        if postmortem:
            item["postmortem"] = postmortem
        elif "postmortem" in item:
            del item["postmortem"]

    def drop_hot(self, path: str) -> bool:
        return _drop(self.hot["keep"], self._hot_by_path, path)

    def drop_cold(self, path: str) -> bool:
        return _drop(self.cold["evict"], self._cold_by_path, path)

    def texts(self, now: str) -> dict[str, str]:
        s = self.settings
        self.hot["updated"] = now
        self.cold["updated"] = now
        return {s.hot_path: _dump(self.hot, self._hot_rt, "keep"),
                s.cold_path: _dump(self.cold, self._cold_rt, "evict")}


def _drop(items: list[Any], by_path: dict[str, Any], path: str) -> bool:
    item = by_path.pop(path, None)
    if item is None:
        return False
    for n in range(len(items) - 1, -1, -1):
        found = items[n].get("path")
        if items[n] is item or found == path or (not isinstance(found, str)
                                                 and str(found) == path):
            del items[n]
    return True


def _dump(doc: Any, round_trip: bool, key: str) -> str:
    if round_trip:
        return yamledit.round_trip_dump(doc)
    ordered = {"protocol": doc.get("protocol") or PROTOCOL, "updated": doc.get("updated")}
    if key == "keep":
        ordered["turn"] = doc.get("turn") or 0
    ordered.update({k: v for k, v in doc.items() if k not in ordered and k != key})
    ordered[key] = doc[key]
    return yamlio.dump(ordered)


# -- hotness ----------------------------------------------------------------------------------
def hotness(manifests: Manifests, path: str, pinned: bool) -> tuple[float, dict[str, float]]:
    """The hotness of `path` from what the manifests say of it (see `rules.hotness`)."""
    hot = manifests.hot_item(path)
    last_turn = hot.get("last_turn") if hot is not None else None
    return rules.hotness(
        turns_since_touch=manifests.turn - last_turn if isinstance(last_turn, int) else None,
        horizon=manifests.settings.untouched_turns or 10, hot_listed=hot is not None,
        cold_listed=manifests.cold_item(path) is not None, pinned=pinned)
