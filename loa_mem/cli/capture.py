"""`loa-mem capture decisions | learnings | tool-result`: auto-capture (see memory/capture)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli.app import Json, NoCommit, Root, new_app
from loa_mem.cli.render import Block, emit
from loa_mem.core import events

if TYPE_CHECKING:
    from loa_mem.memory.capture.sources import Captured
    from loa_mem.memory.store import Store

capture_app = new_app("Turn decisions, learnings and failed commands into memories.")
IfEnabled = Annotated[bool, typer.Option(
    "--if-enabled", help="When the source's auto_capture key is off, say so and exit 0 "
    "(for hooks) instead of exit 1.")]


def _store(root: str | None) -> Store:
    from loa_mem.memory.store import Store

    return Store.open(root)


def captured(result: Captured) -> list[Block]:
    if result.off:
        return [f"{result.source}: not captured, switched off ({result.off}: false)"]
    if result.note:
        return [f"{result.source}: {result.note}"]
    counts = [f"{len(result.added)} added"] + [
        f"{n} {what}" for n, what in ((result.already, "already captured"),
                                      (len(result.updated), "seen again"),
                                      (len(result.fixed), "fixed")) if n]
    lines: list[Block] = [f"{result.source}: {', '.join(counts)}"
                          + (f" (commit {result.commit[:10]})" if result.commit else "")]
    lines += [f"  + {memory_id}" for memory_id in result.added]
    lines += [f"  again: {memory_id} (occurrences and last_seen updated)"
              for memory_id in result.updated]
    lines += [f"  fixed: {memory_id} (the command succeeded)" for memory_id in result.fixed]
    lines += [f"  skipped, not accepted: {where}" for where in result.skipped]
    return lines


@capture_app.command("decisions")
def decisions(if_enabled: IfEnabled = False, root: Root = None, no_commit: NoCommit = False,
              as_json: Json = False) -> None:
    """Accepted entries of the Decision Protocol file become decision memories, once each."""
    from loa_mem.memory.capture.sources import capture_decisions

    emit(capture_decisions(_store(root), if_enabled, events.actor(), not no_commit), as_json,
         captured)


@capture_app.command("learnings")
def learnings(
    source: Annotated[str, typer.Argument(help="Compound-learning output: a file, or - for "
                                          "stdin (YAML/JSON items or Markdown bullets).")] = "-",
    if_enabled: IfEnabled = False, root: Root = None, no_commit: NoCommit = False,
    as_json: Json = False,
) -> None:
    """Compound-learning output becomes learning memories, once each."""
    from loa_mem.memory.capture.sources import capture_learnings

    emit(capture_learnings(_store(root), source, if_enabled, events.actor(), not no_commit),
         as_json, captured)


@capture_app.command("tool-result")
def tool_result(if_enabled: IfEnabled = False, root: Root = None, no_commit: NoCommit = False,
                as_json: Json = False) -> None:
    """A Claude Code PostToolUse / PostToolUseFailure hook's JSON on stdin: a failed Bash
    command becomes an error memory (repeats counted); its next success records the fix."""
    from loa_mem.core import textfile
    from loa_mem.memory.capture.tool_result import capture_tool_result

    text = textfile.read_stdin()
    emit(capture_tool_result(_store(root), text, if_enabled, events.actor(), not no_commit),
         as_json, captured)


def add_commands(app: typer.Typer) -> None:
    app.add_typer(capture_app, name="capture")
