"""`loa-mem mcp`: the Model Context Protocol on stdio, with the tools remember, recall, show,
supersede, forget, feedback, advise and context.

Each tool calls the same core function as its CLI command, opens the store afresh (so the index
follows files changed meanwhile by git or by hand), and returns the command's `--json` object.
Arguments are checked as the command line checks them (the same functions, the same messages);
an argument a tool does not take is refused, and every input schema says so
(`additionalProperties: false`). A refusal comes back as a tool error carrying the CLI's
one-line message. Tools carry the MCP hints (read-only, destructive, idempotent) that hold for
every call. The `mcp` package is an optional extra (`pip install 'loa-mem[mcp]'`), imported
only here; both its 1.x `FastMCP` and its 2.x `MCPServer` are supported.

Annotations are evaluated eagerly here (no `from __future__ import annotations`): the SDK reads
the tool functions' signatures to build their input schemas.
"""

import importlib
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from loa_mem.core import events
from loa_mem.core.errors import ConfigError, LoaMemError, UsageError
from loa_mem.core.terminal import printable
from loa_mem.memory import rules as model
from loa_mem.memory.store import Store

INSTRUCTIONS = (
    "loa-mem is this project's git-native memory. Call `context` at the start of a session, "
    "`recall` before deciding something the team may already have decided (`show` for one "
    "entry), `remember` for a decision, fact, learning, error or preference worth keeping "
    "(never secrets or personal data), `feedback` after applying a memory (did it work?), "
    "`supersede` to replace an entry, `forget` to remove one with a reason, and `advise` to "
    "say which files should stay in or leave the working set. Every change is one git commit."
)

# The MCP hints that hold for every call of each tool (openWorldHint: only this repository).
# remember returns the existing id for an exact duplicate; forget refuses an id already gone.
_HINTS: dict[str, dict[str, bool]] = {
    "remember": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    "recall": {"readOnlyHint": False, "destructiveHint": False},  # `track` counts applications
    "show": {"readOnlyHint": True, "idempotentHint": True},
    "supersede": {"readOnlyHint": False, "destructiveHint": False},
    "forget": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    "feedback": {"readOnlyHint": False, "destructiveHint": False},
    "advise": {"readOnlyHint": False, "destructiveHint": True},  # trigger_gc evicts files
    "context": {"readOnlyHint": True, "idempotentHint": True},
    "oracle_query": {"readOnlyHint": True, "idempotentHint": True},  # mcp_oracle.py
}


F = TypeVar("F", bound=Callable[..., Any])


def _sdk() -> tuple[Any, type[Exception]]:
    """The server class and its tool-error class: mcp 2.x `MCPServer`, else 1.x `FastMCP`."""
    for server_module, server_name, errors_module in (
            ("mcp.server.mcpserver", "MCPServer", "mcp.server.mcpserver.exceptions"),
            ("mcp.server.fastmcp", "FastMCP", "mcp.server.fastmcp.exceptions")):
        try:
            server_class = getattr(importlib.import_module(server_module), server_name)
            tool_error: type[Exception] = importlib.import_module(errors_module).ToolError
        except (ImportError, AttributeError):
            continue
        return server_class, tool_error
    raise ConfigError("the mcp package is not installed",
                      "install it with: pip install 'loa-mem[mcp]'")


def _tool(server: Any, name: str, description: str) -> Callable[[F], F]:
    """Register a tool with its hints and a closed input schema."""
    def register(function: F) -> F:
        from mcp.types import ToolAnnotations

        hints = ToolAnnotations.model_validate({**_HINTS.get(name, {}), "openWorldHint": False})
        server.add_tool(function, name=name, description=description, annotations=hints)
        server._tool_manager.get_tool(name).parameters["additionalProperties"] = False
        return function
    return register


def _usage(problem: str | None) -> None:
    if problem:
        raise UsageError(problem, "see the tool's input schema")


class _Tools:
    """The tool bodies; `root` is the store every call opens."""

    def __init__(self, root: str | None, tool_error: type[Exception]) -> None:
        self.root = root
        self.tool_error = tool_error

    def call(self, work: Callable[[Store], Any]) -> dict[str, Any]:
        """`work` on the store, opened for this call; its result's JSON."""
        def on_store() -> Any:
            store = Store.open(self.root)
            try:
                return work(store)
            finally:
                store.close()
        return self.run(on_store)

    def run(self, work: Callable[[], Any]) -> dict[str, Any]:
        try:
            data: dict[str, Any] = work().to_json()
            return data
        except Exception as error:  # what a user can fix is the tool's error; a bug stays one
            from loa_mem.core.errors import user_error

            known = error if isinstance(error, LoaMemError) else user_error(error)
            if known is None:
                raise
            raise self.tool_error(f"{known.kind}: {known.one_line()}") from None


def _request(content: str, category: str, summary: str | None, confidence: float | None,
             tags: list[str] | None, ttl: str | None, related: list[str] | None,
             agent: str | None, session: str | None) -> model.NewEntry:
    return model.NewEntry(content=content, category=category, summary=summary,
                          confidence=confidence, tags=tuple(tags or ()), ttl=ttl,
                          session=session or "mcp", agent=agent, related=tuple(related or ()))


def _memory_tools(server: Any, tools: _Tools, field: Any) -> None:
    Text = Annotated[str, field(description="What to remember (1-2000 characters).")]
    Category = Annotated[str, field(description="fact, decision, learning, error or preference.")]
    Tags = Annotated[list[str] | None, field(description="Lowercase kebab-case tags.")]
    Agent = Annotated[str | None, field(description="The agent that remembers (recorded).")]

    @_tool(server, name="remember", description="Remember one entry; refused (with the reason) "
                 "if it breaks a rule or holds a secret. Returns {id, created}.")
    def remember(content: Text, category: Category, summary: str | None = None,
                 confidence: float | None = None, tags: Tags = None, ttl: str | None = None,
                 related: list[str] | None = None, agent: Agent = None,
                 session: str | None = None) -> dict[str, Any]:
        from loa_mem.memory.commands.remember import remember as do_remember

        request = _request(content, category, summary, confidence, tags, ttl, related, agent,
                           session)
        return tools.call(lambda s: do_remember(s, request, events.actor(agent)))

    @_tool(server, name="recall", description="Find the memories that matter now, best first. "
                 "Returns {results: [{id, category, content, summary, confidence, score}]}.")
    def recall(query: Annotated[str, field(description="Words to look for (may be empty).")] = "",
               categories: list[str] | None = None, tags: Tags = None,
               min_confidence: float | None = None,
               limit: Annotated[int | None, field(description="At most this many (1 or more)."
                                                  )] = None,
               include_expired: bool = False,
               track: Annotated[bool, field(description="Count an application of each result "
                                            "(writes and commits).")] = False,
               mode: Annotated[str | None, field(description="lexical, semantic or hybrid "
                                                 "(default: the configured one).")] = None
               ) -> dict[str, Any]:
        from loa_mem.memory.commands.read import default_filters, limit_problem
        from loa_mem.memory.commands.read import recall as do_recall

        def work(store: Store) -> Any:
            _usage(limit_problem(limit, "limit"))
            for name in categories or []:
                model.check_category(name)
            filters = default_filters(store, query=query, categories=tuple(categories or ()),
                                      tags=tuple(tags or ()), min_confidence=min_confidence,
                                      limit=limit, include_expired=include_expired, mode=mode)
            return do_recall(store, filters, track, events.actor())
        return tools.call(work)

    @_tool(server, name="show", description="One entry, its state (active, expired, superseded, "
                 "archived), tier and supersede chain. Returns {entry, path, line, state, tier, "
                 "chain}.")
    def show(memory_id: Annotated[str, field(description="The id to show.")]) -> dict[str, Any]:
        from loa_mem.memory.commands.read import show as do_show

        return tools.call(lambda s: do_show(s, memory_id))


def _change_tools(server: Any, tools: _Tools, field: Any) -> None:
    Text = Annotated[str, field(description="The new entry's content (1-2000 characters).")]
    Id = Annotated[str, field(description="A memory id (MEM-...).")]

    @_tool(server, name="supersede", description="Replace an entry with a new one; the old one "
                 "stays for the audit trail, linked both ways. Returns {id, supersedes}.")
    def supersede(old_id: Annotated[str, field(description="The id to replace.")],
                  content: Text, category: str | None = None, summary: str | None = None,
                  confidence: float | None = None,
                  tags: Annotated[list[str] | None, field(description="Lowercase kebab-case "
                                                          "tags.")] = None,
                  ttl: str | None = None,
                  agent: Annotated[str | None, field(description="The agent that supersedes "
                                                     "(recorded).")] = None) -> dict[str, Any]:
        from loa_mem.memory.commands.remember import supersede as do_supersede

        request = _request(content, category or "", summary, confidence, tags, ttl, None,
                           agent, None)
        return tools.call(lambda s: do_supersede(s, old_id, request, events.actor(agent)))

    @_tool(server, name="forget", description="Remove an entry from the working files with a "
                 "reason (logged and committed; `loa-mem restore` brings it back).")
    def forget(memory_id: Id, reason: Annotated[str, field(description="Why it should go.")]
               ) -> dict[str, Any]:
        from loa_mem.memory.commands.lifecycle import forget as do_forget

        return tools.call(lambda s: do_forget(s, memory_id, reason, events.actor()))

    @_tool(server, name="feedback", description="Record whether applying a memory worked; "
                 "updates its effectiveness score and tier. Returns {op, ids, effectiveness, "
                 "tier, commit}.")
    def feedback(memory_id: Id,
                 success: Annotated[bool, field(description="true: applying it worked; "
                                                "false: it did not.")]) -> dict[str, Any]:
        from loa_mem.memory.commands.lifecycle import feedback as do_feedback

        return tools.call(lambda s: do_feedback(s, memory_id, success, events.actor()))


def _session_tools(server: Any, tools: _Tools, field: Any) -> None:
    Paths = Annotated[list[dict[str, Any]] | None, field(
        description="Files, as [{path, why}] (cold ones may add suggested_action: "
        "delete_from_working_set, summarize_then_evict, archive or compress; archive needs "
        "postmortem: one line on why the attempt failed).")]

    @_tool(server, name="advise", description="The memory.advise hints of MOOLLM: files to keep "
                 "hot or to evict; the orchestrator decides and records memory_actions.")
    def advise(why: Annotated[str, field(description="Why these hints, in a sentence.")],
               hot: Paths = None, cold: Paths = None, trigger_gc: bool = False
               ) -> dict[str, Any]:
        def work(store: Store) -> Any:
            try:
                from loa_mem.workingset.advise import advise as do_advise
                from loa_mem.workingset.advise import request_from_json
            except ImportError:
                raise ConfigError("advise is not available in this version of loa-mem") from None
            data: dict[str, Any] = {"why": why, "trigger_gc": trigger_gc}
            data.update({k: v for k, v in (("hot", hot), ("cold", cold)) if v})
            return do_advise(store, request_from_json(data), events.actor())
        return tools.call(work)

    @_tool(server, name="context", description="The session-start block: pinned and top "
                 "memories, expiring entries, the hot working set, agents' memories; cut to a "
                 "token budget. Returns `loa-mem context --json`: {root, budget_tokens, tokens, "
                 "sections, cut, text (the markdown block), warnings}.")
    def context(budget: Annotated[int | None, field(description="Token budget (100 or more; "
                                                    "default: context.budget_tokens).")] = None,
                query: Annotated[str, field(description="Rank memories by relevance to this."
                                            )] = "",
                agents: Annotated[list[str] | None, field(description="Add these agents' "
                                                          "sidecar memories.")] = None
                ) -> dict[str, Any]:
        from loa_mem.context import block as ctx

        def work() -> Any:  # no store opened first: a broken config fails open, as in the CLI
            from loa_mem.integrations import context_sources

            _usage(ctx.budget_problem(budget, "budget"))
            problem = ctx.agents_problem(agents or ())
            _usage(f"agents: {problem}" if problem else None)
            options = ctx.Options(budget=budget, query=query, agents=tuple(agents or ()),
                                  output="json", user=None)
            return context_sources.load(tools.root, options)
        return tools.run(work)


def _without_values(server_class: Any, tool_error: type[Exception]) -> Any:
    """The SDK's server, except that an argument the tool does not take is refused (the SDK
    would drop it silently), and arguments of the wrong type are refused by name and problem:
    the SDK's own message quotes the value (pydantic's `input_value=...`), and a value in the
    wrong place may be a secret."""

    class Server(server_class):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], *rest: Any,
                            **options: Any) -> Any:
            tool = self._tool_manager.get_tool(name)
            known = list(tool.parameters.get("properties", {})) if tool is not None else []
            unknown = sorted(set(arguments or {}) - set(known)) if tool is not None else []
            if unknown:
                raise tool_error(f"refused: {name} takes no argument "
                                 f"{', '.join(printable(u, one_line=True) for u in unknown)}; "
                                 f"its arguments are {', '.join(known)}")
            try:
                return await super().call_tool(name, arguments, *rest, **options)
            except tool_error as error:
                cause: Any = error.__cause__
                if type(cause).__name__ != "ValidationError" or not hasattr(cause, "errors"):
                    raise
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                    for e in cause.errors(include_input=False, include_url=False))
                raise tool_error(f"refused: invalid arguments for {name}: {problems}") from None

    return Server


def build(root: str | None = None) -> Any:
    """The server object (also used by tests in-process)."""
    server_class, tool_error = _sdk()
    from pydantic import Field

    server = _named(_without_values(server_class, tool_error))
    tools = _Tools(root, tool_error)
    _memory_tools(server, tools, Field)
    _change_tools(server, tools, Field)
    _session_tools(server, tools, Field)
    from loa_mem.integrations import mcp_oracle

    mcp_oracle.register(server, tools, Field, root, _tool)
    return server


def _named(server_class: Any) -> Any:
    """The server, reporting loa-mem's version as `serverInfo.version` (2.x takes it as an
    argument; 1.x would report the SDK's own)."""
    from loa_mem import __version__

    try:
        server = server_class("loa-mem", instructions=INSTRUCTIONS, version=__version__)
    except TypeError:
        server = server_class("loa-mem", instructions=INSTRUCTIONS)
    lowlevel = getattr(server, "_mcp_server", None)  # 1.x, where it may have been ignored
    if lowlevel is not None:
        lowlevel.version = __version__
    return server


def serve(root: str | None = None) -> None:
    build(root).run()
