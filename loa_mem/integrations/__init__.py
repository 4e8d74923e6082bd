"""loa-mem inside other tools: agent and git hooks, the MCP server, the merge driver, the
session-start context's slow path."""
