"""`memory_schema.retrieval.integrate_with_oracle`: `loa-mem oracle query TEXT --scope S` and
the MCP tool `oracle_query` answer while the key is true, and refuse, naming it, when false."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import Cli

KEY = "integrate_with_oracle"


def _switch_off(store: Path) -> None:
    path = store / ".loa.config.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"{KEY}: true", f"{KEY}: false"), encoding="utf-8")


@pytest.fixture
def memories(cli: Cli) -> dict[str, str]:
    return {
        "decision": support.remember(cli, "Auth uses short-lived JWTs signed by the gateway.",
                                     "decision", "--confidence", "0.95", "-t", "auth"),
        "learning": support.remember(cli, "The auth pattern that worked: refresh tokens "
                                     "rotate on every use.", "learning", "-t", "auth"),
        "fact": support.remember(cli, "The billing service owns invoices.", "fact"),
    }


def test_the_oracle_ranks_memories_of_the_loa_scope(cli: Cli, memories: dict[str, str]
                                                    ) -> None:
    out = cli.ok("oracle", "query", "auth pattern", "--scope", "loa", "--json").json()

    assert (out["query"], out["scope"]) == ("auth pattern", "loa")
    assert out["categories"] == ["fact", "decision", "learning", "error", "preference"]
    assert [r["id"] for r in out["results"]] == [memories["learning"], memories["decision"]]
    text = cli.ok("oracle", "query", "auth pattern").stdout
    assert text.startswith("oracle: 2 results for 'auth pattern' in scope loa\n")


def test_a_scope_names_one_category(cli: Cli, memories: dict[str, str]) -> None:
    out = cli.ok("oracle", "query", "auth", "--scope", "decisions", "--json").json()

    assert [r["id"] for r in out["results"]] == [memories["decision"]]


def test_an_unknown_scope_is_refused_naming_the_scopes_not_the_value(cli: Cli) -> None:
    outcome = cli("oracle", "query", "auth", "--scope", "sk-live-agents")

    assert outcome.code == 1
    assert "unknown scope; use one of: loa, facts, decisions" in outcome.stderr
    assert "sk-live-agents" not in outcome.stderr


def test_the_oracle_refuses_when_integrate_with_oracle_is_false(cli: Cli, store: Path,
                                                                memories: dict[str, str]
                                                                ) -> None:
    _switch_off(store)
    outcome = cli("oracle", "query", "auth pattern")

    assert outcome.code == 1
    assert outcome.stderr.startswith(
        "loa-mem: switched-off: the oracle is switched off (.loa.config.yaml: "
        "memory_schema.retrieval.integrate_with_oracle: false)")
    assert cli.ok("recall", "auth").stdout.count("MEM-") == 2  # recall itself is not affected


def test_the_mcp_oracle_tool_exists_only_while_the_key_is_true(
        store: Path, memories: dict[str, str]) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import _error, _text, run_session

    async def script(session: Any, call: Any) -> Any:
        names = {t.name for t in (await session.list_tools()).tools}
        answer = await call("oracle_query", query="auth pattern", scope="learnings")
        _switch_off(store)
        return names, answer, await call("oracle_query", query="auth pattern")

    names, answer, later = run_session(store, script)
    assert "oracle_query" in names
    assert [r["id"] for r in json.loads(_text(answer))["results"]] == [memories["learning"]]
    assert _error(later)
    assert "the oracle is switched off" in _text(later)

    async def listed(session: Any, call: Any) -> Any:
        names = {t.name for t in (await session.list_tools()).tools}
        return names, await call("oracle_query", query="auth")

    names, refused = run_session(store, listed)
    assert "oracle_query" not in names
    assert _error(refused)
