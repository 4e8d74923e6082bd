"""People: one person's private preferences and session memory, outside every project."""
