"""Commands that connect loa-mem to other tools: merge-driver, import, export and mcp."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from loa_mem.cli import integrations_views as views
from loa_mem.cli.app import Json, NoCommit, Root
from loa_mem.cli.render import console, emit


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
        "--repair", help="The same as `loa-mem repair`.")] = False,
    root: Root = None, as_json: Json = False,
) -> None:
    """Merge memory files by entry id (git runs this; `loa-mem init` registers it).

    Exit 0 when merged cleanly, 1 when entries conflict (left between conflict markers)."""
    from loa_mem.core.errors import UsageError
    from loa_mem.integrations import merge_driver as merging

    if repair:
        repair_store(root, as_json)
    if base is None or ours is None or theirs is None:
        raise UsageError("merge-driver needs the three files %O %A %B",
                         "git passes them; see `loa-mem init`, or use --repair")
    missing = next((file for file in (base, ours, theirs) if not file.is_file()), None)
    if missing is not None:  # git always passes three files: a person typed this
        raise UsageError(f"merge-driver: {missing} is not a file",
                         "git passes the three versions it merges; after a merge, run "
                         "`loa-mem repair`")
    result = merging.drive(base, ours, theirs, path, marker_size)
    emit(result, as_json, views.file_merge)
    raise typer.Exit(0 if result.ok else 1)


def repair_store(root: Root = None, as_json: Json = False) -> None:
    """Put the memory files right after any git operation: conflict markers, ids used twice,
    one-way supersede links. Commits the fix, or stages it while a merge or rebase is stopped.

    Exit 0 when everything was fixed, 1 when something needs you (the report says what)."""
    from loa_mem.integrations import merge_driver as merging

    repaired = merging.repair(root)
    emit(repaired, as_json, views.repaired)
    raise typer.Exit(0 if repaired.ok else 1)


Format = Annotated[str | None, typer.Option(
    "-f", "--format", help="jsonl, markdown, claude or mdan (default: from the file name).",
    show_default=False)]
LONG_IMPORT = 200


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr, for long imports on a terminal only."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: list[Any] = []

    def update(done: int, total: int) -> None:
        if total < LONG_IMPORT:
            return
        if not bars:
            from rich.progress import Progress

            bars.append(Progress(console=console(stderr=True), transient=True))
            bars[0].start()
            bars.append(bars[0].add_task("checking entries", total=total))
        bars[0].update(bars[1], completed=done,
                       description="writing" if done == total else "checking entries")

    try:
        yield update
    finally:
        if bars:
            bars[0].stop()


def import_entries(
    source: Annotated[str, typer.Argument(help="The file to import; - reads stdin.",
                                          show_default=False)],
    fmt: Format = None,
    category: Annotated[str | None, typer.Option(
        "-c", "--category", help="Category of every bullet (markdown, claude; default: the "
        "heading above it, else fact).")] = None,
    skip_invalid: Annotated[bool, typer.Option(
        "--skip-invalid", help="Import the valid entries and list the others.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and report; write nothing.")
                       ] = False,
    agent: Annotated[str | None, typer.Option(
        "--agent", help="Who imports (events log); mdan: whose sidecar (default: the file's "
        "agent, else its name).")] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Import entries (jsonl, markdown, Claude Code memory files) or an MDAN agent sidecar:
    everything is checked first, then written in one commit, or nothing."""
    from loa_mem.core import events
    from loa_mem.memory.commands.transfer import chosen_format, import_file
    from loa_mem.memory.store import Store

    store = Store.open(root)
    if chosen_format(source, fmt) == "mdan":
        from loa_mem.agents.transfer import import_sidecar

        emit(import_sidecar(store, source, agent, events.actor(agent), dry_run=dry_run,
                            commit=not no_commit), as_json, views.imported_sidecar)
        return
    with _progress() as progress:
        result = import_file(store, source, fmt, events.actor(agent),
                             category=category, skip_invalid=skip_invalid, dry_run=dry_run,
                             commit=not no_commit, progress=progress)
    emit(result, as_json, views.imported)


def export_entries(
    fmt: Annotated[str, typer.Option("-f", "--format", help="jsonl, markdown, claude or mdan.")
                   ] = "jsonl",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file "
                                                "(default: stdout).")] = None,
    category: Annotated[list[str] | None, typer.Option(
        "-c", "--category", help="Only this category; repeat for several.")] = None,
    everything: Annotated[bool, typer.Option(
        "--all", help="Also archived, superseded and expired entries (jsonl always has "
        "them).")] = False,
    by_agent: Annotated[str | None, typer.Option(
        "--by-agent", help="Only entries this agent remembered; mdan: whose sidecar "
        "(required).")] = None,
    agent: Annotated[str | None, typer.Option(
        "--agent", hidden=True, help="The older spelling of --by-agent.")] = None,
    root: Root = None, as_json: Json = False,
) -> None:
    """Export entries: jsonl (lossless), markdown, claude (a MEMORY.md), or an agent's sidecar
    as MDAN's .sidecar.json (mdan)."""
    from dataclasses import replace

    from loa_mem.core.filewrite import atomic_write
    from loa_mem.memory.commands.transfer import export_entries as do_export
    from loa_mem.memory.store import Store

    store = Store.open(root)
    agent = by_agent or agent
    if fmt == "mdan":
        from loa_mem.agents.transfer import export_sidecar

        result = export_sidecar(store, agent)
    else:
        result = do_export(store, fmt, categories=tuple(category or ()), everything=everything,
                           agent=agent)
    if output is None and not as_json:
        sys.stdout.write(result.text)
        return
    if output is not None:
        atomic_write(output.resolve(), result.text)
        result = replace(result, path=str(output))
    emit(result, as_json, views.exported)


def mcp(root: Root = None) -> None:
    """Serve the Model Context Protocol on stdio (tools: remember, recall, show, supersede,
    forget, feedback, advise, context). Needs the mcp extra: pip install 'loa-mem[mcp]'."""
    from loa_mem.integrations.mcp import serve

    serve(root)


def add_commands(app: typer.Typer) -> None:
    app.command("merge-driver")(merge_driver)
    app.command("repair")(repair_store)
    app.command("import")(import_entries)
    app.command("export")(export_entries)
    app.command("mcp")(mcp)
