"""Asking before what cannot be undone: on a terminal a yes/no question, `--yes` answers it in
advance, and without a terminal to ask on (a script, a hook) nothing happens without `--yes`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from loa_mem.core.errors import Refused

Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking (needed when "
                                   "there is no terminal to ask on).")]


def ask(what: str, yes: bool) -> None:
    """Go on only if the user agreed to `what` (or passed --yes)."""
    if yes:
        return
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise Refused(f"{what} cannot be undone and there is no terminal to ask on",
                      "pass --yes to go ahead; nothing was deleted")
    if not typer.confirm(f"{what}; this cannot be undone. Go ahead?", default=False, err=True):
        raise Refused("not confirmed", "nothing was deleted")
