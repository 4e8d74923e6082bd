"""Human views of the integration commands' results."""

from __future__ import annotations

from loa_mem.agents.transfer import SidecarImported
from loa_mem.cli.render import Block
from loa_mem.integrations.merge_driver import FileMerge
from loa_mem.memory.commands.transfer import Exported, Imported
from loa_mem.memory.repair import RepairReport


def file_merge(result: FileMerge) -> list[Block]:
    lines: list[Block] = [f"loa-mem merge-driver: {result.path}: {old} renumbered as {new} "
                          "(created on both branches)" for old, new in result.renamed.items()]
    if result.note:
        lines.append(f"loa-mem merge-driver: {result.path}: {result.note}")
    if result.conflicts:
        ids = ", ".join(i for i in result.conflicts if i != "(lines)")
        lines.append(f"loa-mem merge-driver: {result.path}: {len(result.conflicts)} conflict(s)"
                     + (f" ({ids})" if ids else "") + "; resolve the marked entries")
    if result.unfixable:
        lines.append(
            f"loa-mem merge-driver: {', '.join(result.unfixable)} created on both branches in "
            "files only one branch changed; run `loa-mem repair`, then `git commit`")
    return lines


def repaired(result: RepairReport) -> list[Block]:
    lines: list[Block] = [f"fixed  {fix.path}: {fix.what}" for fix in result.fixes]
    lines += [f"left   {fix.path}: {fix.what}" for fix in result.left]
    if result.commit:
        lines.append(f"repaired {len(result.paths)} file(s) (commit {result.commit[:10]})")
    elif result.staged:
        lines.append(f"repaired and staged {len(result.staged)} file(s); continue the git "
                     "operation (git rebase --continue, git merge --continue, ...)")
    if result.left:
        lines.append(f"{len(result.left)} problem(s) need you; the lines above say how")
    return lines


def imported(result: Imported) -> list[Block]:
    count = len(result.ids)
    verb = "would import" if result.dry_run else "imported"
    note = "" if result.dry_run else (f" (commit {result.commit[:10]})" if result.commit
                                      else " (not committed)")
    lines: list[Block] = [f"{verb} {count} entr{'y' if count == 1 else 'ies'} from "
                          f"{result.source} as {result.format}{note}"]
    if result.duplicates:
        lines.append(f"already in the store, not written again: {len(result.duplicates)}")
    if result.renumbered:
        lines.append("new ids: " + ", ".join(f"{a} -> {b}" for a, b in result.renumbered.items()))
    lines += [f"skipped {item}" for item in result.skipped]
    return lines


def exported(result: Exported) -> list[Block]:
    return [f"exported {result.count} entr{'y' if result.count == 1 else 'ies'} as "
            f"{result.format} to {result.path}"]


def imported_sidecar(result: SidecarImported) -> list[Block]:
    verb = "would import" if result.dry_run else "imported"
    note = "" if result.dry_run else (f" (commit {result.commit[:10]})" if result.commit
                                      else " (not committed)")
    made = "new sidecar" if result.created else "sidecar"
    lines: list[Block] = [f"{verb} {result.agent}'s MDAN sidecar from {result.source} into "
                          f"{made} {result.path}{note}",
                          f"memories added: {result.added}"]
    if result.held:
        lines.append(f"already held, not written again: {result.held}")
    return lines
