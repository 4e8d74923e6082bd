"""Auto-capture: deterministic ways memories come in without anyone typing `remember`.

Three sources, each switched by its `memory_schema.auto_capture` key: the Decision Protocol file
(`decisions`), compound-learning output (`learnings`) and the agent's failed commands, reported
by Claude Code's PostToolUse / PostToolUseFailure hooks (`tool-result`). No model runs on the
write path: every rule is in `rules`. What was captured is recorded twice, so a re-run adds
nothing: on the entry (`capture.ref` / `capture.signature`) and as `refs` of a `capture` event.
"""
