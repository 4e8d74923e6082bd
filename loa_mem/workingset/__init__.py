"""The working set (MOOLLM): hot and cold hints, gc, summaries and `.meta.yml` sidecars."""
