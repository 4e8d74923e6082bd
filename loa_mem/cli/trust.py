"""`loa-mem trust ...`: the agent trust memory (spec section 8)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli import trust_views as views
from loa_mem.cli.app import Json, NoCommit, Root, new_app
from loa_mem.cli.render import emit
from loa_mem.core import events, textfile

if TYPE_CHECKING:
    from loa_mem.memory.store import Store

AgentName = Annotated[str, typer.Argument(help="The agent's name (its sidecar's name).",
                                          show_default=False)]
Round = Annotated[str, typer.Option("--round", help="The round id, e.g. run_20260122/round_2.",
                                    show_default=False)]
Task = Annotated[str | None, typer.Option("--task", help="The task of the round (context).",
                                          show_default=False)]
Model = Annotated[str | None, typer.Option("--model", help="The model the agent runs on now.",
                                           show_default=False)]
Role = Annotated[str | None, typer.Option("--role", help="The agent's primary role now, e.g. "
                                          "creator, reviewer, curator.", show_default=False)]


def _store(root: str | None) -> Store:
    from loa_mem.memory.store import Store

    return Store.open(root)


def dissent(
    agent: AgentName,
    text: Annotated[str, typer.Option("--text", help="What the agent objected to; - reads stdin.",
                                      show_default=False)],
    cite: Annotated[list[str] | None, typer.Option(
        "--cite", help="A rubric criterion the dissent cites; repeat.", show_default=False)] = None,
    impact: Annotated[bool, typer.Option(
        "--impact/--no-impact", help="Whether the dissent changed the final output.")] = False,
    round_id: Annotated[str | None, typer.Option(
        "--round", help="The round id (a dissent without one counts no round).",
        show_default=False)] = None,
    task: Task = None,
    artifact_type: Annotated[str | None, typer.Option(
        "--artifact-type", help="What was dissented on, e.g. adr (context).",
        show_default=False)] = None,
    feedback: Annotated[bool | None, typer.Option(
        "--feedback-incorporated/--feedback-ignored",
        help="Whether the dissent's feedback made it into the output.", show_default=False)] = None,
    model: Model = None, role: Role = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Record a dissent: its depth (length, citations, novelty) and the new trust score."""
    from loa_mem.trust.recording import dissent as do_dissent
    from loa_mem.trust.rules import About

    if text == "-":
        text = textfile.read_stdin()
    about = About(task, artifact_type, model, role, feedback)
    emit(do_dissent(_store(root), agent, text, cite or [], impact, round_id, events.actor(),
                    not no_commit, about), as_json, views.dissented)


def override(
    agent: AgentName, round_id: Round,
    agent_output: Annotated[str, typer.Option("--agent-output", help="File: what the agent "
                                              "produced.", show_default=False)],
    human_decision: Annotated[str, typer.Option("--human-decision", help="File: what the human "
                                                "decided instead.", show_default=False)],
    task: Task = None, model: Model = None, role: Role = None,
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Record a human override of an agent's output (checked for regret; texts not stored)."""
    from loa_mem.trust.recording import override as do_override
    from loa_mem.trust.rules import About

    emit(do_override(_store(root), agent, round_id, agent_output, human_decision,
                     events.actor(), not no_commit, About(task, None, model, role)), as_json,
         views.overridden)


def check_reverts(
    round_id: Round,
    final: Annotated[str, typer.Option("--final", help="File: the round's final version now.",
                                       show_default=False)],
    root: Root = None, no_commit: NoCommit = False, as_json: Json = False,
) -> None:
    """Infer regret: at once when the final version went back to the agent's output, after the
    deadline when it is not the human decision."""
    from loa_mem.trust.recording import check_reverts as do_check

    emit(do_check(_store(root), round_id, final, events.actor(), not no_commit), as_json,
         views.checked)


def score(agent: AgentName, root: Root = None, as_json: Json = False) -> None:
    """Show an agent's trust score now, its parts and its history with reasons."""
    from loa_mem.trust.commands import standing

    emit(standing(_store(root), agent), as_json, views.standing)


def report(root: Root = None, as_json: Json = False) -> None:
    """Every agent's trust: score, probation, rounds, dissents, overrides, regret, and how
    often an escalation to a human held."""
    from loa_mem.trust.commands import report as do_report

    emit(do_report(_store(root)), as_json, views.reported)


def pick_advocate(
    agents: Annotated[list[str], typer.Argument(help="The candidates.", show_default=False)],
    seed: Annotated[int | None, typer.Option("--seed", help="Seed the draw (reproducible).",
                                             show_default=False)] = None,
    root: Root = None, as_json: Json = False,
) -> None:
    """Draw the devil's advocate, weighted by trust (probation and < 0.2 left out)."""
    from loa_mem.trust.commands import pick_advocate as do_pick

    emit(do_pick(_store(root), agents, seed), as_json, views.advocate)


def add_commands(app: typer.Typer) -> None:
    group = new_app("The agent trust memory: dissents, overrides, scores, devil's advocate.")
    for command in (dissent, override, check_reverts, score, report, pick_advocate):
        group.command()(command)
    app.add_typer(group, name="trust")
