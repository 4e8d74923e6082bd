"""The bug report written when loa-mem fails in a way no user could fix: where it failed,
never what it was given."""

from __future__ import annotations

import os
from typing import Any

from loa_mem import __version__


def write(error: BaseException, argv: list[str]) -> str:
    """A crash log's path. Arguments, messages and local values can hold the text a user was
    storing (a secret the screening was about to refuse), so the log names the command and its
    option names, the error's type and the code path."""
    import tempfile
    import traceback

    handle, path = tempfile.mkstemp(prefix="loa-mem-crash-", suffix=".log")
    frames = traceback.extract_tb(error.__traceback__)
    with os.fdopen(handle, "w", encoding="utf-8") as log:
        log.write(f"loa-mem {__version__}\ncommand: {' '.join(redacted_argv(argv))}\n"
                  f"error: {type(error).__module__}.{type(error).__qualname__} (message "
                  "withheld: it may quote what was being stored)\n\n")
        log.write("".join(traceback.format_list(frames)))
    return path


def redacted_argv(argv: list[str]) -> list[str]:
    """The command line with every value replaced by `…`: only the command's own words (a
    command and a subcommand loa-mem has) and option names stay."""
    from loa_mem.cli import catalog

    shown: list[str] = []
    known: Any = set(catalog.names())
    for arg in argv:
        if arg.startswith("-") and arg != "-":
            shown.append(arg.split("=", 1)[0] + ("=…" if "=" in arg else ""))
            continue
        if known and arg in known:
            shown.append(arg)
            command = catalog.build(arg) if len(shown) == 1 else None
            known = set(getattr(command, "commands", None) or ())
            continue
        known = set()
        shown.append("…")
    return shown
