"""Human views of the working-set commands (JSON shapes live on the results)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loa_mem.cli.render import Block, Table

if TYPE_CHECKING:
    from loa_mem.workingset.advise import Advised
    from loa_mem.workingset.collect import GcResult
    from loa_mem.workingset.meta_commands import MetaShown
    from loa_mem.workingset.repair import Repaired
    from loa_mem.workingset.restore_file import RestoredFile
    from loa_mem.workingset.summarize import Summarized


def _commit_note(sha: str | None) -> str:
    return f" (commit {sha[:10]})" if sha else " (not committed)"


def advised(result: Advised) -> list[Block]:
    blocks: list[Block] = []
    if result.memory_actions:
        rows = [[a.path, a.model_suggested or "-", a.suggested_action or "-", a.action_taken,
                 a.reason] for a in result.memory_actions]
        blocks.append(Table(["path", "model suggested", "action", "taken", "reason"], rows,
                            "memory_actions"))
        blocks.append(f"turn {result.turn}: {result.hot} file(s) hot, {result.cold} cold"
                      f"{_commit_note(result.commit)}")
    if result.gc is not None:
        blocks += gc_report(result.gc)
    return blocks


def gc_report(result: GcResult) -> list[Block]:
    w = result.working_set
    blocks: list[Block] = []
    if result.actions:
        rows = [[a.id or a.path, a.action, a.summary or a.to or "-", a.tokens,
                 a.reason + (f"; postmortem: {a.postmortem}" if a.postmortem else "")]
                for a in result.actions]
        title = "gc_report" + (" (dry run: nothing written)" if result.dry_run else "")
        blocks.append(Table(["path", "action", "summary / to", "tokens", "reason"], rows, title))
    if result.note:
        blocks.append(result.note)
    budget = f", budget {w['budget']} (acts above {w['threshold']})" if w.get("budget") else ""
    blocks.append(f"triggered_by: {result.triggered_by}  timestamp: {result.timestamp}  "
                  f"tokens_freed: {result.tokens_freed}  files_affected: {result.files_affected}")
    blocks.append(f"working set: {w['files_before']} file(s), {w['tokens_before']} tokens -> "
                  f"{w['files_after']} file(s), {w['tokens_after']} tokens{budget} "
                  "(tokens = ceil(bytes / 4))")
    if not result.dry_run and result.actions:
        blocks.append("written to the events log" + _commit_note(result.commit))
    return blocks


def summarized(result: Summarized) -> list[Block]:
    return [f"{result.path}: {result.style} summary ({result.method}) of "
            f"{', '.join(result.sources)}, {result.tokens} tokens{_commit_note(result.commit)}",
            *(f"  {p}: summarized_in set" for p in result.sidecars)]


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) or "{}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "[]"
    return "null" if value is None else str(value)


def meta_shown(result: MetaShown) -> list[Block]:
    head = f"{result.sidecar}" + ("" if result.exists else " (not created yet; defaults shown)")
    if result.changed:
        head += f": set {', '.join(result.changed)}{_commit_note(result.commit)}"
    rows = [[k, _value(v)] for k, v in result.fields.items()]
    from loa_mem.workingset.rules import WEIGHTS

    parts = " + ".join(f"{WEIGHTS[k]:.1f} x {v:g} {k.replace('_', ' ')}"
                       for k, v in result.factors.items())
    return [head, Table(["field", "value"], rows),
            f"hotness now: {result.hotness:.2f} = {parts}"]


def restored(result: RestoredFile) -> list[Block]:
    return [f"{result.path}: {result.action} from {result.source}{_commit_note(result.commit)}"]


def repaired(result: Repaired) -> list[Block]:
    if not result.repairs:
        return ["nothing to repair: every summary link resolves"]
    rows = [[r.file, r.link, r.action, r.to or "-", r.reason] for r in result.repairs]
    return [Table(["file", "link", "action", "to", "reason"], rows, "summary links"),
            f"{len(result.repairs)} dead link(s)" + (_commit_note(result.commit)
                                                     if result.commit else ": nothing written")]
