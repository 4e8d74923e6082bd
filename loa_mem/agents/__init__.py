"""Agent sidecars and multi-agent sessions (MDAN)."""
