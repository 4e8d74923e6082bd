"""merge-driver: what git runs to merge a memory file, and its --repair after a stopped merge.

git runs `loa-mem merge-driver %O %A %B %P` inside `git merge` (and rebase, cherry-pick) with
the index locked: the driver reads the three temp files and the repository's objects, writes
only %A, and never touches the index. Grimoire files merge by entry id (`merge.py`), the events
log merges as a union of lines, and anything else falls back to git's own line merge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loa_mem.core import git
from loa_mem.core.errors import LoaMemError, NotARepo, NothingToDo
from loa_mem.core.filewrite import atomic_write
from loa_mem.core.textfile import own_ending
from loa_mem.memory.merge import Plan, merge_texts
from loa_mem.memory.merge_plan import (
    Decision,
    Layout,
    Snapshot,
    merge_head,
    one_file,
    snapshot,
    theirs_commit,
    union_events,
    whole_store,
)
from loa_mem.memory.repair import Fix, RepairReport
from loa_mem.memory.store import Store

DRIVER_NAME = "loa-mem"


@dataclass(frozen=True)
class FileMerge:
    path: str
    mode: str
    conflicts: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    unfixable: list[str] = field(default_factory=list)
    note: str = ""
    settled: list[str] = field(default_factory=list)  # repair: changed two ways, ours kept

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.unfixable

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode, "ok": self.ok,
                "conflicts": self.conflicts, "renamed": self.renamed,
                "unfixable": self.unfixable, "note": self.note or None}


def layout(top: Path, merging: str | None = None) -> Layout:
    """The memory files; with `merging`, also that file when it is a month file this working
    tree does not have yet (both branches started the same month's file)."""
    store = Store.open(str(top))
    grimoires = [g.path for g in store.grimoire_files()]
    archives = [g.path for g in store.grimoire_files() if g.in_archive]
    logs = store.event_logs()
    if merging and merging not in grimoires and merging not in logs:
        if _matches(merging, store.merged_patterns()):
            grimoires.append(merging)
            if merging.startswith(store.config.archive_dir + "/"):
                archives.append(merging)
        elif _matches(merging, store.event_patterns()):
            logs.append(merging)
    return Layout(grimoires, archives, logs[0], tuple(logs[1:]))


def _matches(path: str, patterns: list[str]) -> bool:
    """Whether `path` is in the folder of a `folder/*.ext` pattern, with that extension."""
    folder, _, name = path.rpartition("/")
    return any(p.startswith(folder + "/*.") and name.endswith(p[len(folder) + 2:])
               for p in patterns if "/*." in p)


def line_merge(ours: Path, base: Path, theirs: Path, label: str, marker: int) -> int:
    return git.merge_file(ours, base, theirs, label, marker)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _guess_path(top: Path, lay: Layout, ours_text: str) -> str | None:
    """Which memory file git is merging, when %P was not passed: the one HEAD holds as %A."""
    from loa_mem.memory.merge_plan import read_blobs

    if not git.has_commits(top):
        return None
    matches = [p for p, t in read_blobs(top, "HEAD", lay.paths).items() if t == ours_text]
    return matches[0] if len(matches) == 1 else None


def _decision(top: Path, lay: Layout, path: str, texts: tuple[str, str, str],
              files: tuple[Path, Path]) -> Decision:
    theirs = theirs_commit()
    if theirs is not None:
        return whole_store(top, lay, theirs, force=False, path=path)
    return one_file(top, lay, path, texts, files)


def run_driver(base: Path, ours: Path, theirs: Path, path: str | None = None,
               marker: int = 7) -> FileMerge:
    top = git.find_top(Path.cwd())
    if top is None:
        raise NotARepo("the merge driver runs inside a git working tree", "run it from git")
    lay = layout(top, path)
    texts = (_read(base), _read(ours), _read(theirs))
    path = path or _guess_path(top, lay, texts[1]) or ours.name
    if path.endswith(".json") and path not in lay.paths:
        merged_json = _merge_json_files(texts)
        if merged_json is not None:
            ours.write_text(own_ending(ours, merged_json), encoding="utf-8", newline="")
            return FileMerge(path, "json")
    if _is_sidecar(top, path):
        merged_sidecar = _merge_sidecar_files(texts, path)
        if merged_sidecar is not None:
            ours.write_text(own_ending(ours, merged_sidecar), encoding="utf-8", newline="")
            return FileMerge(path, "sidecar")
    if path not in lay.paths and path not in lay.logs:
        label = theirs_commit()
        count = line_merge(ours, base, theirs, label[1] if label else "theirs", marker)
        return FileMerge(path, "lines", ["(lines)"] * count)
    decision = _decision(top, lay, path, texts, (base, theirs))
    # the texts were read with universal newlines: written back with ours' own line ending
    if path == lay.events or path in lay.logs:
        ours.write_text(own_ending(ours, union_events(*texts, decision.plan)), encoding="utf-8",
                        newline="")
        return FileMerge(path, "events", [], {}, decision.unfixable)
    try:
        merged = merge_texts(texts, decision.plan, path, marker)
    except LoaMemError as error:
        count = line_merge(ours, base, theirs, decision.plan.theirs_label, marker)
        return FileMerge(path, "lines", ["(lines)"] * count,
                         note=f"merged line by line: {error.one_line()}")
    ours.write_text(own_ending(ours, merged.text), encoding="utf-8", newline="")
    return FileMerge(path, "by-id", merged.conflicts, merged.renamed)


def _merge_json_files(texts: tuple[str, str, str]) -> str | None:
    from loa_mem.agents.merge import merge_value

    try:
        base, ours, theirs = (json.loads(t) if t.strip() else {} for t in texts)
    except ValueError:
        return None
    return json.dumps(merge_value(base, ours, theirs), indent=2, ensure_ascii=False) + "\n"


def _is_sidecar(top: Path, path: str) -> bool:
    folder = str(Store.open(str(top)).config.section("agents").get("dir") or "")
    return bool(folder) and path.startswith(folder.rstrip("/") + "/") and path.endswith(".yaml")


def _merge_sidecar_files(texts: tuple[str, str, str], path: str) -> str | None:
    """An agent's sidecar changed on both branches, merged by memory (see `agents.merge`);
    None when a version does not parse (git's line merge then shows both)."""
    from loa_mem.agents.merge import merge_sidecar
    from loa_mem.core import yamledit, yamlio

    try:
        base, ours, theirs = (yamlio.load(t, path) if t.strip() else {} for t in texts)
        if not all(isinstance(v, dict) for v in (base, ours, theirs)):
            return None
        merged = merge_sidecar(base, ours, theirs)
        document = yamledit.round_trip_load(texts[1], path)
        for key in [k for k in document if k not in merged]:
            del document[key]
        for key, value in merged.items():
            if yamledit.plain(document.get(key)) != value:
                document[key] = value
        return str(yamledit.round_trip_dump(document))
    except LoaMemError:
        return None


def _merge_one(path: str, lay: Layout, snaps: tuple[Snapshot, Snapshot, Snapshot],
               plan: Plan) -> tuple[FileMerge, str] | None:
    if path == lay.events:
        base_log, ours_log, theirs_log = (s.events for s in snaps)
        return FileMerge(path, "events"), union_events(base_log, ours_log, theirs_log, plan)
    base, ours, theirs = (s.texts.get(path) for s in snaps)
    if ours is None and theirs is None:
        return None
    merged = merge_texts((base or "", ours or "", theirs or ""), plan, path)
    return FileMerge(path, "by-id", merged.conflicts, merged.renamed,
                     settled=merged.settled), merged.text


def _redo_merge(store: Store, theirs: tuple[str, str], report: RepairReport) -> None:
    """A stopped `git merge`: redo its memory files by id with every file in view (the three
    commits are known), which also renumbers legacy ids both branches created."""
    top = store.top
    lay = layout(top)
    decision = whole_store(top, lay, theirs, force=True)
    plan = replace(decision.plan, settle_with_ours=True)
    base_sha = git.run(top, "merge-base", "HEAD", theirs[0], check=False).strip()
    snaps = (snapshot(top, base_sha, lay) if base_sha else Snapshot({}),
             snapshot(top, "HEAD", lay), snapshot(top, theirs[0], lay))
    for path in lay.paths:
        outcome = _merge_one(path, lay, snaps, plan)
        if outcome is None:
            continue
        result, text = outcome
        atomic_write(top / path, own_ending(top / path, text))
        report.paths.append(path)
        report.fixes.append(Fix(path, "merged the events log as a union of both sides" if (
            result.mode == "events") else "merged both sides by entry id"))
        report.fixes.extend(Fix(path, f"{old} was created on both branches for different "
                                      f"entries: the other branch's copy is now {new}")
                            for old, new in result.renamed.items())
        report.fixes.extend(Fix(path, f"{memory_id} was changed differently on both sides; "
                                      "kept ours where no rule decides (git show MERGE_HEAD:"
                                      f"{path} has the other version)")
                            for memory_id in result.settled)


def repair(root: str | None) -> RepairReport:
    """Put the store right after any git operation (see `repair.py`)."""
    from loa_mem.core import gitstate
    from loa_mem.memory.repair import relink, repair_conflicted, settle_in_git

    store = Store.open(root)
    report = RepairReport()
    in_progress = gitstate.state_problem(store.top) is not None
    theirs = merge_head(store.top)
    if theirs is not None:
        _redo_merge(store, theirs, report)
    else:
        repair_conflicted(store, report)
    store.close()
    store = Store.open(root)
    relink(store, report)
    settle_in_git(store, report, in_progress)
    store.close()
    if not report.fixes and not report.left:
        raise NothingToDo("nothing to repair: every memory file parses, ids are unique and "
                          "links agree", "`loa-mem validate` checks everything else")
    return report


# -- registration (init) ---------------------------------------------------------------------
ATTRIBUTES = ".gitattributes"


def register_driver(store: Store) -> list[str]:
    """At init: the attribute lines in the committed `.gitattributes` (so other tools and
    readers see how memory files merge) and this clone's set-up; the paths of files changed
    (for init to commit). Other clones set themselves up (`clonesetup`)."""
    from loa_mem.core import clonesetup

    grimoires = store.merged_patterns()
    wanted = clonesetup.attribute_lines(grimoires, store.event_patterns(), store.other_merged())
    target = store.top / ATTRIBUTES
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    # a line of an older loa-mem for the same path (events.jsonl merge=loa-mem) is replaced
    paths = {line.split()[0] for line in wanted}
    kept = [line for line in text.splitlines(keepends=True)
            if not (line.strip() not in wanted and line.split()[:1] and
                    line.split()[0] in paths and "merge=loa-mem" in line)]
    missing = [line for line in wanted if line not in present]
    changed: list[str] = []
    if missing or len(kept) != len(text.splitlines()):
        body = "".join(kept)
        lead = "" if not body or body.endswith("\n") else "\n"
        note = [] if clonesetup.ATTRIBUTES_NOTE in present else [clonesetup.ATTRIBUTES_NOTE]
        atomic_write(target, body + lead + "".join(f"{line}\n" for line in note + missing))
        changed.append(ATTRIBUTES)
    clonesetup.ensure(store.top, grimoires, store.event_patterns(), store.other_merged())
    return changed


def drive(base: Path, ours: Path, theirs: Path, path: str | None, marker: int) -> FileMerge:
    """run_driver, with git's line merge as the fallback when anything goes wrong, so that a
    broken file or a bug never loses the other side's lines."""
    try:
        return run_driver(base, ours, theirs, path, marker)
    except Exception as error:  # the merge must still produce a file
        count = line_merge(ours, base, theirs, "theirs", marker)
        detail = error.one_line() if isinstance(error, LoaMemError) else type(error).__name__
        return FileMerge(path or ours.name, "lines", ["(lines)"] * count,
                         note=f"merged line by line: {detail}")
