"""Commands of the Loa memory store (spec section 6)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli import memory_views as views
from loa_mem.cli import options
from loa_mem.cli.app import Json, NoCommit, Root
from loa_mem.core import events, textfile
from loa_mem.core.errors import Refused
from loa_mem.memory import rules as model

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
from loa_mem.cli.render import emit, working


def _store(root: str | None) -> Store:
    from loa_mem.memory.store import Store

    return Store.open(root)

Category = Annotated[str, typer.Option("-c", "--category", help="fact, decision, learning, "
                                       "error or preference.", show_default=False)]
Summary = Annotated[str | None, typer.Option("--summary", help="One line, at most 200 characters "
                                             "(default: the first sentence).")]
Confidence = Annotated[float | None, options.confidence_option(
    "at least the category floor (default: max(0.8, floor))")]
Tags = Annotated[list[str] | None, typer.Option("-t", "--tag",
                                                help="Lowercase kebab-case; repeat.")]
Ttl = Annotated[str | None, options.ttl_option("(default: by category)")]
Session = Annotated[str | None, typer.Option("--session", envvar="LOA_MEM_SESSION",
                                             help="Session id recorded in source.")]
Agent = Annotated[str | None, typer.Option("--agent", help="Agent recorded in source.")]
Phase = Annotated[str | None, typer.Option("--phase", help="Phase recorded in source.")]
FilePath = Annotated[str | None, typer.Option("--file", help="File the memory is about.")]
Lines = Annotated[str | None, typer.Option("--lines", help="Line range A-B in --file.")]
Related = Annotated[list[str] | None, typer.Option("--related", help="Related memory id; repeat.")]
MemoryId = Annotated[str, typer.Argument(help="A memory id, like MEM-20260201-k7x2mq4a.",
                                         show_default=False)]


def _content(text: str) -> str:
    if text == "-":
        # The newline that ends piped input (echo, heredoc) is not part of the memory.
        return textfile.read_stdin().rstrip("\r\n")
    return text


def _request(content: str, category: str, summary: str | None, confidence: float | None,
             tags: list[str] | None, ttl: str | None, session: str | None, agent: str | None,
             phase: str | None, file: str | None, lines: str | None,
             related: list[str] | None) -> model.NewEntry:
    return model.NewEntry(
        content=_content(content), category=category, summary=summary, confidence=confidence,
        tags=tuple(tags or ()), ttl=ttl, session=session, agent=agent, phase=phase,
        file_path=file, line_range=lines, related=tuple(related or ()))


def init(root: Root = None, as_json: Json = False) -> None:
    """Create a memory store here (git repo, config, grimoire files, first commit)."""
    from loa_mem.memory.commands.setup import init as do_init

    emit(do_init(root), as_json, views.initialized)


def remember(
    content: Annotated[str, typer.Argument(help="What to remember; - reads stdin.",
                                           show_default=False)],
    category: Category, summary: Summary = None, confidence: Confidence = None, tag: Tags = None,
    ttl: Ttl = None, session: Session = None, agent: Agent = None, phase: Phase = None,
    file: FilePath = None, lines: Lines = None, related: Related = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Remember one entry (refused if it breaks a rule or holds a secret)."""
    from loa_mem.memory.commands.remember import remember as do_remember

    request = _request(content, category, summary, confidence, tag, ttl, session, agent, phase,
                       file, lines, related)
    emit(do_remember(_store(root), request, events.actor(agent), not no_commit), as_json,
         views.remembered)


def supersede(
    old_id: MemoryId,
    content: Annotated[str, typer.Argument(help="The new content; - reads stdin.",
                                           show_default=False)],
    category: Annotated[str, typer.Option("-c", "--category", help="Default: OLD's.")] = "",
    summary: Summary = None, confidence: Confidence = None, tag: Tags = None, ttl: Ttl = None,
    session: Session = None, agent: Agent = None, phase: Phase = None, file: FilePath = None,
    lines: Lines = None, related: Related = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Replace an entry with a new one; the old one stays, linked both ways."""
    from loa_mem.memory.commands.remember import supersede as do_supersede

    request = _request(content, category, summary, confidence, tag, ttl, session, agent, phase,
                       file, lines, related)
    emit(do_supersede(_store(root), old_id, request, events.actor(agent), not no_commit),
         as_json, views.remembered)


def recall(
    query: Annotated[str, typer.Argument(help="Words to look for (optional).")] = "",
    category: Annotated[list[str] | None, typer.Option(
        "-c", "--category", help="Only this category; repeat for several.")] = None,
    tag: Annotated[list[str] | None, typer.Option(
        "-t", "--tag", help="Only entries with this tag; repeat: all must match.")] = None,
    min_confidence: Annotated[float | None, typer.Option(
        "--min-confidence", help="Only entries at least this confident (0..1).")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", help="At most this many results (default: "
        "retrieval.max_per_query).")] = None,
    include_expired: Annotated[bool, typer.Option(
        help="Also entries past their expiry date.")] = False,
    include_superseded: Annotated[bool, typer.Option(
        help="Also entries a newer one replaced (a STATE column says which).")] = False,
    include_archived: Annotated[bool, typer.Option(help="Also archived entries.")] = False,
    track: Annotated[bool, typer.Option("--track", help="Count an application of each result "
                                        "(writes and commits).")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each part of each score.")
                       ] = False,
    mode: Annotated[str | None, typer.Option(
        "--mode", help="lexical, semantic or hybrid (default: retrieval.mode, else hybrid "
        "once the semantic extra's model is fetched, lexical before).")] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Find the memories that matter now, best first. Read-only unless --track."""
    from loa_mem.memory.commands.read import default_filters, limit_problem
    from loa_mem.memory.commands.read import recall as do_recall

    if limit_problem(limit):
        raise typer.BadParameter(str(limit_problem(limit, "limit")), param_hint="--limit")
    for name in category or []:
        model.check_category(name)
    store = _store(root)
    filters = default_filters(
        store, query=query, categories=tuple(category or ()), tags=tuple(tag or ()),
        min_confidence=min_confidence, limit=limit, include_expired=include_expired,
        include_superseded=include_superseded, include_archived=include_archived, mode=mode)
    result = do_recall(store, filters, track, events.actor(), not no_commit,
                       at_terminal=sys.stdout.isatty() and not as_json)
    emit(result if not explain else result._replace(explain=True),
         as_json, views.recalled)


def show(memory_id: MemoryId, root: Root = None, as_json: Json = False) -> None:
    """Show one entry, its state, its tier and its supersede chain."""
    from loa_mem.memory.commands.read import show as do_show

    emit(do_show(_store(root), memory_id), as_json, views.shown)


def archive(
    ids: Annotated[list[str] | None, typer.Argument(help="Entry ids to archive.")] = None,
    expired: Annotated[bool, typer.Option("--expired", help="Archive every expired entry.")
                       ] = False,
    reason: Annotated[str | None, typer.Option(
        "--reason", help="Why, in your words (logged, committed); expired, superseded or "
        "ineffective also name the kind (default: manual).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would move; write nothing.")
                       ] = False,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Move entries to the archive with a reason."""
    from loa_mem.memory.commands.lifecycle import archive as do_archive

    emit(do_archive(_store(root), ids or [], expired, reason, dry_run, events.actor(),
                    not no_commit), as_json, views.changed)


def forget(
    memory_id: MemoryId,
    reason: Annotated[str, typer.Option("--reason", help="Why it should go (logged, committed).",
                                        show_default=False)],
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Remove an entry from the working files; git history keeps it (see restore)."""
    from loa_mem.memory.commands.lifecycle import forget as do_forget

    emit(do_forget(_store(root), memory_id, reason, events.actor(), not no_commit), as_json,
         views.changed)


def restore(
    memory_id: Annotated[str, typer.Argument(
        help="A memory id (MEM-...), or a file path: a file gc archived or compressed, or one "
        "deleted, comes back byte for byte from git history.", show_default=False)],
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Bring back an entry (MEM id) or a file (path) from the archive or git history."""
    if not memory_id.upper().startswith("MEM-"):
        from loa_mem.cli.working_set_views import restored
        from loa_mem.workingset.restore_file import restore_path

        emit(restore_path(_store(root), memory_id, events.actor(), not no_commit), as_json,
             restored)
        return
    from loa_mem.memory.commands.lifecycle import restore as do_restore

    emit(do_restore(_store(root), memory_id, events.actor(), not no_commit), as_json,
         views.changed)


def history(memory_id: MemoryId, root: Root = None, as_json: Json = False) -> None:
    """List every commit that touched an entry, newest first."""
    from loa_mem.memory.commands.read import history as do_history

    emit(do_history(_store(root), memory_id), as_json, views.history)


def feedback(
    memory_id: MemoryId,
    success: Annotated[bool | None, typer.Option("--success/--failure",
                                                 help="Did applying it work?",
                                                 show_default=False)] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Record whether applying a memory worked; updates its effectiveness score."""
    from loa_mem.memory.commands.lifecycle import feedback as do_feedback

    if success is None:
        raise Refused("say how it went", "pass --success or --failure")
    emit(do_feedback(_store(root), memory_id, success, events.actor(), not no_commit),
         as_json, views.changed)


def validate(
    paths: Annotated[list[str] | None, typer.Argument(help="Only these files.")] = None,
    output: Annotated[str, typer.Option("-f", "--format", help="text, json or github.")] = "text",
    staged: Annotated[bool, typer.Option(
        "--staged", help="Check what the next commit holds (git's index), not the working "
        "tree.")] = False,
    root: Root = None, as_json: Json = False,
) -> None:
    """Check every file against the schemas and the rules; exit 1 on any error."""
    from loa_mem.memory.validate import validate_at

    if output not in ("text", "json", "github"):
        raise Refused("unknown --format", "use text, json or github")
    with working("validating the memory files", quiet=as_json or output != "text"):
        report = validate_at(root, paths, staged)
    if output == "github":
        sys.stdout.write(views.github_annotations(report))
    else:
        emit(report, as_json or output == "json", views.validated)
    raise typer.Exit(0 if report.ok else 1)


def status(root: Root = None, as_json: Json = False) -> None:
    """Counts by category and state, entries expiring soon, entries to review, pending files."""
    from loa_mem.memory.commands.read import status as do_status

    emit(do_status(_store(root)), as_json, views.status)


def schema(as_json: Json = False) -> None:
    """Print the entry schema (memory.schema.json)."""
    from loa_mem.core import schemas

    del as_json
    sys.stdout.write(schemas.text("memory.schema.json").rstrip("\n") + "\n")


def commit(root: Root = None, as_json: Json = False) -> None:
    """Commit what --no-commit (or git.auto_commit: false) left pending, in one commit."""
    from loa_mem.memory.commands.setup import commit_pending

    emit(commit_pending(_store(root)), as_json, views.committed)


def add_commands(app: typer.Typer) -> None:
    for command in (init, remember, recall, show, supersede, archive, forget, restore, history,
                    feedback, validate, status, schema, commit):
        app.command()(command)
