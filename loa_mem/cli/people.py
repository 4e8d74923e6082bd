"""`loa-mem pref`: one person's private preferences and session memory (spec section 9).

These commands never open a project store: the personal store lives in LOA_MEM_HOME (else the
platform's user data directory), so they work anywhere.
"""

from __future__ import annotations

from typing import Annotated

import typer

from loa_mem.cli import options
from loa_mem.cli import people_views as views
from loa_mem.cli.app import Json, new_app
from loa_mem.cli.confirm import Yes, ask
from loa_mem.cli.render import emit
from loa_mem.core import flagvalues
from loa_mem.people import commands as core

User = Annotated[str | None, typer.Option(
    "--user", help="Whose memory (default: LOA_MEM_USER, else git's user.email).",
    show_default=False)]
Key = Annotated[str, typer.Argument(help="A preference key, e.g. vertical or channels.",
                                    show_default=False)]
Value = Annotated[str, typer.Argument(
    help="A string, a number, or a JSON list such as '[\"Paid Search\", \"CTV\"]'.",
    show_default=False)]
Context = Annotated[str | None, typer.Option("--context", help="Where it was learned.")]
Purge = Annotated[bool, typer.Option(
    "--purge", help="Also rewrite the store's git history so the data is gone from git too.")]

pref = new_app("Your private preferences and session memory (outside any project).")
session = new_app("Decisions and context of recent sessions.")
pref.add_typer(session, name="session")


@pref.command("set")
def set_(key: Key, value: Value, context: Context = None, user: User = None,
         as_json: Json = False) -> None:
    """State a preference explicitly: confidence 100, persistent."""
    emit(core.pref_set(user, key, value, context), as_json, views.changed)


@pref.command()
def observe(key: Key, value: Value, context: Context = None, user: User = None,
            as_json: Json = False) -> None:
    """Record a behaviour: 40 the first time, +15 per repeat of the same value, at most 85."""
    emit(core.pref_observe(user, key, value, context), as_json, views.changed)


@pref.command()
def use(key: Key, user: User = None, as_json: Json = False) -> None:
    """Record that a preference was applied: +5, up to its original level."""
    emit(core.pref_use(user, key), as_json, views.changed)


@pref.command()
def confirm(key: Key, user: User = None, as_json: Json = False) -> None:
    """The user confirmed a preference: back to 100, explicit and persistent."""
    emit(core.pref_confirm(user, key), as_json, views.changed)


@pref.command()
def contradict(key: Key, value: Value, user: User = None, as_json: Json = False) -> None:
    """New behaviour contradicts a preference: -30; an explicit one is reset to 0 and flagged."""
    emit(core.pref_contradict(user, key, value), as_json, views.changed)


@pref.command()
def get(key: Key, user: User = None, as_json: Json = False) -> None:
    """One preference, its confidence now, its band and what an agent should do with it."""
    emit(core.pref_get(user, key), as_json, views.got)


@pref.command()
def show(user: User = None, as_json: Json = False) -> None:
    """What do you remember about me: every preference and session record."""
    emit(core.show(user), as_json, views.shown)


@pref.command()
def defaults(user: User = None, as_json: Json = False) -> None:
    """Show my default settings: what a session applies, and what it asks to confirm."""
    emit(core.defaults(user), as_json, views.defaults)


@pref.command()
def context(user: User = None, as_json: Json = False) -> None:
    """The preferences to inject at session start (never fails: errors are logged)."""
    emit(core.context(user), as_json, views.context)


@pref.command()
def forget(text: Annotated[str, typer.Argument(help="What to forget (matched in keys, values, "
                                                    "contexts and session ids).",
                                               show_default=False)],
           purge: Purge = False, yes: Yes = False, user: User = None,
           as_json: Json = False) -> None:
    """Forget that I said X: find the matching memories, show them, delete them now."""
    if purge:
        ask("--purge rewrites the personal store's git history", yes)
    emit(core.forget(user, text, purge), as_json, views.deleted)


@pref.command()
def clear(flagged: Annotated[bool, typer.Option(
              "--flagged", help="Only the preferences flagged for removal.")] = False,
          sessions: Annotated[bool, typer.Option(
              "--sessions", help="Also every session record.")] = False,
          purge: Purge = False, yes: Yes = False, user: User = None,
          as_json: Json = False) -> None:
    """Clear my preferences (all of them, or only the flagged ones)."""
    ask("pref clear deletes " + ("the flagged preferences" if flagged else "your preferences")
        + (" and rewrites the store's git history" if purge else ""), yes)
    emit(core.clear(user, flagged, sessions, purge), as_json, views.deleted)


@session.command()
def record(key: Key, value: Value,
           session_id: Annotated[str, typer.Option("--session", envvar="LOA_MEM_SESSION",
                                                   help="The session's id.",
                                                   show_default=False)],
           persistent: Annotated[bool, typer.Option(
               "--persistent", help="Confirmed: never expires.")] = False,
           ttl: Annotated[str, options.ttl_option("(default: 30; permanent = --persistent)")
                          ] = "30d",
           confidence: Annotated[float | None, options.confidence_option(
               "default: 100% if persistent, else 80%")] = None,
           context: Context = None, user: User = None, as_json: Json = False) -> None:
    """Record a decision or context of a session; it expires unless --persistent."""
    try:
        days = flagvalues.ttl_days(ttl)
    except ValueError as bad:
        raise typer.BadParameter(str(bad), param_hint="--ttl") from None
    try:
        percent = None if confidence is None else flagvalues.percent(confidence)
    except ValueError as bad:
        raise typer.BadParameter(str(bad), param_hint="--confidence") from None
    emit(core.session_record(user, session_id, key, value, persistent or days is None,
                             days or 30, percent, context), as_json, views.recorded)


@session.command("confirm")
def session_confirm(key: Key,
            session_id: Annotated[str | None, typer.Option(
                "--session", help="Only a record of this session (default: the newest).",
                show_default=False)] = None,
            user: User = None, as_json: Json = False) -> None:
    """Confirm a session record: it becomes persistent (confidence 100), no second copy."""
    emit(core.session_confirm(user, key, session_id), as_json, views.recorded)


@session.command()
def load(user: User = None, as_json: Json = False) -> None:
    """The last 5 sessions' live records (persistent or unexpired), by confidence."""
    emit(core.session_load(user), as_json, views.loaded)


def add_commands(app: typer.Typer) -> None:
    app.add_typer(pref, name="pref")
