"""The oracle query surface: memories queryable as Loa's oracle queries them.

`loa-mem oracle query TEXT --scope SCOPE` (and the MCP tool `oracle_query`) rank the active
memories of a scope with recall's ranking and answer in one shape. The scope names a set of
categories: `loa` is every category of the Loa grimoire, the others one category each (by its
file's plural name). It answers only while `memory_schema.retrieval.integrate_with_oracle` is
true (and memory itself is on); otherwise it refuses, naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loa_mem.core.errors import Refused, SwitchedOff
from loa_mem.memory import rules as model
from loa_mem.memory.commands.read import default_filters, limit_problem, recall
from loa_mem.memory.recall import Recalled
from loa_mem.memory.store import Store

KEY = "memory_schema.retrieval.integrate_with_oracle"
SCOPES: dict[str, tuple[str, ...]] = {
    "loa": tuple(model.CATEGORIES), "facts": ("fact",), "decisions": ("decision",),
    "learnings": ("learning",), "errors": ("error",), "preferences": ("preference",)}


@dataclass(frozen=True)
class Answer:
    scope: str
    recalled: Recalled

    def to_json(self) -> dict[str, Any]:
        found = self.recalled.to_json()
        return {"query": found["query"], "scope": self.scope,
                "categories": list(SCOPES[self.scope]), "results": found["results"]}


def require_oracle(store: Store) -> None:
    store.config.require_memory("oracle query")
    if not store.config.retrieval.get("integrate_with_oracle", True):
        raise SwitchedOff(f"the oracle is switched off (.loa.config.yaml: {KEY}: false)",
                          f"set {KEY}: true to query memories through it")


def query(store: Store, text: str, scope: str = "loa", limit: int | None = None) -> Answer:
    require_oracle(store)
    if scope not in SCOPES:
        # the value is not repeated: what was typed there may be anything, a secret included
        raise Refused("unknown scope", f"use one of: {', '.join(SCOPES)}")
    if not text.strip():
        raise Refused("the oracle needs a query", "say what to look for, e.g. 'auth pattern'")
    problem = limit_problem(limit)
    if problem:
        raise Refused(problem, "ask for 1 or more results")
    filters = default_filters(store, query=text, categories=SCOPES[scope], limit=limit)
    return Answer(scope, recall(store, filters, False, "oracle"))
