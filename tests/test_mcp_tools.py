"""Every MCP tool through the official `mcp` client over stdio against `loa-mem mcp`: what each
returns, the hints and closed schemas it lists, and each refusal, with the CLI's messages."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from loa_mem import __version__
from tests import support
from tests.conftest import Cli, git, run_loa_mem

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.test_mcp import _error, _schema, _text, run_session

NEW_TOOLS = {"show", "feedback"}


def _hints(tool: Any) -> dict[str, Any]:
    annotations = tool.annotations
    assert annotations is not None, tool.name
    dumped: dict[str, Any] = annotations.model_dump(by_alias=True, exclude_none=True)
    return dumped


def _server_info_and_tools(store: Path) -> tuple[Any, list[Any]]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "loa_mem", "mcp", "--root", str(store)],
                                   env=dict(os.environ), cwd=str(store))

    async def main() -> tuple[Any, list[Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            return info, (await session.list_tools()).tools

    return anyio.run(main)


def test_listing_names_the_version_closes_schemas_and_gives_hints(store: Path) -> None:
    info, listed = _server_info_and_tools(store)
    server = getattr(info, "server_info", None) or info.serverInfo
    assert (server.name, server.version) == ("loa-mem", __version__)
    tools = {t.name: t for t in listed}
    assert set(tools) >= NEW_TOOLS
    for tool in tools.values():
        assert _schema(tool)["additionalProperties"] is False, tool.name
        assert _hints(tool)["openWorldHint"] is False, tool.name
    assert _hints(tools["show"])["readOnlyHint"] is True
    assert _hints(tools["context"])["readOnlyHint"] is True
    assert _hints(tools["forget"])["destructiveHint"] is True
    assert _hints(tools["remember"]) == {"readOnlyHint": False, "destructiveHint": False,
                                         "idempotentHint": True, "openWorldHint": False}
    assert _hints(tools["feedback"])["readOnlyHint"] is False
    assert set(_schema(tools["feedback"])["required"]) == {"memory_id", "success"}
    assert _schema(tools["context"])["properties"]["budget"]["description"].startswith(
        "Token budget (100 or more")


def test_show_and_feedback_call_what_the_commands_call(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "Retry flaky HTTP calls twice", "learning")
    second = support.remember(cli, "Deploys need a green main", "fact")
    expected = cli.ok("show", first, "--json").json()

    async def script(session: Any, call: Any) -> Any:
        return (await call("show", memory_id=first),
                await call("feedback", memory_id=first, success=True),
                await call("feedback", memory_id=second, success=False),
                await call("show", memory_id=first))

    shown, good, bad, again = run_session(store, script)
    assert not any(_error(r) for r in (shown, good, bad, again)), _text(shown)
    data = json.loads(_text(shown))
    assert data == expected
    assert data["entry"]["content"] == "Retry flaky HTTP calls twice"
    assert data["state"] == "active"
    assert json.loads(_text(good))["effectiveness"]["successes"] == 1
    assert json.loads(_text(bad))["effectiveness"]["failures"] == 1
    assert json.loads(_text(again))["entry"]["effectiveness"]["successes"] == 1
    subjects = git(store, "log", "--format=%s", "-2").splitlines()
    assert subjects == [f"loa-mem feedback: {second} failure",
                        f"loa-mem feedback: {first} success"]
    events = [e for e in support.events(store) if e["op"] == "feedback"]
    assert [e["ids"] for e in events] == [[first], [second]]


def test_context_returns_what_the_cli_prints_as_json(cli: Cli, store: Path) -> None:
    support.remember(cli, "The build needs Python 3.11", "fact")

    async def script(session: Any, call: Any) -> Any:
        return await call("context", budget=500, query="python build")

    result = run_session(store, script)
    assert not _error(result), _text(result)
    data = json.loads(_text(result))
    command = run_loa_mem(store, "context", "--budget", "500", "--query", "python build",
                          "--json")
    assert data == json.loads(command.stdout)
    assert set(data) >= {"root", "budget_tokens", "tokens", "sections", "cut", "text",
                         "warnings"}
    assert "The build needs Python 3.11" in data["text"]


def test_context_fails_open_on_a_broken_config_like_the_cli(cli: Cli, store: Path) -> None:
    support.remember(cli, "Config errors must not hide memories", "fact")
    with open(store / ".loa.config.yaml", "a", encoding="utf-8") as handle:
        handle.write("retention: forever\n")

    async def script(session: Any, call: Any) -> Any:
        return await call("context")

    result = run_session(store, script)
    assert not _error(result), _text(result)
    data = json.loads(_text(result))
    assert "Config errors must not hide memories" in data["text"]
    assert any("retention" in w for w in data["warnings"])


REFUSALS = [
    ("recall", {"query": "x", "limit": -1}, "usage: limit must be at least 1 (got -1)"),
    ("recall", {"limit": 0}, "usage: limit must be at least 1 (got 0)"),
    ("context", {"budget": 0}, "usage: budget must be at least 100 tokens (got 0)"),
    ("context", {"budget": -5}, "usage: budget must be at least 100 tokens (got -5)"),
    ("recall", {"query": "x", "limits": 3}, "refused: recall takes no argument limits; its "
     "arguments are query, categories, tags, min_confidence, limit, include_expired, track, "
     "mode"),
    ("remember", {"content": "A fact", "category": "fact", "secret": "hunter2"},
     "refused: remember takes no argument secret;"),
    ("show", {"memory_id": "MEM-20260201-099"}, "no memory MEM-20260201-099"),
    ("show", {}, "refused: invalid arguments for show: memory_id: Field required"),
    ("feedback", {"memory_id": "MEM-20260201-099", "success": True},
     "no memory MEM-20260201-099"),
    ("feedback", {"memory_id": "MEM-20260201-099", "success": "sk-live-1234567890abcdefghijkl"},
     "refused: invalid arguments for feedback: success:"),
    ("remember", {"content": "x", "category": "opinion"}, "refused: unknown category"),
    ("recall", {"categories": ["opinion"]}, "refused: unknown category"),
]


def test_every_refusal_is_a_tool_error_with_the_clis_message(store: Path) -> None:
    async def script(session: Any, call: Any) -> Any:
        return [await call(name, **arguments) for name, arguments, _ in REFUSALS]

    before = support.head(store)
    results = run_session(store, script)
    for (name, arguments, message), result in zip(REFUSALS, results, strict=True):
        assert _error(result), (name, arguments, _text(result))
        assert message in _text(result), (name, arguments, _text(result))
        assert "sk-live" not in _text(result) and "hunter2" not in _text(result)
    assert support.head(store) == before


@pytest.mark.parametrize(("args", "message"), [
    (("recall", "--limit", "-1"), "limit must be at least 1 (got -1)"),
    (("context", "--budget", "0"), "budget must be at least 100 tokens (got 0)"),
    (("context", "--budget", "-5"), "budget must be at least 100 tokens (got -5)"),
])
def test_the_command_line_refuses_the_same_values(store: Path, args: tuple[str, ...],
                                                  message: str) -> None:
    done = run_loa_mem(store, *args)
    assert done.returncode == 2
    assert message in done.stderr
