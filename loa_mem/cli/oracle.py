"""`loa-mem oracle query TEXT --scope SCOPE`: memories through the oracle surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from loa_mem.cli.app import Json, Root, new_app
from loa_mem.cli.render import Block, emit

if TYPE_CHECKING:
    from loa_mem.memory.oracle import Answer

oracle_app = new_app("Query memories as Loa's oracle does (memory_schema.retrieval."
                     "integrate_with_oracle).")


def answered(result: Answer) -> list[Block]:
    from loa_mem.cli.memory_views import recalled

    hits = len(result.recalled.hits)
    head = (f"oracle: {hits} result{'s' if hits != 1 else ''} for "
            f"{result.recalled.query!r} in scope {result.scope}")
    return [head, *recalled(result.recalled)] if hits else [head]


@oracle_app.command("query")
def oracle_query(
    text: Annotated[str, typer.Argument(help="What to look for, e.g. 'auth pattern'.",
                                        show_default=False)],
    scope: Annotated[str, typer.Option("--scope", help="loa (every category), or one of "
                                       "facts, decisions, learnings, errors, preferences.")
                     ] = "loa",
    limit: Annotated[int | None, typer.Option("--limit", help="At most N results (default: "
                                              "retrieval.max_per_query).")] = None,
    root: Root = None, as_json: Json = False,
) -> None:
    """Ranked memories of a scope; refused when integrate_with_oracle is false."""
    from loa_mem.memory.oracle import query
    from loa_mem.memory.store import Store

    emit(query(Store.open(root), text, scope, limit), as_json, answered)


def add_commands(app: typer.Typer) -> None:
    app.add_typer(oracle_app, name="oracle")
