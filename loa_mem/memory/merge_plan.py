"""The whole-store view of a merge: which ids each side renumbers, and which removals are meant.

git runs the merge driver once per file that both sides changed, and takes every other file
from the side that changed it. Ids are shared by all grimoire files, so an id both branches
created (MEM-20261122-001 as a fact on one, as a decision on the other) may sit in two files
that git merges without us. Every driver call therefore reads the three commits (ours = HEAD,
theirs = the `GITHEAD_<sha>` variable `git merge` sets, base = their merge base) and computes
the same plan: for each id created on both sides for different entries, the copy on the side
whose files git will hand to the driver (theirs when it can) is renumbered to the next free
sequence of its day, counting every id either side ever used, including the events logs.
The plan is deterministic, so all calls of one merge agree; it is cached for the merge.

An id whose copies both live in files only one side changed cannot be fixed by any driver
call: it is reported as `unfixable`, the events-log call stops the merge (exit 1), and
`loa-mem merge-driver --repair` then redoes the memory files of the merge with all of them
in view.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loa_mem.core import events as events_mod
from loa_mem.core import git, githistory, yamlio
from loa_mem.core.errors import LoaMemError
from loa_mem.memory import rules as model
from loa_mem.memory.merge import MEM_ID, Plan, identity, rename_ids

Texts = dict[str, "str | None"]


@dataclass(frozen=True)
class Snapshot:
    """The memory files of one commit (or of one file's three temp versions)."""

    texts: Texts
    events: str = ""


@dataclass(frozen=True)
class Layout:
    grimoires: list[str]
    archives: list[str]
    events: str
    logs: tuple[str, ...] = ()  # the events log's month files (merged as a union, like it)

    @property
    def paths(self) -> list[str]:
        return [*self.grimoires, self.events]


@dataclass(frozen=True)
class Decision:
    plan: Plan
    unfixable: list[str] = field(default_factory=list)


def read_blobs(top: Path, rev: str, paths: list[str]) -> Texts:
    return githistory.read_blobs(top, rev, paths)


def snapshot(top: Path, rev: str, layout: Layout) -> Snapshot:
    texts = read_blobs(top, rev, layout.paths)
    events = texts.pop(layout.events) or ""
    return Snapshot(texts, events)


def _entries(snap: Snapshot) -> dict[str, set[tuple[str, str, str]]]:
    found: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for path, text in snap.texts.items():
        if not text:
            continue
        try:
            items = yamlio.load_list(text, path).items
        except LoaMemError:
            continue
        for item in items:
            data: dict[str, Any] = item.data if isinstance(item.data, dict) else {}
            if isinstance(data.get("id"), str):
                found[data["id"]].add(identity(data))
    return found


def _event_ids(snap: Snapshot) -> tuple[set[str], set[str]]:
    """(every id the events log names, the ids it says are forgotten now)."""
    used: set[str] = set()
    forgotten: set[str] = set()
    for event in events_mod.parse_lines(snap.events):
        ids = {i for i in event.get("ids") or [] if isinstance(i, str) and MEM_ID.fullmatch(i)}
        used |= ids
        if event.get("op") == "forget":
            forgotten |= ids
        elif event.get("op") == "restore":
            forgotten -= ids
    return used, forgotten


def _mentions(snap: Snapshot) -> dict[str, set[str]]:
    """Every id named anywhere in the snapshot's files, and the files that name it."""
    found: dict[str, set[str]] = defaultdict(set)
    for path, text in snap.texts.items():
        for memory_id in set(MEM_ID.findall(text or "")):
            found[memory_id].add(path)
    return found


def _data(snap: Snapshot, paths: list[str]) -> dict[str, Any]:
    """Each entry's data in the files `paths` of the snapshot (a file that does not parse: none)."""
    found: dict[str, Any] = {}
    for path in paths:
        try:
            items = yamlio.load_list(snap.texts.get(path) or "", path).items
        except LoaMemError:
            continue
        found.update((i.data["id"], i.data) for i in items if isinstance(i.data, dict)
                     and isinstance(i.data.get("id"), str))
    return found


def carried(base: Snapshot, side: Snapshot, other: Snapshot, layout: Layout
            ) -> dict[str, tuple[Any, Any]]:
    """The entries `side` moved into an archive file that `other` changed where they were (a
    supersede, feedback): id -> (its base version, `other`'s). git merges the archive file
    only when both sides changed it; then the archived copy takes that change too."""
    def named(snap: Snapshot) -> set[str]:
        return {i for p in layout.archives for i in MEM_ID.findall(snap.texts.get(p) or "")}

    if not named(side) - named(base):  # no id new in its archive files: nothing moved there
        return {}
    moved = set(_data(side, layout.archives)) - set(_data(base, layout.archives))
    active = [p for p in layout.grimoires if p not in layout.archives]
    before, after = _data(base, active), _data(other, active)
    return {i: (before[i], after[i]) for i in sorted(moved)
            if i in before and i in after and after[i] != before[i]}


def _retired(snap: Snapshot, layout: Layout, forgotten: set[str]) -> frozenset[str]:
    archived = set()
    for path in layout.archives:
        archived |= set(MEM_ID.findall(snap.texts.get(path) or ""))
    return frozenset(archived | forgotten)


@dataclass
class _Sides:
    base: Snapshot
    ours: Snapshot
    theirs: Snapshot
    driven: set[str]

    def collisions(self) -> tuple[list[str], set[str]]:
        entries = [_entries(s) for s in (self.base, self.ours, self.theirs)]
        snaps = (self.base, self.ours, self.theirs)
        used = [set(e) | _event_ids(s)[0] for e, s in zip(entries, snaps, strict=True)]
        both = (used[1] - used[0]) & (used[2] - used[0])
        clashes = [i for i in sorted(both, key=model.id_order)
                   if not (entries[1].get(i) and entries[1].get(i) == entries[2].get(i))]
        return clashes, used[0] | used[1] | used[2]


def driven_paths(sides: tuple[Snapshot, Snapshot, Snapshot], layout: Layout) -> set[str]:
    """The grimoire files git will hand to the merge driver: changed on both sides."""
    base, ours, theirs = (s.texts for s in sides)
    return {p for p in layout.grimoires
            if ours.get(p) is not None and theirs.get(p) is not None and ours[p] != theirs[p]
            and ours[p] != base.get(p) and theirs[p] != base.get(p)}


def decide(sides: _Sides, layout: Layout, later: str, label: str) -> Decision:
    clashes, used = sides.collisions()
    high: dict[str, int] = defaultdict(int)
    for memory_id in used:
        legacy = model.split_legacy(memory_id)
        if legacy is not None:
            high[legacy[0]] = max(high[legacy[0]], legacy[1])
    rename_ours: dict[str, str] = {}
    rename_theirs: dict[str, str] = {}
    unfixable: list[str] = []
    named_theirs, named_ours = _mentions(sides.theirs), _mentions(sides.ours)
    for memory_id in clashes:
        in_theirs, in_ours = named_theirs.get(memory_id, set()), named_ours.get(memory_id, set())
        if not (in_theirs and in_ours):
            continue
        if in_theirs <= sides.driven:
            target = rename_theirs
        elif in_ours <= sides.driven:
            target = rename_ours
        else:
            unfixable.append(memory_id)
            continue
        target[memory_id] = _fresh_id(memory_id, high, used)
    forgotten_ours = _event_ids(sides.ours)[1]
    forgotten_theirs = _event_ids(sides.theirs)[1]
    plan = Plan(rename_ours, rename_theirs, _retired(sides.ours, layout, forgotten_ours),
                _retired(sides.theirs, layout, forgotten_theirs), later, label)
    return Decision(plan, unfixable)


def _fresh_id(memory_id: str, high: dict[str, int], used: set[str]) -> str:
    """The id a clashing copy gets: a legacy id the next free sequence of its day (the same on
    every driver call of one merge), any other id a new random one that neither side used."""
    legacy = model.split_legacy(memory_id)
    if legacy is not None:
        high[legacy[0]] += 1
        return model.format_id(legacy[0], high[legacy[0]])
    return model.unused_id(memory_id, used)


# -- finding the three commits ---------------------------------------------------------------
def theirs_commit() -> tuple[str, str] | None:
    """(sha, name) of the branch `git merge` is merging in, from its GITHEAD_<sha> variable."""
    heads = [(k[len("GITHEAD_"):], v) for k, v in os.environ.items() if k.startswith("GITHEAD_")]
    return heads[0] if len(heads) == 1 else None


def merge_head(top: Path) -> tuple[str, str] | None:
    sha = git.run(top, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).strip()
    return (sha, sha[:10]) if sha else None


def _later(top: Path, ours: str, theirs: str) -> str:
    times = git.run(top, "show", "-s", "--format=%ct", ours, theirs).split()
    return "ours" if len(times) == 2 and int(times[0]) > int(times[1]) else "theirs"


def whole_store(top: Path, layout: Layout, theirs: tuple[str, str], force: bool,
                path: str | None = None) -> Decision:
    """The plan for merging `theirs` into HEAD, computed once per merge and cached; for an
    archive file (`path`, or every file with `force`), with the changes its copies take."""
    ours_sha = git.run(top, "rev-parse", "HEAD").strip()
    key = f"{ours_sha}:{theirs[0]}:{int(force)}"
    cache = git.git_dir(top) / "loa-mem" / "merge-plan.json"
    decision = _read_cache(cache, key)
    carry = force or path in layout.archives
    if decision is not None and not carry:
        return decision
    base_sha = git.run(top, "merge-base", ours_sha, theirs[0], check=False).strip()
    snaps = tuple(snapshot(top, rev, layout) if rev else Snapshot({})
                  for rev in (base_sha, ours_sha, theirs[0]))
    if decision is None:
        driven = set(layout.grimoires) if force else driven_paths(snaps, layout)  # type: ignore[arg-type]
        sides = _Sides(snaps[0], snaps[1], snaps[2], driven)
        decision = decide(sides, layout, _later(top, ours_sha, theirs[0]), theirs[1])
        _write_cache(cache, key, decision)
    if not carry:
        return decision
    plan = replace(decision.plan, carry_ours=carried(snaps[0], snaps[1], snaps[2], layout),
                   carry_theirs=carried(snaps[0], snaps[2], snaps[1], layout))
    return Decision(plan, decision.unfixable)


def one_file(top: Path, layout: Layout, path: str, texts: tuple[str, str, str],
             files: tuple[Path, Path] | None = None) -> Decision:
    """The plan when the other branch is unknown (rebase, cherry-pick): this file's three
    versions, plus every id HEAD's store holds or ever used. What the commit being replayed
    forgot or archived is retired on its side, as a merge finds it in the other branch's
    events log. A rebase names that commit; a lone cherry-pick does not, so it is the commit
    that turned the base version (`files`: the base's and theirs' temp files) into theirs."""
    head = snapshot(top, "HEAD", layout) if git.has_commits(top) else Snapshot({})
    ours = Snapshot({**head.texts, path: texts[1]}, head.events)
    replayed = replayed_commit(top)
    if replayed is None and files is not None and path in layout.grimoires:
        replayed = githistory.commit_that_made(top, path, *files)
    if replayed is None:
        sides = _Sides(Snapshot({path: texts[0]}), ours, Snapshot({path: texts[2]}), {path})
        return decide(sides, layout, "theirs", "theirs")
    # the base is the replayed commit's parent, whole: an id its other files or its events
    # log name (an entry forgotten there, restored by the commit) was not created by both
    before, after = _replayed(top, layout, replayed)
    base = Snapshot({**before.texts, path: texts[0]}, before.events)
    decision = decide(_Sides(base, ours, Snapshot({path: texts[2]}), {path}), layout, "theirs",
                      "theirs")
    retired = _retired(after, layout, _event_ids(after)[1]) - _retired(
        before, layout, _event_ids(before)[1])
    plan = replace(decision.plan, retired_theirs=decision.plan.retired_theirs | retired)
    if path in layout.archives:
        plan = replace(plan, carry_ours=carried(before, ours, after, layout),
                       carry_theirs=carried(before, after, ours, layout))
    return Decision(plan, decision.unfixable)


def _replayed(top: Path, layout: Layout, sha: str) -> tuple[Snapshot, Snapshot]:
    """The memory files before and after commit `sha`."""
    parent = git.run(top, "rev-parse", "-q", "--verify", f"{sha}^", check=False).strip()
    before, after = (snapshot(top, rev, layout) if rev else Snapshot({}) for rev in (parent, sha))
    return before, after


def replayed_commit(top: Path) -> str | None:
    """The commit a rebase or a cherry-pick replays: the last line of the rebase's `done` list
    while it runs, CHERRY_PICK_HEAD once a cherry-pick stopped (git names no commit to the
    driver of a lone cherry-pick)."""
    gdir = git.git_dir(top)
    try:
        done = (gdir / "rebase-merge" / "done").read_text(encoding="utf-8")
    except OSError:
        done = ""
    picks = [line.split() for line in done.splitlines() if line.strip()[:1] not in ("", "#")]
    name = picks[-1][1] if picks and len(picks[-1]) > 1 else None
    if name is None and (gdir / "CHERRY_PICK_HEAD").exists():
        name = "CHERRY_PICK_HEAD"
    if name is None:
        return None
    found = git.run(top, "rev-parse", "-q", "--verify", f"{name}^{{commit}}",
                    check=False).strip()
    return found or None


def retired_by(top: Path, layout: Layout, sha: str | None) -> frozenset[str]:
    """The ids commit `sha` itself forgot or archived."""
    if sha is None:
        return frozenset()
    before, after = (_retired(s, layout, _event_ids(s)[1]) for s in _replayed(top, layout, sha))
    return after - before


def _read_cache(path: Path, key: str) -> Decision | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("key") != key:
        return None
    plan = data["plan"]
    return Decision(Plan(plan["rename_ours"], plan["rename_theirs"],
                         frozenset(plan["retired_ours"]), frozenset(plan["retired_theirs"]),
                         plan["later"], plan["theirs_label"]), data["unfixable"])


def _write_cache(path: Path, key: str, decision: Decision) -> None:
    from loa_mem.core.filewrite import atomic_write

    plan = decision.plan
    data: dict[str, Any] = {"key": key, "unfixable": decision.unfixable, "plan": {
        "rename_ours": plan.rename_ours, "rename_theirs": plan.rename_theirs,
        "retired_ours": sorted(plan.retired_ours), "retired_theirs": sorted(plan.retired_theirs),
        "later": plan.later, "theirs_label": plan.theirs_label}}
    atomic_write(path, json.dumps(data))


DRIVER_ACTOR = "tool:loa-mem-merge-driver"


def union_events(base: str, ours: str, theirs: str, plan: Plan) -> str:
    """Both sides' lines (ours first), renamed ids applied to each side's new lines, and one
    `renumber` event per renamed id. A line of the base that theirs no longer has goes: the
    log only grows, except when a commit is reverted (git then merges the commit's parent in
    as theirs), and a reverted forget must not stay in the log as if it held."""
    old = set(base.splitlines())
    gone: dict[str, int] = {}
    for line in events_mod.unmatched(base.splitlines(), theirs.splitlines()):
        gone[line] = gone.get(line, 0) + 1
    out = []
    for line in ours.splitlines():
        if not line.strip():
            continue
        if gone.get(line, 0) > 0:
            gone[line] -= 1
            continue
        out.append(line if line in old else rename_ids(line, plan.rename_ours))
    seen = set(out)
    for line in theirs.splitlines():
        renamed = rename_ids(line, plan.rename_theirs)
        if line.strip() and line not in old and renamed not in seen:
            out.append(renamed)
            seen.add(renamed)
    for side, mapping in (("ours", plan.rename_ours), ("theirs", plan.rename_theirs)):
        for before, after in sorted(mapping.items()):
            event = events_mod.make("renumber", [after, before], DRIVER_ACTOR,
                                "the id was created on both branches", side=side)
            out.append(json.dumps(event, ensure_ascii=False))
    return "".join(line + "\n" for line in out)
