"""The MCP tool `oracle_query`: `loa-mem oracle query` for agents.

Registered only when `memory_schema.retrieval.integrate_with_oracle` is true as the server
starts; every call checks the key again, so switching it off later refuses with the CLI's
message. Kept apart from `mcp.py` so the tool list there stays the memory commands'.
"""

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from loa_mem.core.errors import LoaMemError
from loa_mem.memory.store import Store


def _switched_on(root: str | None) -> bool:
    try:
        store = Store.open(root)
    except LoaMemError:
        return True  # the store's own problem: each call reports it
    try:
        return store.config.enabled and bool(
            store.config.retrieval.get("integrate_with_oracle", True))
    finally:
        store.close()


F = TypeVar("F", bound=Callable[..., Any])
Registrar = Callable[..., Callable[[F], F]]


def register(server: Any, tools: Any, field: Any, root: str | None, tool: Registrar[Any]
             ) -> bool:
    """Add `oracle_query` to `server` (with `tool`, mcp.py's registration: hints and a closed
    input schema) when the key is on; whether it was added."""
    if not _switched_on(root):
        return False

    @tool(server, name="oracle_query", description=(
        "Query the project's memories as Loa's oracle does: ranked active memories of a scope. "
        "Returns {query, scope, categories, results: [{id, category, content, summary, "
        "confidence, score}]}."))
    def oracle_query(
            query: Annotated[str, field(description="What to look for, e.g. 'auth pattern'.")],
            scope: Annotated[str, field(description="loa (every category), or one of facts, "
                                        "decisions, learnings, errors, preferences.")] = "loa",
            limit: int | None = None) -> dict[str, Any]:
        from loa_mem.memory.oracle import query as ask

        result: dict[str, Any] = tools.call(lambda store: ask(store, query, scope, limit))
        return result

    return True
