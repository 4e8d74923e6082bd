"""`loa-mem validate` coverage of agent sidecars (all but their `trust` block, which the trust
feature checks) and of the state index: each sidecar parses, matches agent.schema.json, is named
after its agent, has unique memory ids; the state index is JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from loa_mem.agents import sidecars
from loa_mem.core import schemacheck, yamlio
from loa_mem.core.errors import InvalidFile
from loa_mem.core.keylines import item_line, key_line
from loa_mem.memory.validate import Problem, secret_problems

__all__ = ["check", "checked_sidecar"]

if TYPE_CHECKING:
    from loa_mem.memory.store import Store


def check(store: Store, paths: list[str] | None,
          counted: dict[str, int] | None = None) -> Iterator[Problem]:
    """The problems of the selected sidecars and state index; how many sidecars it read goes
    to `counted` (validate's summary line)."""
    chosen, index = _selected(store, paths)
    if counted is not None:
        counted["agent_sidecars"] = len(chosen)
    for agent, rel in chosen:
        yield from _sidecar(store, agent, rel)
    if index is not None:
        yield from _state_index(store, index)


def _selected(store: Store, paths: list[str] | None) -> tuple[list[tuple[str, str]], str | None]:
    """The (agent, sidecar path) pairs and the state index that `paths` select
    (no paths: all of them)."""
    from loa_mem.agents.sidecars import state_index_rel

    wanted = {store.rel(store.top / p) if not p.startswith("/") else p for p in paths or []}
    chosen = []
    for agent in sidecars.agent_names(store):
        rel = sidecars.sidecar_rel(store, agent)
        if not wanted or rel in wanted:
            chosen.append((agent, rel))
    index = state_index_rel(store)
    present = (store.top / index).exists() and (not wanted or index in wanted)
    return chosen, index if present else None


def checked_sidecar(store: Store, agent: str) -> tuple[str, str, dict[str, Any]] | None:
    """The agent's sidecar as (path, text, plain data), read and parsed once; None when absent.
    InvalidFile names file and line of the first error `validate` finds in it (its trust block
    aside): a command never builds on a sidecar a hand edit broke, so a mistyped confidence is
    never read as 0 and pruned."""
    found = sidecars.sidecar_text(store, agent)
    if found is None:
        return None
    rel, text = found
    data = yamlio.load(text, rel)
    for problem in _content(agent, rel, text, data):
        if problem.severity == "error":
            raise InvalidFile(rel, problem.line, 1, f"[{problem.rule}] {problem.message}",
                              "fix the sidecar (see `loa-mem validate`); nothing was written")
    return rel, text, data


def _sidecar(store: Store, agent: str, rel: str) -> Iterator[Problem]:
    try:
        text = (store.top / rel).read_text(encoding="utf-8")
        data = yamlio.load(text, rel)
    except UnicodeDecodeError:
        yield Problem(rel, 1, "yaml", "not UTF-8 text")
        return
    except InvalidFile as error:
        yield Problem(rel, error.line, "yaml", error.message.split(": ", 1)[-1])
        return
    yield from _content(agent, rel, text, data)


def _content(agent: str, rel: str, text: str, data: Any) -> Iterator[Problem]:
    """The problems of a sidecar that parses: its shape, schema, name and memory ids."""
    lines = text.splitlines()
    if not isinstance(data, dict):
        yield Problem(rel, 1, "schema", "a sidecar must be a YAML mapping")
        return
    for problem in schemacheck.problems("agent.schema.json", data):
        yield Problem(rel, _line(lines, problem.path), "schema",
                      f"{problem.dotted or '(top level)'}: {problem.message}")
    if data.get("agent") not in (None, agent):
        yield Problem(rel, key_line(lines, "agent"), "agent-name",
                      f"agent is {data.get('agent')!r} but the file is named {agent}.yaml")
    yield from _duplicate_ids(rel, lines, data.get("memories"))
    yield from secret_problems(rel, lines, data)


def _line(lines: list[str], where: tuple[Any, ...]) -> int:
    if len(where) >= 2 and where[0] in ("memories", "decision_history") \
            and isinstance(where[1], int):
        line = item_line(lines, str(where[0]), where[1])
        return key_line(lines, str(where[2]), line - 1) if len(where) > 2 else line
    return key_line(lines, str(where[0])) if where else 1


def _duplicate_ids(rel: str, lines: list[str], memories: Any) -> Iterator[Problem]:
    seen: set[str] = set()
    for n, memory in enumerate(memories if isinstance(memories, list) else []):
        memory_id = memory.get("id") if isinstance(memory, dict) else None
        if memory_id is None:
            continue
        if str(memory_id) in seen:
            yield Problem(rel, item_line(lines, "memories", n), "duplicate-id",
                          f"memory id {memory_id} is used twice; give the later one a new id",
                          "error", str(memory_id))
        seen.add(str(memory_id))


def _state_index(store: Store, rel: str) -> Iterator[Problem]:
    try:
        data = json.loads((store.top / rel).read_text(encoding="utf-8") or "{}")
    except (UnicodeDecodeError, ValueError) as error:
        yield Problem(rel, getattr(error, "lineno", 1), "json",
                      "not valid JSON (delete it: the next session end rebuilds it)")
        return
    if not isinstance(data, dict) or not isinstance(data.get("agent_sidecars", {}), dict):
        yield Problem(rel, 1, "schema", "expected an object whose agent_sidecars is an object")
