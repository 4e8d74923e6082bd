"""gc: the exhale of the working set, and the archiving of memory entries (spec section 7).

The five steps of MOOLLM's protocol, in one transaction and one commit:

1. **Mark**: the cold files are those on the cold list (the model's honored hints, each with its
   suggested action) and those on the hot list untouched for `untouched_turns` turns or
   `untouched_minutes` minutes (summarized first when longer than `summarize_over_lines`).
   Under budget pressure, more hot files leave, least hot first, until the working set is back
   under 80% of the budget. Pinned files and files that must be kept are never marked.
2. **Summarize**: `summarize_then_evict` writes a summary (the configured summarizer, else the
   built-in extractive one), which joins the hot list in the file's place.
3. **Update sidecars**: summarized_in/summary_date, archived_in/archive_date, compressed_date,
   hotness.
4. **Update the working set**: the files leave hot.yml and cold.yml.
5. **Log**: one `gc` event holding the gc_report (YAML), and a commit message listing every
   action and why.

Memory entries that are expired, superseded or ineffective move to the archive (when
`lifecycle.auto_archive` is on). Archived files move to `working_set.archive_dir`; compressed
files keep their original in the commit before gc; `loa-mem restore PATH` brings either back.

`tokens_freed` is the working set's size before minus after, in the one estimator of
`loa_mem/tokens.py` (ceil(bytes / 4)): evicted, summarized and archived files count whole, a
summary that takes a file's place counts against it, a compressed file counts what it lost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import git, tokens, yamlio
from loa_mem.core.errors import Refused
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta
from loa_mem.workingset import summarize as summ
from loa_mem.workingset.collect_plan import (
    ARCHIVED,
    COMPRESSED,
    DEFERRED,
    EVICTED,
    FORGOTTEN,
    LEAVING,
    OVERRIDDEN,
    RETENTION,
    SUMMARIZED,
    Plan,
    Step,
    plan,
)

TRIGGERS = ("session_end", "explicit", "budget_pressure", "time")


@dataclass(frozen=True)
class GcAction:
    path: str
    action: str
    reason: str
    tokens: int | None = None
    summary: str | None = None
    id: str | None = None
    to: str | None = None
    original_commit: str | None = None
    postmortem: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "action": self.action,
                                "summary": self.summary, "reason": self.reason,
                                "tokens": self.tokens}
        for key in ("id", "to", "original_commit", "postmortem"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data


@dataclass(frozen=True)
class GcResult:
    triggered_by: str
    timestamp: str
    actions: list[GcAction]
    tokens_freed: int
    files_affected: int
    dry_run: bool
    working_set: dict[str, Any]
    note: str = ""
    commit: str | None = None

    def report(self) -> dict[str, Any]:
        return {"triggered_by": self.triggered_by, "timestamp": self.timestamp,
                "actions": [a.to_json() for a in self.actions],
                "tokens_freed": self.tokens_freed, "files_affected": self.files_affected}

    def to_json(self) -> dict[str, Any]:
        return {"gc_report": self.report(), "dry_run": self.dry_run, "commit": self.commit,
                "working_set": self.working_set, "note": self.note}


class _DryRun:
    """Stands in for a transaction in a dry run: everything is computed, nothing is written."""

    def __init__(self) -> None:
        self.what = ""
        self.body = ""
        self.commit_sha: str | None = None

    def put(self, rel_path: str, text: str | bytes) -> None:
        del rel_path, text

    def delete(self, rel_path: str) -> None:
        del rel_path

    def event(self, *args: Any, **details: Any) -> None:
        del args, details

    def add_text(self, *args: Any) -> None:
        del args

    def remove(self, row: Any) -> None:
        del row


@dataclass
class _Run:
    plan: Plan
    txn: Any
    actor: str
    dry_run: bool
    actions: list[GcAction] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    unlink_after: list[str] = field(default_factory=list)
    sidecars: dict[str, meta.Sidecar] = field(default_factory=dict)
    summary_tokens: int = 0
    head: str | None = None
    seconds: float | None = None  # the time budget; what does not fit waits for the next gc
    deadline: float | None = None

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def deferred(self) -> str:
        return f"time budget of {self.seconds:g} s spent; the next gc does it"

    @property
    def top(self) -> Path:
        return Path(self.plan.store.top)

    def sidecar(self, path: str, create: bool) -> meta.Sidecar | None:
        if path not in self.sidecars:
            found = meta.ensure(self.top, path, self.actor) if create else meta.load(
                self.top, path)
            if found is None:
                return None
            self.sidecars[path] = found
        return self.sidecars[path]


def _summary_path(run: _Run, source: str) -> str:
    s = run.plan.settings
    base = summ.default_name([source])
    rel, n = summ.summary_rel(s, base), 2
    while rel in run.written:
        rel, n = summ.summary_rel(s, f"{base}-{n}"), n + 1
    return rel


def _summarize(run: _Run, step: Step) -> GcAction:
    p, now = run.plan, run.plan.now
    rel = _summary_path(run, step.path)
    if run.dry_run and p.settings.summarizer_command:
        body, method = "(written by the summarizer command when gc runs)", "command"
    else:
        body, method = summ.produce(run.top, p.settings, [step.path], "bullet", None)
    content = summ.document(p.settings, rel, [step.path], "bullet", method, now, body)
    run.txn.put(rel, content)
    run.written.add(rel)
    sidecar = run.sidecar(step.path, create=True)
    assert sidecar is not None
    sidecar.set("summarized_in", rel)
    sidecar.set("summary_date", now)
    p.manifests.drop_hot(step.path)
    p.manifests.drop_cold(step.path)
    p.manifests.touch(rel, f"summary of {step.path}, written by gc", now, count=0)
    size = tokens.estimate(content)
    run.summary_tokens += size
    return GcAction(step.path, SUMMARIZED, step.reason, step.tokens - size, rel)


def _archive(run: _Run, step: Step, tracked: set[str]) -> GcAction:
    p = run.plan
    to = f"{p.settings.archive_dir}/{step.path}"
    run.txn.put(to, (run.top / step.path).read_bytes())
    if step.path in tracked:
        run.txn.delete(step.path)
    else:
        run.unlink_after.append(step.path)
    run.written.add(to)
    sidecar = run.sidecar(step.path, create=True)
    assert sidecar is not None
    sidecar.set("archived_in", to)
    sidecar.set("archive_date", p.now)
    cold = p.manifests.cold_item(step.path)
    postmortem = cold.get("postmortem") if cold is not None else None
    if isinstance(postmortem, str) and postmortem:
        sidecar.set("postmortem", postmortem)
    else:
        postmortem = None
    p.manifests.drop_hot(step.path)
    p.manifests.drop_cold(step.path)
    return GcAction(step.path, ARCHIVED, step.reason, step.tokens, to=to, postmortem=postmortem)


def _compress(run: _Run, step: Step) -> GcAction:
    from loa_mem.workingset import extractive

    p = run.plan
    text = (run.top / step.path).read_text(encoding="utf-8")
    smaller = extractive.compress(text)
    run.txn.put(step.path, smaller)
    sidecar = run.sidecar(step.path, create=True)
    assert sidecar is not None
    sidecar.set("compressed_date", p.now)
    p.manifests.drop_cold(step.path)
    if run.head is None:
        run.head = git.run(p.store.top, "rev-parse", "HEAD").strip()
    freed = tokens.estimate_bytes(len(text.encode())) - tokens.estimate_bytes(
        len(smaller.encode()))
    return GcAction(step.path, COMPRESSED, step.reason, freed, original_commit=run.head)


def _apply_files(run: _Run) -> None:
    p = run.plan
    archived = [s.path for s in p.steps if s.action == ARCHIVED]
    tracked = git.tracked(p.store.top, archived) if archived else set()
    for step in p.steps:
        if step.action in (SUMMARIZED, ARCHIVED, COMPRESSED, EVICTED) and run.out_of_time():
            action = GcAction(step.path, DEFERRED, run.deferred(), None)
        elif step.action == SUMMARIZED:
            action = _summarize(run, step)
        elif step.action == ARCHIVED:
            action = _archive(run, step, tracked)
        elif step.action == COMPRESSED:
            action = _compress(run, step)
        else:
            if step.action == EVICTED:
                p.manifests.drop_hot(step.path)
            if step.action != DEFERRED:
                p.manifests.drop_cold(step.path)
            action = GcAction(step.path, step.action, step.reason,
                              step.tokens if step.action == EVICTED else None)
        run.actions.append(action)


def _apply_entries(run: _Run) -> None:
    from loa_mem.memory.commands.lifecycle import move_to_archive

    store = run.plan.store
    for reason, rows in run.plan.entries:
        if run.out_of_time():
            run.actions += [GcAction(row.path, DEFERRED, run.deferred(), None, id=row.id)
                            for row in rows]
            continue
        if reason == RETENTION:
            _forget_past_retention(run, rows)
            continue
        if not run.dry_run:
            move_to_archive(store, run.txn, rows, reason)
        for row in rows:
            to = store.file_for(str(row.data.get("category")), True)
            run.actions.append(GcAction(row.path, ARCHIVED, reason, None, id=row.id, to=to))


def _forget_past_retention(run: _Run, rows: list[Any]) -> None:
    """Forget archived entries kept past their retention, as `forget` does: removed from the
    archive file, logged, committed, and `restore ID` brings each back from history."""
    days = run.plan.store.config.lifecycle["archive_retention_days"]
    why = (f"archived more than {days} days ago "
           "(memory_schema.lifecycle.archive_retention_days)")
    for row in rows:
        if not run.dry_run:
            run.txn.remove(row)
            run.txn.event("forget", [row.id], why, path=row.path)
        run.actions.append(GcAction(row.path, FORGOTTEN, why, None, id=row.id))


def _update_sidecars(run: _Run) -> None:
    p = run.plan
    for step in p.steps:
        if step.action in (DEFERRED, OVERRIDDEN):
            continue
        sidecar = run.sidecar(step.path, create=False)
        if sidecar is None:
            continue
        value = 0.0 if step.action == ARCHIVED else ws.hotness(p.manifests, step.path,
                                                                 sidecar.pinned)[0]
        sidecar.set("hotness", value)
    for sidecar in run.sidecars.values():
        sidecar.stamp(p.now)
        if sidecar.changed:
            run.txn.put(sidecar.path, sidecar.text())


def _changed(run: _Run) -> bool:
    return any(a.action != DEFERRED for a in run.actions)


def _log(run: _Run, result: GcResult) -> None:
    p = run.plan
    for rel, text in p.manifests.texts(p.now).items():
        run.txn.put(rel, text)
    ids = [a.id for a in run.actions if a.id]
    files = [{k: v for k, v in a.to_json().items() if k in ("path", "action", "summary", "to",
                                                              "original_commit", "postmortem")
              and v}
             for a in run.actions if a.id is None and a.action in (*LEAVING, COMPRESSED)]
    run.txn.event("gc", ids, f"trigger: {p.trigger}",
                  report_yaml=yamlio.dump({"gc_report": result.report()}), files=files or None)
    run.txn.what = f"{_tally(run.actions)} ({p.trigger})"
    run.txn.body = "\n".join(
        f"- {a.action}: {a.id + ' in ' if a.id else ''}{a.path}"
        f"{' -> ' + (a.summary or a.to or '') if (a.summary or a.to) else ''}: {a.reason}"
        f"{'; postmortem: ' + a.postmortem if a.postmortem else ''}" for a in run.actions)


def _tally(actions: list[GcAction]) -> str:
    counts: dict[str, int] = {}
    for action in actions:
        noun = "entr" if action.id else "file"
        counts[f"{action.action} {noun}"] = counts.get(f"{action.action} {noun}", 0) + 1
    return ", ".join(f"{n} {key}{('y' if n == 1 else 'ies') if key.endswith('entr') else ''}"
                     f"{'s' if n != 1 and key.endswith('file') else ''}"
                     for key, n in counts.items())


def _result(run: _Run) -> GcResult:
    """The report, computed before anything is written (a dry run and a real run see the same
    files, so they report the same numbers): `tokens_freed` is the sum of the rows' tokens,
    `files_affected` the distinct files the rows name (path, summary, to) for what was done."""
    p = run.plan
    leaving = {a.path for a in run.actions if a.id is None and a.action in LEAVING}
    after = [x for x in p.manifests.working_set() if x not in leaving]
    compressed = sum(a.tokens or 0 for a in run.actions
                     if a.action == COMPRESSED and a.path in after)
    tokens_after = (sum(ws.file_tokens(run.top, x) for x in after if x not in run.written)
                    + run.summary_tokens - compressed)
    acted = [a for a in run.actions if a.action not in (DEFERRED, OVERRIDDEN)]
    files = {f for a in acted for f in (a.path, a.summary, a.to) if f}
    freed = max(0, sum(a.tokens or 0 for a in acted))
    working = {**p.working, "files_after": len(after), "tokens_after": max(0, tokens_after)}
    return GcResult(p.trigger, p.now, run.actions, freed, len(files), run.dry_run, working,
                    p.note)


def _run(store: Any, txn: Any, trigger: str, budget: int | None, actor: str,
         dry_run: bool, seconds: float | None = None) -> tuple[GcResult, _Run]:
    start = time.monotonic()
    run = _Run(plan(store, trigger, budget), txn, actor, dry_run, seconds=seconds,
               deadline=None if seconds is None else start + seconds)
    if run.plan.acts:
        _apply_files(run)
        _apply_entries(run)
        _update_sidecars(run)
    result = _result(run)
    if not dry_run and _changed(run):
        _log(run, result)
    return result, run


def gc(store: Any, trigger: str = "explicit", budget: int | None = None, dry_run: bool = False,
       actor: str = "user:unknown", commit: bool = True, seconds: float | None = None
       ) -> GcResult:
    """`seconds`: a time budget; actions that would start after it are deferred to the next
    gc (reported as deferred), so a hook with a time limit ends in time and loses nothing."""
    if trigger not in TRIGGERS:
        raise Refused("unknown --trigger", f"use one of: {', '.join(TRIGGERS)}")
    if budget is not None and budget < 1:
        raise Refused(f"budget {budget} is not a positive number of tokens", "pass --budget N")
    if seconds is not None and not 0 <= seconds <= 3600:  # nan too
        raise Refused(f"time budget {seconds} is not 0 to 3600 seconds",
                      "pass --time-budget SECONDS, for example 1")
    if dry_run:
        result, _ = _run(store, _DryRun(), trigger, budget, actor, True, seconds)
        return result
    with store.write("gc", actor, commit) as txn:
        result, run = _run(store, txn, trigger, budget, actor, False, seconds)
    for rel in run.unlink_after:
        (run.top / rel).unlink(missing_ok=True)
    return GcResult(result.triggered_by, result.timestamp, result.actions, result.tokens_freed,
                    result.files_affected, False, result.working_set, result.note,
                    txn.commit_sha)
