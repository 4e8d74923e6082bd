"""Rendering of results: one JSON object for machines, text or rich tables for people.

A human view is a list of blocks: plain lines and `Table`s. On a terminal tables are drawn with
rich; otherwise (pipes, hooks, CI) they are aligned plain text, which also spares scripts the
cost of importing rich. NO_COLOR is honoured by rich itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol, TypeVar

from loa_mem.core.errors import LoaMemError, error_object
from loa_mem.core.terminal import printable


class Result(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class Table(NamedTuple):  # not a dataclass: recall's fast path renders with this module
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    title: str = ""


Block = str | Table
R = TypeVar("R", bound=Result)


def to_json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


def emit(result: R, as_json: bool, view: Callable[[R], list[Block]]) -> None:
    if as_json:
        sys.stdout.write(to_json_text(result.to_json()) + "\n")
        return
    blocks = [printable(b) if isinstance(b, str) else b for b in view(result)]
    if sys.stdout.isatty() and any(isinstance(b, Table) for b in blocks):
        _rich(blocks)
    else:
        sys.stdout.write("".join(_plain(b) for b in blocks))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.1f}"
    if isinstance(value, (list, tuple)):
        return printable(", ".join(str(v) for v in value), one_line=True) or "-"
    return printable(str(value), one_line=True)


def _plain(block: Block, width: int = 0) -> str:
    """Aligned plain text. Given a terminal `width`, the free-text columns are shortened (with
    `…`) so that a row fits it; the other columns are never cut."""
    if isinstance(block, str):
        return block + "\n"
    rows = [[_cell(c) for c in row] for row in block.rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(block.columns)]
    if width:
        widths = _shortened(block.columns, widths, width)
        rows = [[_cut(c, w) for c, w in zip(r, widths, strict=True)] for r in rows]
    lines = [block.title] if block.title else []
    header = zip(block.columns, widths, strict=True)
    lines.append("  ".join(h.upper().ljust(w) for h, w in header).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def _shortened(columns: Sequence[str], widths: list[int], width: int) -> list[int]:
    text = [i for i, name in enumerate(columns) if name in TEXT_COLUMNS]
    fixed = sum(w for i, w in enumerate(widths) if i not in text) + 2 * (len(widths) - 1)
    if not text or fixed + sum(widths[i] for i in text) <= width:
        return widths
    share = max(_MIN_TEXT_WIDTH, (width - fixed) // len(text))
    return [min(w, share) if i in text else w for i, w in enumerate(widths)]


def _cut(cell: str, width: int) -> str:
    return cell if len(cell) <= width else cell[:width - 1] + "…"


# Columns of free text: the only ones that wrap on a narrow terminal. Every other column (ids,
# paths, dates, numbers) keeps its whole width, so an id is never cut to `MEM-2026…`.
TEXT_COLUMNS = frozenset({"summary", "content", "subject", "why", "reason", "decision", "value",
                          "excluded because", "agent should", "relationships"})
_MIN_TEXT_WIDTH = 12


def console(stderr: bool = False) -> Any:
    """A rich console; with NO_COLOR set it writes no escape codes at all (rich alone would
    still write bold and dim)."""
    import os

    from rich.console import Console

    plain = "NO_COLOR" in os.environ
    return Console(stderr=stderr, color_system=None if plain else "auto", no_color=plain)


@contextmanager
def working(label: str, quiet: bool = False) -> Iterator[None]:
    """A spinner with `label` on stderr while a long operation runs, on a terminal only: never
    in a pipe, a hook or CI, and never under --json (`quiet`)."""
    if quiet or not sys.stderr.isatty():
        yield
        return
    with console(stderr=True).status(label):
        yield


def _rich(blocks: list[Block]) -> None:
    out = console()
    for block in blocks:
        if isinstance(block, str):
            out.print(block, markup=False, highlight=False, soft_wrap=True)
        elif not _fits(block, out.width):
            out.file.write(_plain(block, out.width))  # no room for a table's borders
        else:
            out.print(_rich_table(block))


def _fits(block: Table, width: int) -> bool:
    """Whether the fixed columns, their borders and a narrow text column fit in `width`."""
    cells = [[_cell(c) for c in row] for row in block.rows]
    needed = 1 + 3 * len(block.columns)
    for i, name in enumerate(block.columns):
        widest = max([len(name)] + [len(row[i]) for row in cells])
        needed += min(widest, _MIN_TEXT_WIDTH) if name in TEXT_COLUMNS else widest
    return needed <= width


def _rich_table(block: Table) -> Any:
    from rich.table import Table as RichTable

    table = RichTable(title=block.title or None, show_lines=False)
    for i, name in enumerate(block.columns):
        if name in TEXT_COLUMNS:
            table.add_column(name, overflow="fold", min_width=_MIN_TEXT_WIDTH, ratio=1)
        else:
            widest = max([len(name)] + [len(_cell(row[i])) for row in block.rows])
            table.add_column(name, no_wrap=True, min_width=widest)
    for row in block.rows:
        table.add_row(*(_cell(c) for c in row))
    return table


def error(message: str) -> None:
    sys.stderr.write(f"loa-mem: {printable(message, one_line=True)}\n")


def error_json(failure: LoaMemError) -> None:
    """The error as the one JSON object a --json caller reads from stdout."""
    sys.stdout.write(to_json_text(error_object(failure)) + "\n")
