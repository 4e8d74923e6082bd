"""Agent integration commands: the session-start `context` and `hooks`.

`loa-mem context` as a process never reaches this module: `entry.main` hands it to
`context_fast` before typer is imported. This command exists so that `--help` lists it and
in-process runners (tests, the MCP server) get the same block from the same code.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from loa_mem.cli.app import Json, Root, new_app
from loa_mem.cli.render import Block, emit
from loa_mem.core import textfile
from loa_mem.core.errors import EXIT_REFUSED, LoaMemError

if TYPE_CHECKING:
    from loa_mem.integrations.hooks import Changed

Budget = Annotated[int | None, typer.Option(
    "--budget", metavar="TOKENS",
    help="Token budget (default: context.budget_tokens, 2000); tokens = ceil(characters / 4).")]


def context(
    budget: Budget = None,
    query: Annotated[str, typer.Option(
        "--query", help="Rank memories by relevance to this query.")] = "",
    agent: Annotated[list[str] | None, typer.Option(
        "--agent", help="Add this agent's sidecar memories; repeat.")] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Whose preferences (default: LOA_MEM_USER, else git user.email).")
                    ] = None,
    output: Annotated[str, typer.Option("-f", "--format", help="markdown or json.")
                      ] = "markdown",
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    root: Root = None,
) -> None:
    """Print the session-start block for an agent's context, cut to a token budget."""
    from loa_mem.context import block as ctx
    from loa_mem.context import fast as context_fast
    from loa_mem.integrations import context_sources

    if output not in ("markdown", "json"):
        raise typer.BadParameter("use markdown or json", param_hint="--format")
    if ctx.budget_problem(budget):
        raise typer.BadParameter(str(ctx.budget_problem(budget, "budget")), param_hint="--budget")
    if ctx.agents_problem(agent or ()):
        raise typer.BadParameter(str(ctx.agents_problem(agent or ())), param_hint="--agent")
    options = ctx.Options(budget=budget, query=query, agents=tuple(agent or ()),
                          output="json" if as_json else output, user=user)
    try:
        block = context_sources.load(root, options)
    except Exception as failure:
        if context_fast.fail_open(failure):
            return
        raise
    context_fast.write(block, options.format)




hooks_app = new_app("Wire loa-mem into Claude Code, git and other agent runners.")

Command = Annotated[str, typer.Option(
    "--command", help="The loa-mem program hooks run (default: loa-mem, found on PATH; a path "
    "with spaces is quoted).")]


@hooks_app.command("install")
def hooks_install(
    claude_code: Annotated[bool, typer.Option(
        "--claude-code", help="SessionStart/SessionEnd hooks in .claude/settings.json.")] = False,
    git_hook: Annotated[bool, typer.Option(
        "--git", help="A pre-commit hook that runs `loa-mem validate --staged`.")] = False,
    command: Command = "loa-mem",
    root: Root = None, as_json: Json = False,
) -> None:
    """Add loa-mem's hooks, keeping every other hook; writes files, commits nothing."""
    from loa_mem.integrations import hooks
    from loa_mem.memory.store import locate_top

    emit(hooks.install(locate_top(root), claude_code, git_hook, command), as_json, _changed)


@hooks_app.command("uninstall")
def hooks_uninstall(
    claude_code: Annotated[bool, typer.Option(
        "--claude-code", help="Only the Claude Code hooks.")] = False,
    git_hook: Annotated[bool, typer.Option("--git", help="Only the git pre-commit hook.")] = False,
    root: Root = None, as_json: Json = False,
) -> None:
    """Remove exactly what `hooks install` added (both kinds unless one is named)."""
    from loa_mem.integrations import hooks
    from loa_mem.memory.store import locate_top

    emit(hooks.uninstall(locate_top(root), claude_code, git_hook), as_json, _changed)


@hooks_app.command("print")
def hooks_print(command: Command = "loa-mem", as_json: Json = False) -> None:
    """Show the shell lines to run at session start, session end and before a commit."""
    from loa_mem.integrations import hooks

    emit(_Lines(hooks.lines(command)), as_json, _lines_view)


@hooks_app.command("session-end")
def hooks_session_end(
    session: Annotated[str | None, typer.Option(
        "--session", help="Session id (default: session_id of the hook's JSON on stdin).")
                       ] = None,
    root: Root = None,
) -> None:
    """What Claude Code's SessionEnd hook runs: `session end`, `capture decisions`, then
    `gc --trigger session_end`."""
    from loa_mem.cli import catalog
    from loa_mem.cli.app import run

    session = session or _hook_input().get("session_id")
    where = ["--root", root] if root else []
    steps = []
    if "session" in catalog.names() and session and _is_open(str(session), root):
        steps.append(["session", "end", "--session", str(session), *where])
    if "capture" in catalog.names():
        steps.append(["capture", "decisions", "--if-enabled", *where])
    if "gc" in catalog.names():
        steps.append(["gc", "--trigger", "session_end", "--time-budget",
                      f"{SESSION_END_GC_SECONDS:g}", *where])
    codes = [run(step) for step in steps]
    worst = max((c for c in codes if c != EXIT_REFUSED), default=0)
    raise typer.Exit(worst)


# gc's share of the SessionEnd hook's time: what does not fit is deferred to the next gc.
# The installed hook declares a timeout (hooks.SESSION_END_TIMEOUT) well above it.
SESSION_END_GC_SECONDS = 1.0


def _is_open(session: str, root: str | None) -> bool:
    """Only a session opened with `session start` has sidecars to update: a runner's other
    sessions end with gc alone, and without an error on every exit."""
    from loa_mem.agents.sessions import is_open
    from loa_mem.core.errors import LoaMemError
    from loa_mem.memory.store import Store

    try:
        return is_open(Store.open(root), session)
    except LoaMemError:
        return False


def _hook_input() -> dict[str, Any]:
    """The JSON object Claude Code writes to a hook's stdin; {} without one."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        data = json.loads(textfile.read_stdin() or "{}")
    except (ValueError, LoaMemError):
        return {}
    return data if isinstance(data, dict) else {}


class _Lines:
    def __init__(self, lines: dict[str, list[str]]) -> None:
        self.lines = lines

    def to_json(self) -> dict[str, Any]:
        return dict(self.lines)


_MOMENTS = {"session_start": "at session start, after resume and after compaction "
                             "(print into the agent's context)",
            "session_end": "at session end ($SESSION_ID: the runner's id for the session)",
            "pre_commit": "before each commit (exit 1 stops the commit)",
            "after_tool": "after each shell command, with the runner's hook JSON on stdin "
                          "(Claude Code's PostToolUse / PostToolUseFailure input)"}


def _lines_view(result: _Lines) -> list[Block]:
    out: list[Block] = []
    for moment, shell in result.lines.items():
        out += [f"# {_MOMENTS[moment]}", *shell]
    return out


def _changed(result: Changed) -> list[Block]:
    out: list[Block] = []
    for name, target in result.targets.items():
        label = {"claude_code": "Claude Code", "git": "git pre-commit"}[name]
        if not target["changed"]:
            out.append(f"{label}: {target['path']} already up to date")
        elif result.action == "install":
            what = ", ".join(target.get("events") or []) or "validate --staged"
            out.append(f"{label}: {target['path']} now runs loa-mem ({what})")
        else:
            gone = " (file removed: nothing else was in it)" if target.get("deleted") else ""
            out.append(f"{label}: removed loa-mem's hooks from {target['path']}{gone}")
    out += [f"note: {n}" for n in result.notes]
    if result.action == "install" and result.targets.get("claude_code", {}).get("changed"):
        out.append("commit .claude/settings.json to share the hooks (nothing was committed)")
    return out


def add_commands(app: typer.Typer) -> None:
    app.command()(context)
    app.add_typer(hooks_app, name="hooks")
