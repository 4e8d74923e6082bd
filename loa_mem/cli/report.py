"""The `report` command: the store as one self-contained HTML page, or its data as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli.app import Json, Root
from loa_mem.cli.render import Block, Table, emit

if TYPE_CHECKING:
    from loa_mem.report.build import Built


def report(
    html: Annotated[bool, typer.Option("--html", help="Write the report as one self-contained "
                                       "HTML page (no network needed to open it).")] = False,
    output: Annotated[str | None, typer.Option(
        "-o", "--output", help="The page's file (implies --html; default loa-mem-report.html "
        "in the current directory; - writes it to stdout).", show_default=False)] = None,
    root: Root = None, as_json: Json = False,
) -> None:
    """See the memory: counts, growth, chains, effectiveness, working set, agents, every entry."""
    from loa_mem.core.errors import UsageError
    from loa_mem.memory.store import Store
    from loa_mem.report.build import build

    if output == "-" and as_json:
        raise UsageError("-o - and --json both write to stdout", "choose one of them")
    built = build(Store.open(root), html or output is not None, output)
    if built.html == "-":
        return
    emit(built, as_json, _view)


def _view(built: Built) -> list[Block]:
    data = built.report.to_json()
    overview, effect, ws = data["overview"], data["effectiveness"], data["working_set"]
    lines: list[Block] = []
    if built.html:
        lines.append(f"report written to {built.html} ({_size(built.bytes or 0)})")
    lines.append(Table(["category", "active", "expired", "superseded", "archived"], [
        [c, *(n for n in counts.values())] for c, counts in overview["counts"].items()]))
    lines += [
        f"supersede chains: {len(data['chains'])}; expiring within "
        f"{overview['warn_before_archive_days']} days: {len(overview['expiring_soon'])}",
        "learnings by tier: " + ", ".join(f"{t} {n}" for t, n in effect["tiers"].items()),
        f"queued for review: {len(effect['review'])}; for archive: {len(effect['archive'])}",
        f"working set: {len(ws['hot'])} hot, {len(ws['cold'])} cold, {len(ws['pins'])} pinned; "
        f"gc runs logged: {len(ws['gc'])}",
        f"agents: {len(data['agents']['agents'])}; commits touching entries: "
        f"{len(data['history']['commits'])}"]
    if not built.html:
        lines.append("add --html to write the page (-o FILE to choose where)")
    return lines


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{max(1, round(n / 1000))} KB"


def add_commands(app: typer.Typer) -> None:
    app.command()(report)
