"""The one token estimator, shared by every budget (the session-start context, gc's
`tokens_freed`, budget pressure).

    tokens(text) = ceil(characters / 4)

Why this one: it needs no tokenizer download and no import beyond the standard library (it runs
inside the session-start hook), it is deterministic, and ~4 characters per token is the usual
rule of thumb for English prose and code with the tokenizers agents use. It is an estimate,
so budgets built on it keep a margin; the number is never a bill.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate(text: str) -> int:
    """Estimated tokens of `text`: ceil(len(text) / 4); 0 for an empty text."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_bytes(size: int) -> int:
    """Estimated tokens of a file of `size` bytes, without reading it (UTF-8 text is mostly
    one byte per character, so bytes stand in for characters)."""
    return -(-max(0, size) // CHARS_PER_TOKEN)
