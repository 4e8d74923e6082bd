"""Options that mean the same on every command that takes them (see `core.flagvalues`)."""

from __future__ import annotations

from typing import Any

import typer

from loa_mem.core import flagvalues

CONFIDENCE_HELP = "0..1 or a percentage like 85%"
TTL_HELP = "Days (30 or 30d) or permanent"


def _confidence(value: str) -> float:
    try:
        return flagvalues.confidence(value)
    except ValueError as bad:  # names the rule, never the value (it may be a pasted secret)
        raise typer.BadParameter(str(bad)) from None


def confidence_option(more: str = "") -> Any:
    return typer.Option("--confidence", parser=_confidence,
                        help=f"{CONFIDENCE_HELP}{'; ' + more if more else ''}.")


def ttl_option(more: str = "") -> Any:
    return typer.Option("--ttl", parser=flagvalues.ttl,
                        help=f"{TTL_HELP}{' ' + more if more else ''}.")
