"""summarize --repair: mend the summary links `validate` warns about, in one commit.

Two kinds of link can stop resolving: a summary's `summary_of` source (with its References
line) when the file and its sidecar are both gone, and a sidecar's `summarized_in` when the
summary is gone. Each dead link is looked for, in this order:

1. **same content**: exactly one file whose bytes are those the old path last had in git
   (its blob at the last commit that touched it);
2. **same name**: else exactly one file with the old path's file name.

A source is looked for among the working-tree files that are not loa-mem's own (the working-set
folder, the summaries, sidecars); a summary among the summaries. One match: the link is
**re-pointed** to it. None or several: the link is **removed** (a dead source leaves
`summary_of` and References; a dead `summarized_in` leaves the sidecar with its
`summary_date`). A summary none of whose sources can be found is **kept** as it is: it is the
record of files that are gone, and emptying it would leave a summary of nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock, git, yamlio
from loa_mem.core.errors import InvalidFile
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta

REPOINTED, REMOVED, KEPT = "re-pointed", "removed", "kept"


@dataclass(frozen=True)
class Repair:
    file: str  # the summary or sidecar that held the link
    link: str  # the path it named
    action: str
    to: str | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "link": self.link, "action": self.action, "to": self.to,
                "reason": self.reason}


@dataclass(frozen=True)
class Repaired:
    repairs: list[Repair]
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"repairs": [r.to_json() for r in self.repairs], "commit": self.commit}


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id


def _last_blobs(top: Path) -> dict[str, str]:
    """Each path's blob at the last commit that touched it (for a deletion: the blob before),
    from one walk of the history, newest first."""
    out = git.run(top, "log", "--raw", "--no-renames", "--no-abbrev", "--format=", "-z",
                  "HEAD", check=False)
    found: dict[str, str] = {}
    fields = out.split("\0")
    for n, field_ in enumerate(fields[:-1]):
        head, path = field_.strip().split(), fields[n + 1]
        if len(head) == 5 and head[0].startswith(":") and path not in found:
            found[path] = head[2] if head[4] == "D" else head[3]
    return found


@dataclass
class _Finder:
    top: Path
    settings: ws.Settings
    _files: list[str] | None = None
    _blobs: dict[str, str] = field(default_factory=dict)
    _history: dict[str, str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            out = git.run(self.top, "ls-files", "-z", "-co", "--exclude-standard", check=False)
            self._files = sorted({p for p in out.split("\0") if p and (self.top / p).is_file()})
        return self._files

    def blob(self, rel: str) -> str:
        if rel not in self._blobs:
            self._blobs[rel] = _blob_id((self.top / rel).read_bytes())
        return self._blobs[rel]

    def candidates(self, summary: bool) -> list[str]:
        s = self.settings
        if summary:
            return [p for p in self.files()
                    if p.startswith(s.summaries_dir + "/") and p.endswith(".md")]
        own = (s.dir + "/", s.summaries_dir + "/", s.archive_dir + "/")
        return [p for p in self.files()
                if not p.startswith(own) and not p.endswith(ws.SIDECAR_SUFFIX)]

    def find(self, old: str, summary: bool) -> tuple[str | None, str]:
        """(the one file `old` became, how it was found) or (None, why not)."""
        pool = self.candidates(summary)
        if self._history is None:
            self._history = _last_blobs(self.top)
        blob = self._history.get(old)
        same = [p for p in pool if blob is not None and self.blob(p) == blob]
        if len(same) == 1:
            return same[0], "same content"
        name = old.rsplit("/", 1)[-1]
        named = [p for p in pool if p.rsplit("/", 1)[-1] == name]
        if len(named) == 1 and len(same) == 0:
            return named[0], "same file name"
        if len(same) > 1 or len(named) > 1:
            return None, f"{max(len(same), len(named))} files could be it"
        return None, "no file with its content or name"


def _source_gone(top: Path, source: str) -> bool:
    """As validate: neither the file nor its sidecar (an archived file keeps its sidecar)."""
    return not (top / source).exists() and not (top / (source + ws.SIDECAR_SUFFIX)).exists()


def _link_line(rel: str, source: str) -> str:
    folder = os.path.dirname(rel) or "."
    return f"- [{source.rsplit('/', 1)[-1]}]({Path(os.path.relpath(source, folder)).as_posix()})"


def _rewrite(text: str, rel: str, old: str, new: str | None) -> str:
    """The summary with `old` re-pointed to `new` (or dropped) in summary_of and References."""
    quoted = "|".join(re.escape(q) for q in (json.dumps(old), f"'{old}'", old))
    entry = re.compile(rf"^([ \t]*-[ \t]*)(?:{quoted})[ \t]*\n", re.MULTILINE)
    link = re.compile(rf"^{re.escape(_link_line(rel, old))}\n?", re.MULTILINE)
    if new is None:
        return link.sub("", entry.sub("", text, count=1), count=1)
    text = entry.sub(lambda m: f"{m.group(1)}{json.dumps(new)}\n", text, count=1)
    return link.sub(_link_line(rel, new) + "\n", text, count=1)


def _sources(top: Path, rel: str) -> list[str] | None:
    text = (top / rel).read_text(encoding="utf-8", errors="replace")
    match = re.match(r"---\n(.*?\n)---\n", text, re.DOTALL)
    try:
        data = yamlio.load(match.group(1), rel) if match else None
    except InvalidFile:
        return None
    found = data.get("summary_of") if isinstance(data, dict) else None
    return [s for s in found if isinstance(s, str)] if isinstance(found, list) else None


def _summaries(top: Path, finder: _Finder, writes: dict[str, str]) -> list[Repair]:
    repairs: list[Repair] = []
    for rel in finder.candidates(summary=True):
        sources = _sources(top, rel) or []
        gone = [s for s in sources if _source_gone(top, s)]
        if not gone:
            continue
        found = {old: finder.find(old, summary=False) for old in gone}
        if len(gone) == len(sources) and all(new is None for new, _ in found.values()):
            repairs += [Repair(rel, old, KEPT, None, f"{why}; none of the summary's sources "
                               "is left, so it stays as their record") for old, (_, why)
                        in found.items()]
            continue
        text = (top / rel).read_text(encoding="utf-8")
        for old, (new, why) in found.items():
            text = _rewrite(text, rel, old, new)
            repairs.append(Repair(rel, old, REPOINTED if new else REMOVED, new, why))
        writes[rel] = text
    return repairs


def _sidecars(top: Path, finder: _Finder, writes: dict[str, str], now: str) -> list[Repair]:
    repairs: list[Repair] = []
    out = git.run(top, "ls-files", "-z", "-co", "--exclude-standard", "--",
                  "*" + ws.SIDECAR_SUFFIX, check=False)
    for path in sorted({p for p in out.split("\0") if p and (top / p).is_file()}):
        sidecar = meta.load(top, path[: -len(ws.SIDECAR_SUFFIX)])
        old = sidecar.doc.get("summarized_in") if sidecar is not None else None
        if sidecar is None or not isinstance(old, str) or (top / old).is_file():
            continue
        new, why = finder.find(old, summary=True)
        if new is None:
            sidecar.clear("summarized_in", "summary_date")
        else:
            sidecar.set("summarized_in", new)
        sidecar.stamp(now)
        writes[sidecar.path] = sidecar.text()
        repairs.append(Repair(sidecar.path, old, REPOINTED if new else REMOVED, new, why))
    return repairs


def repair(store: Any, actor: str, commit: bool = True) -> Repaired:
    """Every dead summary link re-pointed or removed, in one commit; none: nothing written."""
    top = Path(store.top)
    finder = _Finder(top, ws.settings(store))
    writes: dict[str, str] = {}
    repairs = _summaries(top, finder, writes) + _sidecars(top, finder, writes, clock.now_iso())
    if not writes:
        return Repaired(repairs)
    changed = [r for r in repairs if r.action != KEPT]
    with store.write("summarize", actor, commit) as txn:
        for rel, text in writes.items():
            txn.put(rel, text)
        txn.event("summarize_repair", [], None, repairs=[r.to_json() for r in repairs])
        txn.what = (f"repair: {sum(r.action == REPOINTED for r in changed)} re-pointed, "
                    f"{sum(r.action == REMOVED for r in changed)} removed link(s)")
        txn.body = "\n".join(f"- {r.action}: {r.link} in {r.file}"
                             f"{' -> ' + r.to if r.to else ''} ({r.reason})" for r in repairs)
    return Repaired(repairs, txn.commit_sha)
