"""The session-start context block and its fast path. Standard library and light core modules only:
the hook runs this before every agent session."""
