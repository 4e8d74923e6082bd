"""`loa-mem repair`: put the store right after any git operation, in or outside a merge.

Two passes:
1. Files git left conflicted: from the index's unmerged stages when git still has them (a
   stopped merge, rebase, cherry-pick or `am`), else from the conflict markers in the file
   (with diff3's base section when there is one). Both sides merge by entry id, as the merge
   driver would; a field no rule settles keeps ours, and the report names it. The same id
   created for two different entries gives the other side's copy a new id.
2. The whole store: an id that appears twice (one entry copied by git into two files, or two
   entries that got one legacy id) is made unique, and every one-way supersede link gets its
   other end. Forks and cycles need a person: the report names them with the command to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import git, githistory, textfile, yamlio
from loa_mem.core.errors import LoaMemError
from loa_mem.memory import rules as model
from loa_mem.memory.index import Row
from loa_mem.memory.merge import Plan, identity, merge_texts
from loa_mem.memory.store import Store


@dataclass(frozen=True)
class Fix:
    path: str
    what: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "what": self.what}


@dataclass
class RepairReport:
    fixes: list[Fix] = field(default_factory=list)
    left: list[Fix] = field(default_factory=list)  # what needs a person
    paths: list[str] = field(default_factory=list)
    commit: str | None = None
    staged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.left

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "fixes": [f.to_json() for f in self.fixes],
                "left": [f.to_json() for f in self.left], "paths": self.paths,
                "commit": self.commit, "staged": self.staged}


# -- pass 1: conflicted files -------------------------------------------------------------------
def split_markers(text: str) -> tuple[str, str, str] | None:
    """(base, ours, theirs) of a file with conflict markers; None when it has none. Without a
    diff3 base section, the base holds only the lines both sides share."""
    if yamlio.conflict_line(text) is None:
        return None
    sides: dict[str, list[str]] = {"base": [], "ours": [], "theirs": []}
    state = ""
    for line in text.splitlines(keepends=True):
        marker = line[:7]
        if marker == "<<<<<<<" and not state:
            state = "ours"
        elif marker == "|||||||" and state == "ours":
            state = "base"
        elif marker == "=======" and state in ("ours", "base"):
            state = "theirs"
        elif marker == ">>>>>>>" and state == "theirs":
            state = ""
        elif state:
            sides[state].append(line)
        else:
            for kept in sides.values():
                kept.append(line)
    return "".join(sides["base"]), "".join(sides["ours"]), "".join(sides["theirs"])


def unmerged_stages(top: Path, paths: list[str]) -> dict[str, dict[int, str]]:
    """The base (1), ours (2) and theirs (3) versions git keeps for each conflicted path."""
    out = git.run(top, "ls-files", "-u", "-z", "--", *paths)
    found: dict[str, dict[int, str]] = {}
    for record in out.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        _, sha, stage = meta.split()
        found.setdefault(path, {})[int(stage)] = githistory.blob_text(top, sha)
    return found


def _identities(text: str, label: str) -> dict[str, tuple[str, str, str]]:
    found = {}
    for item in yamlio.load_list(text, label).items:
        data = item.data if isinstance(item.data, dict) else {}
        if isinstance(data.get("id"), str):
            found[data["id"]] = identity(data)
    return found


def merge_conflicted(texts: tuple[str, str, str], path: str, used: set[str],
                     retired: frozenset[str] = frozenset()
                     ) -> tuple[str, list[str], dict[str, str]]:
    """Merge the three versions of one grimoire file for a repair: (text, ids settled with
    ours, {old id: new id} for the other side's copies of ids created twice)."""
    base, ours, theirs = texts
    in_base = _identities(base, f"{path} (base)")
    in_ours = _identities(ours, f"{path} (ours)")
    in_theirs = _identities(theirs, f"{path} (theirs)")
    used.update(in_base, in_ours, in_theirs)
    rename: dict[str, str] = {}
    for memory_id in sorted(set(in_ours) & set(in_theirs) - set(in_base)):
        if in_ours[memory_id] != in_theirs[memory_id]:
            rename[memory_id] = model.unused_id(memory_id, used)
    merged = merge_texts(texts, Plan(rename_theirs=rename, retired_theirs=retired,
                                     settle_with_ours=True), path)
    return merged.text, merged.settled, rename


def repair_conflicted(store: Store, report: RepairReport) -> None:
    from loa_mem.core.filewrite import atomic_write
    from loa_mem.memory.merge_plan import union_events

    top = store.top
    logs = store.event_logs()
    paths = [g.path for g in store.grimoire_files()] + logs
    stages = unmerged_stages(top, paths)
    used: set[str] = set()
    retired = _retired_by_replayed(store) if stages else frozenset()
    for path in paths:
        current = _read(top / path)
        texts = _three(stages.get(path), current)
        if texts is None:
            continue
        if path in logs:
            atomic_write(top / path,
                         textfile.own_ending(top / path, union_events(*texts, Plan())))
            report.fixes.append(Fix(path, "merged the events log as a union of both sides"))
        else:
            try:
                text, settled, renamed = merge_conflicted(texts, path, used, retired)
            except LoaMemError as error:
                report.left.append(Fix(path, f"could not merge by id: {error.one_line()}"))
                continue
            atomic_write(top / path, textfile.own_ending(top / path, text))
            report.fixes.append(Fix(path, "merged both sides by entry id"))
            report.fixes.extend(Fix(path, f"{old} was created on both sides for different "
                                          f"entries: the other side's copy is now {new}")
                                for old, new in renamed.items())
            report.fixes.extend(Fix(path, f"{memory_id} was changed differently on both sides; "
                                          "kept ours where no rule decides")
                                for memory_id in settled)
        report.paths.append(path)


def _retired_by_replayed(store: Store) -> frozenset[str]:
    """What the commit a stopped rebase or cherry-pick replays forgot or archived: it stays
    retired, as the merge driver keeps it during a rebase."""
    from loa_mem.memory.merge_plan import Layout, replayed_commit, retired_by

    files = store.grimoire_files()
    lay = Layout([g.path for g in files], [g.path for g in files if g.in_archive],
                 store.events_rel)
    return retired_by(store.top, lay, replayed_commit(store.top))


def _three(stages: dict[int, str] | None, current: str | None
           ) -> tuple[str, str, str] | None:
    if stages and 2 in stages and 3 in stages:
        return stages.get(1, ""), stages[2], stages[3]
    if stages:  # deleted on one side: the version that is there
        kept = stages.get(2) or stages.get(3) or ""
        return kept, kept, kept
    return split_markers(current) if current else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


# -- pass 2: ids and links ----------------------------------------------------------------------
def _set(key: str, value: str) -> Any:
    def change(mapping: Any) -> None:
        mapping[key] = value
    return change


def relink(store: Store, report: RepairReport) -> None:
    """Make every id unique and every supersede link two-way, in one transaction."""
    from loa_mem.memory import chains

    index = store.index
    rows = [r for r in index.all_rows() if isinstance(r.data, dict)]
    by_id: dict[str, list[Row]] = {}
    for row in rows:
        by_id.setdefault(str(row.data.get("id")), []).append(row)
    dupes = {i: places for i, places in by_id.items() if len(places) > 1}
    with store.write("repair", "tool:loa-mem-repair", commit=False) as txn:
        used = set(by_id)
        for memory_id, places in sorted(dupes.items()):
            _unique(txn, memory_id, places, by_id, used, report)
        single = {i: places[0] for i, places in by_id.items() if len(places) == 1 and not any(
            str(places[0].data.get(k)) in dupes for k in ("supersedes", "superseded_by"))}
        for problem in chains.problems({i: r.data for i, r in single.items()}):
            _settle_link(txn, problem, single, report)
        txn.what = f"{len(report.fixes)} fix(es)"
        if txn.plans:
            txn.event("repair", list(dict.fromkeys(txn.ids)), None,
                      fixes=[f.what for f in report.fixes])
    report.paths.extend(p for p in txn.changed_paths if p not in report.paths)


def _unique(txn: Any, memory_id: str, places: list[Row], by_id: dict[str, list[Row]],
            used: set[str], report: RepairReport) -> None:
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for row in places:
        groups.setdefault(identity(row.data), []).append(row)
    ordered = sorted(groups.values(), key=lambda g: (str(identity(g[0].data)[2]),
                                                     g[0].path, g[0].first_line))
    for number, group in enumerate(ordered):
        keep = next((r for r in group if r.in_archive), group[0])
        for copy in group:
            if copy is not keep:
                txn.remove(copy)
                report.fixes.append(Fix(copy.path, f"{memory_id} was there twice (also in "
                                        f"{keep.path}); kept the copy in {keep.path}"))
        if number == 0:
            continue
        new_id = model.unused_id(memory_id, used)
        txn.change(keep, _set("id", new_id))
        report.fixes.append(Fix(keep.path, f"{memory_id} named two different entries; the one "
                                f"at line {keep.first_line} is now {new_id}"))
        _follow(txn, keep, memory_id, new_id, by_id, report)


def _follow(txn: Any, renamed: Row, old_id: str, new_id: str, by_id: dict[str, list[Row]],
            report: RepairReport) -> None:
    """Links that belong to the renamed entry (the other end points back at it) follow it."""
    for key, back in (("superseded_by", "supersedes"), ("supersedes", "superseded_by")):
        partner_id = renamed.data.get(key)
        for partner in by_id.get(str(partner_id), []) if partner_id else []:
            if partner.data.get(back) == old_id:
                txn.change(partner, _set(back, new_id))
                report.fixes.append(Fix(partner.path, f"{partner_id}'s {back} now names "
                                        f"{new_id}"))


def _settle_link(txn: Any, problem: Any, single: dict[str, Row], report: RepairReport) -> None:
    row = single[problem.id]
    if problem.kind != "one-way":
        report.left.append(Fix(row.path, f"{problem.message}; {problem.fix}"))
        return
    key = problem.key
    other = single.get(str(row.data.get(key)))
    back = "supersedes" if key == "superseded_by" else "superseded_by"
    if other is None or other.data.get(back):
        report.left.append(Fix(row.path, f"{problem.message}; settle it by hand"))
        return
    txn.change(other, _set(back, problem.id))
    report.fixes.append(Fix(other.path, f"{other.id} now has {back}: {problem.id} (the other "
                                        "end of the link)"))


def settle_in_git(store: Store, report: RepairReport, in_progress: bool) -> None:
    """Stage the repaired files while a git operation is stopped (its --continue commits
    them), else commit them."""
    paths = [p for p in report.paths if (store.top / p).exists() or git.tracked(store.top, [p])]
    if not paths:
        return
    if in_progress:
        git.run(store.top, "add", "--", *paths)
        report.staged = paths
        return
    report.commit = git.commit(store.top, paths, git.message(
        "repair", f"{len(report.fixes)} fix(es)", ids_of(report.fixes), body="\n".join(
            f"- {f.path}: {f.what}" for f in report.fixes)))


def ids_of(fixes: Iterable[Fix]) -> list[str]:
    return sorted({w.rstrip(".,;:)") for f in fixes for w in f.what.split()
                   if model.ID_PATTERN.match(w.rstrip(".,;:)"))})
