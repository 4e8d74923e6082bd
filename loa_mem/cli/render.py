"""Rendering of results: one JSON object for machines, text or rich tables for people.

A human view is a list of blocks: plain lines and `Table`s. On a terminal tables are drawn with
rich; otherwise (pipes, hooks, CI) they are aligned plain text, which also spares scripts the
cost of importing rich. NO_COLOR is honoured by rich itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from loa_mem.core.errors import LoaMemError, error_object
from loa_mem.core.terminal import printable


class Result(Protocol):
    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Table:
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


def _plain(block: Block) -> str:
    if isinstance(block, str):
        return block + "\n"
    rows = [[_cell(c) for c in row] for row in block.rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(block.columns)]
    lines = [block.title] if block.title else []
    header = zip(block.columns, widths, strict=True)
    lines.append("  ".join(h.upper().ljust(w) for h, w in header).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def _rich(blocks: list[Block]) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console()
    for block in blocks:
        if isinstance(block, str):
            console.print(block, markup=False, highlight=False)
            continue
        table = RichTable(title=block.title or None, show_lines=False)
        for column in block.columns:
            table.add_column(column)
        for row in block.rows:
            table.add_row(*(_cell(c) for c in row))
        console.print(table)


def error(message: str) -> None:
    sys.stderr.write(f"loa-mem: {printable(message, one_line=True)}\n")


def error_json(failure: LoaMemError) -> None:
    """The error as the one JSON object a --json caller reads from stdout."""
    sys.stdout.write(to_json_text(error_object(failure)) + "\n")
