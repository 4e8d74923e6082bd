"""`loa-mem remember`, dispatched by `entry.main` before typer is imported.

Agents remember after most steps, and the Typer application (typer, its vendored click, the
command's option declarations) costs more than the write itself. This module reads the usual
command lines with the standard library and calls the same core function and renderer as the
Typer command, so the entry, the commit, the output and the exit code are the same; a failure
goes through the same `failures.handle`. It handles
`remember CONTENT -c CATEGORY` with any of `--summary --confidence -t/--tag --ttl --session
--agent --phase --file --lines --related --root` (as `--name value`, `--name=value`, or
`-c/-t value`), `--no-commit` and `--json`. Anything else (help, content `-` from stdin, a
value that starts with `-`, an option given twice that takes one value, a confidence that is
not a number, bytes that are not UTF-8, `--`) runs the Typer command, which parses it or
words the usage error.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# option spelling -> the keyword it fills; repeatable ones collect a list
_VALUED = {"-c": "category", "--category": "category", "--summary": "summary",
           "--confidence": "confidence", "-t": "tag", "--tag": "tag", "--ttl": "ttl",
           "--session": "session", "--agent": "agent", "--phase": "phase", "--file": "file",
           "--lines": "lines", "--related": "related", "--root": "root"}
_REPEATED = frozenset({"tag", "related"})
_FLAGS = {"--json": "as_json", "--no-commit": "no_commit"}


def main(argv: list[str], fallback: Callable[[list[str]], int]) -> int:
    """`fallback` runs a command line through the Typer application (passed in by
    `entry.main`, so this module does not import it)."""
    given = quick_parse(argv)
    if given is None:
        return fallback(["remember", *argv])
    from loa_mem.core import git

    git.scrub_process_env()
    try:
        code = _remember(given)
    except BaseException as failure:  # as the Typer group hands it over
        if isinstance(failure, SystemExit):
            raise
        from loa_mem.cli import failures

        if failures.is_closed_pipe(failure):
            failures.quiet_closed_pipe()
            return 0
        code = failures.handle(failure, ["remember", *argv])
    finally:
        _drain_notices()
    return code


class Given:
    """The command line as the Typer command's parameters would hold it."""

    __slots__ = ("confidence", "flags", "lists", "values")

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.lists: dict[str, list[str]] = {key: [] for key in _REPEATED}
        self.flags: set[str] = set()
        self.confidence: float | None = None


def quick_parse(argv: list[str]) -> Given | None:
    """The options as the Typer command reads them, or None when the Typer path must parse."""
    if _undecodable(argv):
        return None
    given = Given()
    positional: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg in _FLAGS:
            given.flags.add(_FLAGS[arg])
        elif arg == "-":
            return None  # content from stdin
        elif not arg.startswith("-"):
            positional.append(arg)
        elif not _take(given, arg, rest):
            return None
    if len(positional) != 1 or "category" not in given.values:
        return None
    if "session" not in given.values and "LOA_MEM_SESSION" in os.environ:
        if not os.environ["LOA_MEM_SESSION"]:
            return None  # how an empty variable counts is the Typer option's to say
        given.values["session"] = os.environ["LOA_MEM_SESSION"]
    given.values["content"] = positional[0]
    return _typed(given)


def _take(given: Given, arg: str, rest: Iterator[str]) -> bool:
    """One valued option (`--name value`, `--name=value`, `-c value`) into `given`."""
    name, equals, value = arg.partition("=")
    if name not in _VALUED or (equals and not name.startswith("--")):
        return False
    if not equals:
        value = next(rest, "-")
    key = _VALUED[name]
    if value.startswith("-") or key in given.values:
        return False
    if key in given.lists:
        given.lists[key].append(value)
    else:
        given.values[key] = value
    return True


def _typed(given: Given) -> Given | None:
    from loa_mem.core import flagvalues

    if "confidence" in given.values:
        try:
            given.confidence = flagvalues.confidence(given.values["confidence"])
        except ValueError:
            return None  # a usage error, worded by the Typer option
    if "ttl" in given.values:
        given.values["ttl"] = flagvalues.ttl(given.values["ttl"])
    return given


def _undecodable(argv: list[str]) -> bool:
    """Bytes that are not UTF-8 (lone surrogates): the Typer path refuses them in its words."""
    texts = [*argv, *(v for k, v in os.environ.items() if k.startswith("LOA_MEM_"))]
    return any("\ud800" <= c <= "\udfff" for text in texts for c in text)


def _remember(given: Given) -> int:
    from loa_mem.cli.memory_views import remembered
    from loa_mem.cli.render import emit
    from loa_mem.core import events
    from loa_mem.memory import rules as model
    from loa_mem.memory.commands.remember import remember
    from loa_mem.memory.store import Store

    text = given.values.get
    request = model.NewEntry(
        content=given.values["content"], category=given.values["category"],
        summary=text("summary"), confidence=given.confidence, tags=tuple(given.lists["tag"]),
        ttl=text("ttl"), session=text("session"), agent=text("agent"), phase=text("phase"),
        file_path=text("file"), line_range=text("lines"), related=tuple(given.lists["related"]))
    store = Store.open(text("root"))
    result = remember(store, request, events.actor(text("agent")), "no_commit" not in given.flags)
    emit(result, "as_json" in given.flags, remembered)
    sys.stdout.flush()
    return 0


def _drain_notices() -> None:
    from loa_mem.cli.render import error as print_error
    from loa_mem.core import notices

    for note in notices.drain():
        print_error(note)
