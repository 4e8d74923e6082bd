"""Loa memory entries: their rules, the store and its index, recall, validate, import and export,
merges and repair. Built on the core only."""
