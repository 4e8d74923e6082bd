"""Human views of the integration commands' results."""

from __future__ import annotations

from loa_mem.commands.merging import FileMerge, Repaired
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
