"""Commands of the working set (spec section 7): advise, gc, summarize, meta, pin, unpin."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from loa_mem.cli import working_set_views as views
from loa_mem.cli.app import Json, NoCommit, Root
from loa_mem.cli.render import emit, working
from loa_mem.core import events, textfile
from loa_mem.core.errors import Refused

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.workingset.advise import AdviseRequest, Hint

_VALUED = {"--hot", "--cold", "--action", "--why", "--postmortem", "--referenced", "--root"}


def _store(root: str | None) -> Store:
    from loa_mem.memory.store import Store

    return Store.open(root)


class _KeepsOrder(TyperCommand):
    """Keeps the raw arguments, so each --why and --action pairs with the hint before it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["loa_mem.argv"] = list(args)
        result: list[str] = super().parse_args(ctx, args)
        return result


def _options(argv: list[str]) -> Iterable[tuple[str, str]]:
    n = 0
    while n < len(argv):
        token = argv[n]
        if token == "--":
            return
        if token.startswith("--") and "=" in token:
            name, value = token.split("=", 1)
            yield name, value
            n += 1
        elif token in _VALUED and n + 1 < len(argv):
            yield token, argv[n + 1]
            n += 2
        else:
            yield token, ""
            n += 1


def _hints(argv: list[str]) -> tuple[list[Hint], list[Hint], str | None]:
    """--hot/--cold hints in order. A --why right after a hint (or its --action) is that hint's;
    hints without one take the call's why: a --why given before any hint, else the last --why.
    --action belongs to the --cold before it; so does --postmortem, and one given before any
    hint is for every archive hint without its own."""
    from loa_mem.workingset.advise import Hint

    hints: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    last_cold: dict[str, Any] | None = None
    before_hints: str | None = None
    last: str | None = None
    postmortem: str | None = None
    for name, value in _options(argv):
        if name in ("--hot", "--cold"):
            current = {"kind": name[2:], "path": value, "why": None, "action": None,
                       "postmortem": None}
            hints.append(current)
            last_cold = current if name == "--cold" else None
        elif name == "--action":
            if current is None or current["kind"] != "cold" or current["action"] is not None:
                raise Refused("--action must follow the --cold it is about",
                              "for example --cold build.log --action archive --why 'old'")
            current["action"] = value
        elif name == "--postmortem":
            if not hints:
                postmortem = value
            elif last_cold is None or last_cold["postmortem"] is not None:
                raise Refused("--postmortem must follow the --cold it is about",
                              "for example --cold spike.py --action archive --postmortem "
                              "'the cache never hit'")
            else:
                last_cold["postmortem"] = value
        elif name == "--why":
            last = value
            if current is not None and current["why"] is None:
                current["why"] = value
            elif not hints:
                before_hints = value
            current = None
        else:
            current = None
    overall = before_hints or last
    made = [(h["kind"], Hint(h["path"], h["why"], h["action"] or (
        "delete_from_working_set" if h["kind"] == "cold" else None),
        h["postmortem"] or (postmortem if h["action"] == "archive" else None)))
        for h in hints]
    return ([h for k, h in made if k == "hot"], [h for k, h in made if k == "cold"], overall)


def _ask_postmortems(cold: list[Hint]) -> list[Hint]:
    """On a terminal, ask for the postmortem of each archive hint that came without one."""
    from dataclasses import replace

    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return cold
    return [replace(h, postmortem=typer.prompt(
        f"Postmortem for {h.path} (one line: why did the attempt fail?)", default="",
        show_default=False, err=True)) if h.action == "archive" and h.postmortem is None else h
        for h in cold]


def _request(argv: list[str], from_stdin: bool, referenced: list[str],
             trigger_gc: bool) -> AdviseRequest:
    from loa_mem.workingset.advise import AdviseRequest, request_from_json

    hot, cold, why = _hints(argv)
    if not from_stdin:
        return AdviseRequest(why, tuple(hot), tuple(_ask_postmortems(cold)), tuple(referenced),
                             trigger_gc)
    if hot or cold:
        raise Refused("hints came both as options and as JSON on stdin", "use one or the other")
    text = textfile.read_stdin()
    try:
        data = json.loads(text)
    except ValueError as error:
        raise Refused(f"stdin is not JSON: {error}",
                      'send a memory.advise object, e.g. {"why": "...", "hot": [{"path": "x"}]}'
                      ) from None
    parsed = request_from_json(data)
    return AdviseRequest(parsed.why, parsed.hot, parsed.cold, tuple(referenced),
                         parsed.trigger_gc or trigger_gc)


def advise(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Argument(
        help="- reads a memory.advise JSON object from stdin: {hot, cold, trigger_gc, why}.",
        show_default=False)] = None,
    hot: Annotated[list[str] | None, typer.Option(
        "--hot", help="A file to keep in the working set; repeat.", show_default=False)] = None,
    cold: Annotated[list[str] | None, typer.Option(
        "--cold", help="A file to evict; repeat.", show_default=False)] = None,
    action: Annotated[list[str] | None, typer.Option(
        "--action", help="For the --cold before it: delete_from_working_set (default), "
        "summarize_then_evict, archive or compress.", show_default=False)] = None,
    why: Annotated[list[str] | None, typer.Option(
        "--why", help="Why: right after a --hot or --cold it is that hint's, else the call's.",
        show_default=False)] = None,
    postmortem: Annotated[list[str] | None, typer.Option(
        "--postmortem", help="For the --cold ... --action archive before it (or, given first, "
        "for every archive hint): one line on why the attempt failed. Asked on a terminal.",
        show_default=False)] = None,
    referenced: Annotated[list[str] | None, typer.Option(
        "--referenced", help="A file the user referenced: promoted to hot; repeat.",
        show_default=False)] = None,
    trigger_gc: Annotated[bool, typer.Option("--trigger-gc", help="Run gc afterwards.")] = False,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Record hot and cold hints for the working set; loa-mem answers each.

    Each hint is honored, deferred, overridden or promoted, with a reason (memory_actions)."""
    from loa_mem.workingset.advise import advise as do_advise

    del hot, cold, action, why, postmortem
    if source not in (None, "-"):
        raise Refused("unexpected argument after advise", "pass - to read JSON from stdin")
    request = _request(list(ctx.meta.get("loa_mem.argv") or []), source == "-",
                       referenced or [], trigger_gc)
    emit(do_advise(_store(root), request, events.actor(), not no_commit), as_json,
         views.advised)


def gc(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would happen; write "
                                          "nothing.")] = False,
    trigger: Annotated[str | None, typer.Option(
        "--trigger", help="session_end, explicit, budget_pressure or time (default: explicit, "
        "or budget_pressure with --budget).", show_default=False)] = None,
    budget: Annotated[int | None, typer.Option(
        "--budget", help="Context budget in tokens: act only above 80% of it.",
        show_default=False)] = None,
    time_budget: Annotated[float | None, typer.Option(
        "--time-budget", help="Seconds to spend; what does not fit is deferred to the next gc.",
        show_default=False)] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Shrink the working set and archive stale entries; log a gc_report.

    Cold files are evicted, summarized, archived or compressed; expired, superseded and
    ineffective entries move to the archive."""
    from loa_mem.workingset.collect import gc as do_gc

    chosen = trigger or ("budget_pressure" if budget is not None else "explicit")
    with working("collecting the working set and stale entries", quiet=as_json):
        result = do_gc(_store(root), chosen, budget, dry_run, events.actor(), not no_commit,
                       seconds=time_budget)
    emit(result, as_json, views.gc_report)


def summarize(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Files to summarize.", show_default=False)] = None,
    style: Annotated[str, typer.Option("--style", help="bullet, narrative, schema, diff or "
                                       "decision.")] = "bullet",
    text: Annotated[str | None, typer.Option(
        "--text", help="The summary (what the model wrote); - reads stdin.",
        show_default=False)] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="File name in the summaries folder (default: from the paths).",
        show_default=False)] = None,
    extractive: Annotated[bool, typer.Option(
        "--extractive", help="Use the built-in extractive summary even when a summarizer "
        "command is configured.")] = False,
    repair: Annotated[bool, typer.Option(
        "--repair", help="Instead: re-point or remove the summary links that no longer "
        "resolve (one commit).")] = False,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Write a summary with backlinks; point each source's sidecar at it."""
    from loa_mem.workingset.summarize import summarize as do_summarize

    if repair:
        from loa_mem.workingset.repair import repair as do_repair

        if paths or text is not None or name is not None or extractive:
            raise Refused("--repair takes no files, --text, --name or --extractive",
                          "run summarize --repair on its own")
        emit(do_repair(_store(root), events.actor(), not no_commit), as_json, views.repaired)
        return
    if text == "-":
        text = textfile.read_stdin()
    emit(do_summarize(_store(root), paths or [], style, text, name, events.actor(), not no_commit,
                      extractive), as_json, views.summarized)


def meta(
    path: Annotated[str, typer.Argument(help="A working-tree file.", show_default=False)],
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="key=value: title, summary, tags (a,b), links, pin, superseded_by, "
        "custom.NAME; repeat.", show_default=False)] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Show a file's .meta.yml sidecar and its hotness, or edit it with --set."""
    from loa_mem.workingset import meta_commands

    store = _store(root)
    if set_:
        result = meta_commands.set_fields(store, path, set_, events.actor(), not no_commit)
    else:
        result = meta_commands.show(store, path)
    emit(result, as_json, views.meta_shown)


def pin(path: Annotated[str, typer.Argument(help="A working-tree file.", show_default=False)],
        root: Root = None, no_commit: NoCommit = False, as_json: Json = False) -> None:
    """Pin a file: never evicted, always in the working set."""
    from loa_mem.workingset import meta_commands

    emit(meta_commands.pin(_store(root), path, True, events.actor(), not no_commit), as_json,
         views.meta_shown)


def unpin(path: Annotated[str, typer.Argument(help="A working-tree file.", show_default=False)],
          root: Root = None, no_commit: NoCommit = False, as_json: Json = False) -> None:
    """Unpin a file: gc may evict it again."""
    from loa_mem.workingset import meta_commands

    emit(meta_commands.pin(_store(root), path, False, events.actor(), not no_commit), as_json,
         views.meta_shown)


def add_commands(app: typer.Typer) -> None:
    app.command(cls=_KeepsOrder)(advise)
    for command in (gc, summarize, meta, pin, unpin):
        app.command()(command)
