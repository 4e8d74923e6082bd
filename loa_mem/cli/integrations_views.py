"""Human views of the integration commands' results."""

from __future__ import annotations

from loa_mem.commands.merging import FileMerge, Repaired
from loa_mem.commands.transfer import Exported, Imported
from loa_mem.render import Block


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
            "files only one branch changed; run `loa-mem merge-driver --repair`, then "
            "`git commit`")
    return lines


def repaired(result: Repaired) -> list[Block]:
    lines: list[Block] = []
    for merged in result.files:
        lines += file_merge(merged)
    lines.append(f"merged {len(result.files)} memory file(s) by id; staged "
                 f"{len(result.staged)}" + ("" if result.ok else "; resolve the rest, then "
                                            "`git add` them and `git commit`"))
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
