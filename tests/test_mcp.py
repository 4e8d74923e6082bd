"""`loa-mem mcp` with a real MCP client session over stdio (the `mcp` package's own client)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import git

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {"remember", "recall", "show", "supersede", "forget", "feedback", "advise", "context",
         "oracle_query"}


def _error(result: Any) -> bool:
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def _schema(tool: Any) -> dict[str, Any]:
    schema: dict[str, Any] = getattr(tool, "input_schema", None) or tool.inputSchema
    return schema


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def run_session(store: Path, script: Any) -> Any:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "loa_mem", "mcp", "--root", str(store)],
                                   env=dict(os.environ), cwd=str(store))

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def call(name: str, **arguments: Any) -> Any:
                return await session.call_tool(name, arguments)
            return await script(session, call)

    return anyio.run(main)


def test_tools_are_listed_with_input_schemas(store: Path) -> None:
    async def script(session: Any, call: Any) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in run_session(store, script)}
    assert set(tools) == TOOLS
    remember = _schema(tools["remember"])
    assert set(remember["required"]) == {"content", "category"}
    assert remember["properties"]["category"]["description"].startswith("fact, decision")
    assert "reason" in _schema(tools["forget"])["required"]


def test_a_session_remembers_recalls_supersedes_and_forgets(store: Path) -> None:
    async def script(session: Any, call: Any) -> Any:
        out = {}
        out["remember"] = await call("remember", content="Deploys go out on Tuesdays",
                                     category="decision", confidence=0.95, tags=["release"],
                                     agent="claude")
        out["recall"] = await call("recall", query="deploys tuesday")
        first = json.loads(_text(out["remember"]))["id"]
        out["supersede"] = await call("supersede", old_id=first,
                                      content="Deploys go out on Wednesdays")
        second = json.loads(_text(out["supersede"]))["id"]
        out["secret"] = await call("remember", content="token ghp_" + "b" * 36,
                                   category="fact")
        out["forget"] = await call("forget", memory_id=second,
                                   reason="we stopped deploying weekly")
        out["missing"] = await call("forget", memory_id="MEM-20260201-099", reason="gone")
        return out

    out = run_session(store, script)
    assert not _error(out["remember"])
    first = support.assert_new_id(json.loads(_text(out["remember"]))["id"])
    recalled = json.loads(_text(out["recall"]))["results"]
    assert recalled[0]["content"] == "Deploys go out on Tuesdays"
    assert recalled[0]["id"] == first
    assert json.loads(_text(out["supersede"]))["supersedes"] == first
    second = support.assert_new_id(json.loads(_text(out["supersede"]))["id"])
    assert second != first
    assert _error(out["secret"])
    assert "GitHub token" in _text(out["secret"]) and "ghp_" not in _text(out["secret"])
    assert not _error(out["forget"])
    assert _error(out["missing"]) and "no memory MEM-20260201-099" in _text(out["missing"])
    subjects = git(store, "log", "--format=%s", "-3").splitlines()
    assert subjects[0].startswith(f"loa-mem forget: {second}")
    assert subjects[1].startswith(f"loa-mem supersede: {second} supersedes {first}")


def test_advise_and_context_over_mcp(store: Path) -> None:
    pytest.importorskip("loa_mem.workingset.advise")
    pytest.importorskip("loa_mem.context.fast")
    (store / "notes.md").write_text("# Notes\n")
    git(store, "add", "notes.md")
    git(store, "commit", "-qm", "notes")

    async def script(session: Any, call: Any) -> Any:
        await call("remember", content="The build needs Python 3.11", category="fact")
        advised = await call("advise", why="working on the notes",
                             hot=[{"path": "notes.md", "why": "editing it"}])
        context = await call("context", budget=500)
        return advised, context

    advised, context = run_session(store, script)
    assert not _error(advised), _text(advised)
    assert json.loads(_text(advised))["hot"] == 1
    assert not _error(context), _text(context)
    assert "The build needs Python 3.11" in json.loads(_text(context))["text"]
