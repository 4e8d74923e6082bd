"""Every MCP tool, called with odd but well-formed JSON arguments drawn from its own input schema
(wrong types, huge and negative numbers, empty and very long text, ids that exist and ids
that do not), answers or returns a tool error in a line or two: never a traceback, and the
server keeps serving the calls after it. Seeded; `LOA_MEM_FUZZ_DRAWS` draws more."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

pytest.importorskip("mcp")

from tests.test_mcp import _error, _schema, _text, run_session

_DRAWS = int(os.environ.get("LOA_MEM_FUZZ_DRAWS", "3"))
_SEED = int(os.environ.get("LOA_MEM_FUZZ_SEED", "7"))
_ODD: list[Any] = ["", " ", "x" * 20000, "MEM-20260101-zzzzzzzz", "\u202eevil", "line\nbreak",
                   -1, 0, 2**70, -(2**70), 1.5, 1e308, True, None, [], {}, ["a", 3], {"a": 1}]


def _draw(schema: dict[str, Any], rng: random.Random, ids: list[str]) -> Any:
    """A value for `schema`: often what it asks for at an edge, sometimes anything at all."""
    if rng.random() < 0.12:
        return rng.choice([*_ODD, *ids])
    kinds = schema.get("type")
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return _draw(rng.choice(options), rng, ids)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = rng.choice(kinds) if isinstance(kinds, list) else kinds
    if kind == "string":
        return rng.choice(["cache", "", "database layer", *ids, "x" * 5000])
    if kind == "integer":
        return rng.choice([0, 1, -5, 10**6, 2**63, 2**64])
    if kind == "number":
        return rng.choice([0, 0.5, 1, -0.1, 1.7976931348623157e308])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [_draw(schema.get("items", {}), rng, ids) for _ in range(rng.randint(0, 3))]
    if kind == "null":
        return None
    return rng.choice(_ODD)


def _arguments(schema: dict[str, Any], rng: random.Random, ids: list[str]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {name: _draw(sub, rng, ids) for name, sub in properties.items()
            if name in required or rng.random() < 0.5}


def test_odd_arguments_to_every_tool_get_a_result_or_a_short_error(store: Path) -> None:
    cli = Cli(store)
    ids = [cli.ok("remember", text, "-c", "fact", "--confidence", "0.95", "--json").json()["id"]
           for text in ("The cache keeps entries for ten minutes.",
                        "The queue drains every night.")]
    rng = random.Random(_SEED)

    async def script(session: Any, call: Any) -> list[tuple[str, dict[str, Any], str]]:
        odd = []
        tools = (await session.list_tools()).tools
        for _ in range(_DRAWS):
            for tool in tools:
                arguments = _arguments(_schema(tool), rng, ids)
                result = await call(tool.name, **arguments)
                text = _text(result)
                # a refusal is short, and never repeats a long value it was given
                if "Traceback" in text or (_error(result) and (
                        not text.strip() or text.count("\n") > 3 or len(text) > 600)):
                    odd.append((tool.name, arguments, text[:500]))
        # still serving: a new memory is kept and found (the draws may have forgotten others)
        kept = await call("remember", content="The zebra migration runs on Fridays.",
                          category="fact", confidence=0.95)
        assert not _error(kept), _text(kept)
        found = await call("recall", query="zebra migration")
        assert not _error(found) and "zebra" in _text(found)
        return odd

    assert run_session(store, script) == []


def test_the_context_tool_refuses_an_agent_name_that_cannot_be_a_sidecar(store: Path) -> None:
    async def script(session: Any, call: Any) -> list[tuple[bool, str]]:
        return [(_error(result), _text(result)) for result in (
            await call("context", agents=["../../outside/evil"]),
            await call("context", agents=["reviewer"]))]

    (refused, message), (failed, block) = run_session(store, script)
    assert refused and "agents: an agent name is 1-64 letters" in message
    assert "outside" not in message
    assert not failed and "## Agent reviewer" in block
