"""One flag language: how a value given on the command line is read, the same for every
command. Pure; the Typer options that use these live in `loa_mem.cli.options`.

- a confidence is a fraction (0.85) or a percentage (85%);
- a ttl is a number of days (30 or 30d) or `permanent`.
A value that is well formed but out of range is left for the rules to refuse with their own
message; a value that is not a number at all raises ValueError (a usage mistake).
"""

from __future__ import annotations

import math


def confidence(text: str | float) -> float:
    """0.85 and 85% both give 0.85."""
    if isinstance(text, float):
        return text
    value = text.strip()
    if value.endswith("%"):
        return float(value[:-1]) / 100
    try:
        return float(value)
    except ValueError:
        raise ValueError("a confidence is a fraction like 0.85 or a percentage like 85%"
                         ) from None


def percent(value: float) -> int:
    """A confidence as the whole percentage some stores keep (0.8 -> 80). A number above 1
    was written as a percentage already (the older spelling `--confidence 80`). ValueError
    for a value that is no number at all (nan, or inf from 1e309)."""
    if not math.isfinite(value):
        raise ValueError("a confidence is a fraction like 0.85 or a percentage like 85%")
    return round(value if value > 1 else value * 100)


def ttl(text: str) -> str:
    """`30` and `30d` both give `30d`; `permanent` stays; anything else is returned as given,
    for the rules to refuse."""
    return f"{text}d" if text.isdigit() and text.isascii() else text


def ttl_days(text: str) -> int | None:
    """The days of a ttl (None for permanent); ValueError for anything else."""
    normal = ttl(text)
    if normal == "permanent":
        return None
    if normal.endswith("d") and normal[:-1].isdigit() and normal.isascii():
        return int(normal[:-1])
    raise ValueError("a ttl is a number of days (30 or 30d) or permanent")
