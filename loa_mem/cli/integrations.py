"""Commands that connect loa-mem to other tools: merge-driver, import, export and mcp."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loa_mem.cli import integrations_views as views
from loa_mem.cli.app import Json, Root
from loa_mem.render import emit


def merge_driver(
    base: Annotated[Path | None, typer.Argument(help="%O: the common ancestor's version.",
                                                show_default=False)] = None,
    ours: Annotated[Path | None, typer.Argument(help="%A: ours; the result is written here.",
                                                show_default=False)] = None,
    theirs: Annotated[Path | None, typer.Argument(help="%B: the other branch's version.",
                                                  show_default=False)] = None,
    path: Annotated[str | None, typer.Argument(help="%P: the file's path in the repository.",
                                               show_default=False)] = None,
    marker_size: Annotated[int, typer.Option("--marker-size", help="Conflict marker length (%L).")
                           ] = 7,
    repair: Annotated[bool, typer.Option(
        "--repair", help="After a merge stopped on a memory file: redo all memory files by id "
        "with every file in view, and stage the clean ones.")] = False,
    root: Root = None, as_json: Json = False,
) -> None:
    """Merge memory files by entry id (git runs this; `loa-mem init` registers it).

    Exit 0 when merged cleanly, 1 when entries conflict (left between conflict markers)."""
    from loa_mem.commands import merging
    from loa_mem.errors import UsageError

    if repair:
        repaired = merging.repair(root)
        emit(repaired, as_json, views.repaired)
        raise typer.Exit(0 if repaired.ok else 1)
    if base is None or ours is None or theirs is None:
        raise UsageError("merge-driver needs the three files %O %A %B",
                         "git passes them; see `loa-mem init`, or use --repair")
    result = merging.drive(base, ours, theirs, path, marker_size)
    emit(result, as_json, views.file_merge)
    raise typer.Exit(0 if result.ok else 1)


def add_commands(app: typer.Typer) -> None:
    app.command("merge-driver")(merge_driver)


def on_init(store: Any) -> list[str]:
    from loa_mem.commands.merging import register_driver

    return register_driver(store)
