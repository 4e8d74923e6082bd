"""The one place a failure becomes what the user sees: `loa-mem: KIND: what; what to do` on
stderr, one JSON error object on stdout as well when the command was asked for `--json`, and
the exit code of the command contract (1 for a user's problem, 2 for a usage mistake, 3 for a
bug, 130 for Ctrl-C). A closed pipe (`loa-mem recall | head -1`) is not a failure at all.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from loa_mem.cli.render import error as print_error
from loa_mem.cli.render import error_json
from loa_mem.core import notices
from loa_mem.core.errors import EXIT_INTERNAL, EXIT_USAGE, LoaMemError, user_error

EXIT_INTERRUPTED = 130


def wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for JSON output (`--json`, `-f json`, `--format json`)."""
    given = argv[:argv.index("--")] if "--" in argv else argv
    for position, arg in enumerate(given):
        following = given[position + 1] if position + 1 < len(given) else ""
        if arg in {"--json", "--format=json"} or (
                arg in {"-f", "--format"} and following == "json"):
            return True
    return False


def report(known: LoaMemError, argv: list[str]) -> int:
    """Tell the user about `known` (stderr line, JSON object under --json); its exit code."""
    print_error(f"{known.kind}: {known.one_line()}")
    if wants_json(argv):
        error_json(known)
    return known.exit_code


def usage(failure: Any, argv: list[str]) -> int:
    """A click usage error or bad parameter, in loa-mem's one style (exit 2)."""
    _without_values(failure)
    context = getattr(failure, "ctx", None)
    words = str(context.command_path).split()[1:] if context is not None else []
    where = " ".join(["loa-mem", *words])  # the program's name however it was started
    message = str(failure.format_message()).replace("\n", " ").rstrip(".")
    message = message[0].lower() + message[1:] if message else "the command line is not valid"
    known = LoaMemError(message, f"see '{where} --help'")
    known.kind, known.exit_code = "usage", EXIT_USAGE
    return report(known, argv)


def handle(failure: BaseException, argv: list[str]) -> int:
    """The exit code for `failure`, after telling the user. Everything not a loa-mem, machine
    or usage error is a bug: one line that points at a crash log."""
    if isinstance(failure, KeyboardInterrupt):
        notices.drain()
        print_error("interrupted")
        return EXIT_INTERRUPTED
    if is_usage_error(failure):
        return usage(failure, argv)
    known = user_error(failure)
    notices.drain()  # a note about a write that did not happen would mislead
    if known is not None:
        return report(known, argv)
    from loa_mem.cli.crashlog import write as crash_log

    path = crash_log(failure, argv)
    print_error(f"unexpected error ({type(failure).__name__}); details in {path}; "
                "please report it")
    if wants_json(argv):
        bug = LoaMemError(f"unexpected error ({type(failure).__name__})",
                          f"details in {path}; please report it")
        bug.kind = "internal"
        error_json(bug)
    return EXIT_INTERNAL


def is_usage_error(failure: BaseException) -> bool:
    """Click's own errors (usage, bad parameter). Typer vendors click, so the class is matched
    by name rather than imported."""
    return any(cls.__name__ == "ClickException" for cls in type(failure).__mro__)


def is_closed_pipe(failure: BaseException) -> bool:
    return isinstance(failure, BrokenPipeError) or (
        isinstance(failure, OSError) and failure.errno == 32)


def quiet_closed_pipe() -> None:
    """The reader of stdout went away (`| head -1`): whatever is still buffered can never be
    written, so stdout points at /dev/null and Python's exit flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (a test runner's buffer)
        pass


_QUOTED_VALUE = re.compile(r"""^(?:'[^']*'|"[^"]*")""")


def _without_values(failure: Any) -> None:
    """Click quotes the value it could not use ("'x' is not a valid float") and lists extra
    arguments; a value in the wrong place may be a secret, so the message names the option and
    the problem only."""
    message = str(getattr(failure, "message", ""))
    if message.startswith("Got unexpected extra argument"):
        failure.message = ("got unexpected extra arguments; quote a text that has spaces, or "
                           "pass - and give it on stdin")
    elif type(failure).__name__ == "BadParameter" or hasattr(failure, "param_hint"):
        failure.message = _QUOTED_VALUE.sub("the value", message)
