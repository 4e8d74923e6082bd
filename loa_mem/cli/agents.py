"""Commands of agent sidecars and sessions (spec section 8): `agent ...` and `session ...`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli import agents_views as views
from loa_mem.cli import options
from loa_mem.cli.app import Json, NoCommit, Root, new_app
from loa_mem.cli.render import emit
from loa_mem.core import events
from loa_mem.core.errors import Refused

if TYPE_CHECKING:
    from loa_mem.memory.store import Store

Agent = Annotated[str, typer.Argument(help="The agent's name (its sidecar's file name).",
                                      show_default=False)]
Session = Annotated[str | None, typer.Option(
    "--session", help="Record into this open session; `session end` applies it. Without it the "
                      "sidecar changes now, in its own commit.", show_default=False)]

agent_app = new_app("Agent sidecars: memories and relationships (spec section 8).")
session_app = new_app("Multi-agent sessions: brief the agents, then apply the memory rules.")


def _store(root: str | None) -> Store:
    from loa_mem.memory.store import Store

    return Store.open(root)


@agent_app.command("list")
def agent_list(root: Root = None, as_json: Json = False) -> None:
    """List the agents that have a sidecar."""
    from loa_mem.agents.commands import list_agents

    emit(list_agents(_store(root)), as_json, views.agent_list)


@agent_app.command("show")
def agent_show(agent: Agent, root: Root = None, as_json: Json = False) -> None:
    """Show an agent's memories, relationships and decision history."""
    from loa_mem.agents.commands import show

    emit(show(_store(root), agent), as_json, views.agent_show)


@agent_app.command("remember")
def agent_remember(
    agent: Agent,
    text: Annotated[str, typer.Argument(help="The memory: one line, at most 100 characters.",
                                        show_default=False)],
    kind: Annotated[str, typer.Option("--type", "-T", help="observation, preference, context "
                                      "or decision.", show_default=False)],
    confidence: Annotated[float | None, options.confidence_option(
        "at least 0.5 (default: decision 1.0, context and preference 0.8, observation 0.6)")
                          ] = None,
    session: Session = None, root: Root = None, no_commit: NoCommit = False,
    as_json: Json = False,
) -> None:
    """Give an agent a memory (at most 100 characters, confidence 0.5-1.0)."""
    from loa_mem.agents.commands import remember

    emit(remember(_store(root), agent, text, kind, confidence, session, events.actor(agent),
                  not no_commit), as_json, views.changed)


@agent_app.command("reinforce")
def agent_reinforce(
    agent: Agent,
    memory_id: Annotated[str, typer.Argument(help="The memory's id (m1, m2, ...).",
                                             show_default=False)],
    session: Session = None, root: Root = None, no_commit: NoCommit = False,
    as_json: Json = False,
) -> None:
    """Mark a memory as referenced: +0.1 confidence, and its decay count starts again."""
    from loa_mem.agents.commands import reinforce

    emit(reinforce(_store(root), agent, memory_id, session, events.actor(agent),
                   not no_commit), as_json, views.changed)


@agent_app.command("relate")
def agent_relate(
    agent: Agent,
    other: Annotated[str, typer.Argument(help="The other agent.", show_default=False)],
    agree: Annotated[bool, typer.Option("--agree", help="AGENT agreed with OTHER.")] = False,
    disagree: Annotated[bool, typer.Option("--disagree",
                                           help="AGENT disagreed with OTHER.")] = False,
    complement: Annotated[bool, typer.Option("--complement",
                                             help="Their expertise complemented.")] = False,
    session: Session = None, root: Root = None, no_commit: NoCommit = False,
    as_json: Json = False,
) -> None:
    """Count an agreement, disagreement or complement (listed from 2 agreements or 2
    disagreements; a complement at once)."""
    from loa_mem.agents.commands import relate

    chosen = [name for name, on in (("agree", agree), ("disagree", disagree),
                                    ("complement", complement)) if on]
    if len(chosen) != 1:
        raise Refused("say how they related", "pass exactly one of --agree, --disagree, "
                      "--complement")
    emit(relate(_store(root), agent, other, chosen[0], session, events.actor(agent),
                not no_commit), as_json, views.changed)


@session_app.command("start")
def session_start(
    agent: Annotated[list[str], typer.Option("--agent", "-a", help="A participant (repeat).",
                                             show_default=False)],
    session: Annotated[str | None, typer.Option(
        "--session", help="Session id (default: S-<time>); an open session is joined.",
        show_default=False)] = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Open a session; print each agent's last memories and relationships for its context
    (an agent without a sidecar gets an empty one, committed)."""
    from loa_mem.agents.sessions import start

    emit(start(_store(root), agent, session, events.actor(), not no_commit), as_json,
         views.started)


@session_app.command("end")
def session_end(
    session: Annotated[str, typer.Option("--session", help="The open session's id.",
                                         show_default=False)],
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Apply the memory rules to every participant's sidecar, in one commit."""
    from loa_mem.agents.sessions import end

    emit(end(_store(root), session, events.actor(), not no_commit), as_json, views.ended)


@session_app.command("list")
def session_list(root: Root = None, as_json: Json = False) -> None:
    """List the open sessions of this clone."""
    from loa_mem.agents.sessions import list_open

    emit(list_open(_store(root)), as_json, views.open_sessions)


def add_commands(app: typer.Typer) -> None:
    app.add_typer(agent_app, name="agent")
    app.add_typer(session_app, name="session")
