"""Turn a transaction's plan for one grimoire file into the file's new text and index changes.

Edits are applied from the bottom of the file up, so the line spans recorded in the index stay
valid for every edit still to come; appends go last. Each changed or added entry is parsed back
from the text that will be written, so the index holds exactly what the file says.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loa_mem.core import textfile, yamlemit, yamlfast
from loa_mem.core.errors import InvalidFile, Refused
from loa_mem.core.located import Located
from loa_mem.memory.index import Index, Row, Signature, Span

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.transaction import _FilePlan

@dataclass(frozen=True)
class Replacement:
    """An entry's lines replaced (`located` None: removed), in the file's old line numbers."""

    row: Row
    located: Located | None
    delta: int


@dataclass
class FileResult:
    path: str
    text: str
    in_archive: bool
    indent: int
    flow: bool
    replacements: list[Replacement] = field(default_factory=list)
    appended: list[Span] = field(default_factory=list)
    old_text: str = ""
    # the change as text, to replay it on another version of the file (see `replay`)
    edits: list[tuple[str, str]] = field(default_factory=list)
    appended_text: str = ""

    def replay(self, other: bytes) -> bytes | None:
        """This change applied to another version of the file (HEAD's, or what the user
        staged): each edited entry must be there, once, exactly as this command found it."""
        try:
            text = other.decode("utf-8")
        except UnicodeDecodeError:
            return None
        ending = line_ending(text)
        for old_text, new_text in self.edits:
            old, new = ended(old_text, ending), ended(new_text, ending)
            at = text.find(old)
            while at > 0 and text[at - 1] != "\n":
                at = text.find(old, at + 1)
            if at < 0 or text.find(old, at + 1) >= 0:
                return None
            text = text[:at] + new + text[at + len(old):]
        if self.appended_text:
            lines = text.splitlines(keepends=True)
            text = "".join(_ready_for_append(lines, _holds_items(lines), ending))
            text += ended(self.appended_text, ending)
        return text.encode("utf-8")

    def update_index(self, index: Index, signature: Signature | None) -> None:
        """Bring the file's rows to the new text in one pass: shifting the rows below each
        replaced entry one replacement at a time costs a table scan each (gc archiving 750
        entries spent 1.3 s there)."""
        edits = sorted(self.replacements, key=lambda r: r.row.first_line)
        index.delete_rows([r.row.rowid for r in edits])
        index.shift_many(self.path, [(r.row.last_line, r.delta) for r in edits])
        above = 0
        for edit in edits:
            if edit.located is not None:
                span = edit.located.span(shift=edit.row.first_line - 1 + above)
                index.insert(self.path, self.in_archive, [span])
            above += edit.delta
        if self.appended:
            index.insert(self.path, self.in_archive, self.appended)
        index.set_file(self.path, signature, self.indent, self.flow)


def _read(store: Store, path: str) -> str:
    try:
        return textfile.read_text(store.top / path, path)
    except FileNotFoundError:
        return ""


def _parse_one(text: str, path: str) -> Located:
    parsed = yamlfast.load_list(text, path)
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
    ending = line_ending(text)
    result = FileResult(path, "", grimoire.in_archive, indent, flow, old_text=text)
    targets = {row.rowid: row for row in index.by_rowids({*plan.changes, *plan.removals})
               if row.path == path}
    for row in sorted(targets.values(), key=lambda r: r.first_line, reverse=True):
        span = _check_span(row, lines, path)
        if row.rowid in plan.removals:
            new_lines: list[str] = []
        else:
            from loa_mem.core import yamledit

            edited = yamledit.edit_item(span, indent, _apply_changes(plan.changes[row.rowid]))
            new_lines = ended(edited, ending).splitlines(keepends=True)
        result.edits.append((span, "".join(new_lines)))
        lines[row.first_line - 1:row.last_line] = new_lines
        located = _parse_one("".join(new_lines), path) if new_lines else None
        result.replacements.append(Replacement(
            row, located, len(new_lines) - (row.last_line - row.first_line + 1)))
    if plan.appends or plan.raw_appends:
        if lines and not lines[-1].endswith("\n"):
            result.replacements.extend(_last_entry_ended(index, path, lines, ending))
        lines = _ready_for_append(lines, index.count_in_file(path) > 0, ending)
        pieces = [_dump(e, indent) for e in plan.appends]
        pieces += [_reindent(t, indent) for t in plan.raw_appends]
        pieces = [ended(piece, ending) for piece in pieces]
        for piece in pieces:
            located = _parse_one(piece, path)
            new_span = located.span(shift=len(lines))
            lines.extend(piece.splitlines(keepends=True))
            result.appended.append(new_span)
        result.appended_text = "".join(pieces)
    result.text = "".join(lines)
    return result


def _last_entry_ended(index: Index, path: str, lines: list[str], ending: str
                      ) -> list[Replacement]:
    """The entry on the last line of a file that does not end with a line break, read again
    with the break an append gives it (a `|` block there gains a final line break)."""
    rows = index.where("file=(SELECT file FROM paths WHERE path=?) AND last_line=?",
                       (path, len(lines)))
    return [Replacement(row, _parse_one("".join(lines[row.first_line - 1:]) + ending, path), 0)
            for row in rows[:1]]


def _dump(entry: dict[str, Any], indent: int) -> str:
    """The entry's text: written directly when its values allow (`yamlemit`), else by PyYAML."""
    text = yamlemit.dump_item(entry, indent)
    if text is None:
        from loa_mem.core import yamlio

        text = yamlio.dump_item(entry, indent)
    return text


def _ready_for_append(lines: list[str], has_entries: bool, ending: str) -> list[str]:
    """The file's lines ready for entries written after them: without a document end marker
    (`...`: entries after it would start a second document, which does not parse), and, in a
    file without entries, without the empty list's own text (`[]`, `[ ]`, `--- []`, `[` and
    `]` on two lines: entries after it would not parse either)."""
    lines = [line for line in lines if not _DOCUMENT_END(line)
             and (has_entries or not _EMPTY_LIST(line.split("#", 1)[0].strip()))]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += ending
    return lines


# a document end marker, alone on its line but for a comment
_DOCUMENT_END = re.compile(r"\.\.\.(?:[ \t]+#.*)?\s*").fullmatch
# an empty list's text, or a line of it, with what may stand before it: "---", a tag
_EMPTY_LIST = re.compile(r"(?:---|(?:--- *)?(?:!!seq *)?(?:\[ *\]?|\]))").fullmatch


def _holds_items(lines: list[str]) -> bool:
    """Whether a file's lines may hold list items: any line that could start one."""
    return any(line.lstrip(" ").startswith(("- ", "-\n", "-\r")) or line.strip() == "-"
               for line in lines)


def line_ending(text: str) -> str:
    """The file's own line ending: "\r\n" when its first line ends so (saved on Windows, or
    checked out with core.autocrlf or an eol attribute), else "\n". The lines loa-mem adds or
    rewrites follow it, so a file never ends up with both."""
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def ended(text: str, ending: str) -> str:
    """`text` with every line ended by `ending` (the YAML loa-mem writes holds a line break
    only at a line's end: a break inside a value is written escaped)."""
    text = text.replace("\r\n", "\n")
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def _reindent(text: str, indent: int) -> str:
    """Move a list item taken from another file to this file's indentation."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    current = len(first) - len(first.lstrip())
    if current == indent:
        return text if text.endswith("\n") else text + "\n"
    out = []
    for line in text.splitlines(keepends=True):
        body = line[current:] if current == 0 or line[:current].isspace() else line.lstrip()
        out.append((" " * indent + body) if line.strip() else line)
    joined = "".join(out)
    return joined if joined.endswith("\n") else joined + "\n"
