"""Turn a transaction's plan for one grimoire file into the file's new text and index changes.

Edits are applied from the bottom of the file up, so the line spans recorded in the index stay
valid for every edit still to come; appends go last. Each changed or added entry is parsed back
from the text that will be written, so the index holds exactly what the file says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loa_mem import yamlio
from loa_mem.errors import InvalidFile, Refused
from loa_mem.index import Index, Row, Signature, Span

if TYPE_CHECKING:
    from loa_mem.store import Store, _FilePlan

IndexStep = Callable[[Index], None]


@dataclass
class FileResult:
    path: str
    text: str
    in_archive: bool
    indent: int
    flow: bool
    steps: list[IndexStep] = field(default_factory=list)

    def update_index(self, index: Index, signature: Signature | None) -> None:
        for step in self.steps:
            step(index)
        index.set_file(self.path, signature, self.indent, self.flow)


def _read(store: Store, path: str) -> str:
    try:
        return (store.top / path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _parse_one(text: str, path: str) -> yamlio.Located:
    parsed = yamlio.load_list(text, path)
    if len(parsed.items) != 1:
        raise InvalidFile(path, 1, 1, "an edited entry did not come back as one list item")
    return parsed.items[0]


def _check_span(row: Row, lines: list[str], path: str) -> str:
    span = "".join(lines[row.first_line - 1:row.last_line])
    if row.id not in span:
        raise InvalidFile(path, row.first_line, 1,
                          f"{row.id} is not where the index says it is",
                          "the file changed underneath loa-mem; run the command again")
    return span


def _apply_changes(changes: list[Callable[[Any], None]]) -> Callable[[Any], None]:
    def apply(mapping: Any) -> None:
        for change in changes:
            change(mapping)
    return apply


def plan_file(store: Store, plan: _FilePlan) -> FileResult:
    grimoire = plan.grimoire
    path = grimoire.path
    index = store.index
    indent, flow = index.layout(path)
    text = _read(store, path)
    if flow and (plan.appends or plan.raw_appends or plan.changes or plan.removals):
        raise Refused(f"{path} is written as a flow-style list ([...])",
                      "rewrite it as a block list (one '- id:' per entry) so loa-mem can edit it")
    lines = text.splitlines(keepends=True)
    result = FileResult(path, "", grimoire.in_archive, indent, flow)
    targets = {row.rowid: row for row in index.by_rowids({*plan.changes, *plan.removals})
               if row.path == path}
    for row in sorted(targets.values(), key=lambda r: r.first_line, reverse=True):
        span = _check_span(row, lines, path)
        if row.rowid in plan.removals:
            new_lines: list[str] = []
        else:
            edited = yamlio.edit_item(span, indent, _apply_changes(plan.changes[row.rowid]))
            new_lines = edited.splitlines(keepends=True)
        lines[row.first_line - 1:row.last_line] = new_lines
        result.steps.append(_replace_step(row, new_lines, path, grimoire.in_archive))
    if plan.appends or plan.raw_appends:
        lines = _ready_for_append(lines, index.count_in_file(path) > 0)
        pieces = [yamlio.dump_item(e, indent) for e in plan.appends]
        pieces += [_reindent(t, indent) for t in plan.raw_appends]
        for piece in pieces:
            located = _parse_one(piece, path)
            new_span = located.span(shift=len(lines))
            lines.extend(piece.splitlines(keepends=True))
            result.steps.append(_insert_step(path, grimoire.in_archive, new_span))
    result.text = "".join(lines)
    return result


def _replace_step(row: Row, new_lines: list[str], path: str, in_archive: bool) -> IndexStep:
    delta = len(new_lines) - (row.last_line - row.first_line + 1)
    located = _parse_one("".join(new_lines), path) if new_lines else None

    def step(index: Index) -> None:
        index.delete_rows([row.rowid])
        index.shift(path, row.last_line, delta)
        if located is not None:
            index.insert(path, in_archive, [located.span(shift=row.first_line - 1)])
    return step


def _insert_step(path: str, in_archive: bool, span: Span) -> IndexStep:
    def step(index: Index) -> None:
        index.insert(path, in_archive, [span])
    return step


def _ready_for_append(lines: list[str], has_entries: bool) -> list[str]:
    if not has_entries:
        lines = [line for line in lines if line.split("#", 1)[0].strip() != "[]"]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def _reindent(text: str, indent: int) -> str:
    """Move a list item taken from another file to this file's indentation."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    current = len(first) - len(first.lstrip())
    if current == indent:
        return text if text.endswith("\n") else text + "\n"
    out = []
    for line in text.splitlines(keepends=True):
        body = line[current:] if line[:current].isspace() else line.lstrip()
        out.append((" " * indent + body) if line.strip() else line)
    joined = "".join(out)
    return joined if joined.endswith("\n") else joined + "\n"
