"""The Typer application, its shared options, and the one place errors become exit codes."""

from __future__ import annotations

import errno
import os
import re
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from loa_mem import __version__, git
from loa_mem.errors import EXIT_INTERNAL, EXIT_REFUSED, LoaMemError
from loa_mem.render import error as print_error

Json = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Root = Annotated[str | None, typer.Option(
    "--root", help="Store root (default: LOA_MEM_ROOT, else the git top level of the cwd).",
    show_default=False)]
NoCommit = Annotated[bool, typer.Option(
    "--no-commit", help="Write the files but do not commit; `loa-mem commit` commits later.")]


def _argv_shape(argv: list[str]) -> list[str]:
    """The command line with every value replaced by its length: option names and the command
    stay, so a report says what was run without what was typed."""
    shape = []
    for position, arg in enumerate(argv):
        if arg.startswith("-") and not arg.startswith("---"):
            name, equals, value = arg.partition("=")
            shape.append(f"{name}=<{len(value)} chars>" if equals else name)
        else:
            shape.append(arg if position == 0 and arg.isidentifier() else f"<{len(arg)} chars>")
    return shape


def _withheld(text: str, argv: list[str]) -> str:
    """`text` without any value the user passed and without anything the screen finds."""
    from loa_mem.sensitive import scan

    for arg in sorted({a.partition("=")[2] or a for a in argv}, key=len, reverse=True):
        if len(arg) >= 3:
            text = text.replace(arg, "<a value passed>")
    found = scan(text)
    return f"{text[:found[0].start]}<the rest is withheld>" if found else text


def _crash_log(error: BaseException, argv: list[str]) -> str:
    import tempfile
    import traceback

    handle, path = tempfile.mkstemp(prefix="loa-mem-crash-", suffix=".log")
    with os.fdopen(handle, "w", encoding="utf-8") as log:
        log.write(f"loa-mem {__version__}\nargv: {_argv_shape(argv)!r}\n\n")
        log.write("".join(traceback.format_tb(error.__traceback__)))
        log.write(_withheld(f"{type(error).__name__}: {error}", argv) + "\n")
    return path


def _is_usage_error(failure: BaseException) -> bool:
    """Click's own errors (usage, bad parameter) keep click's handling and exit code 2.
    Typer vendors click, so the class is matched by name rather than imported."""
    return any(cls.__name__ == "ClickException" for cls in type(failure).__mro__)


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


class LoaGroup(TyperGroup):
    """Maps loa-mem errors to one line on stderr and the contract's exit codes."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except LoaMemError as failure:
            print_error(f"{failure.kind}: {failure.one_line()}")
            raise typer.Exit(failure.exit_code) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except OSError as failure:
            if failure.errno not in _THE_MACHINES_FAULT:
                raise _internal(failure, ctx.meta.get(_ARGV, sys.argv[1:])) from None
            print_error(f"io: {failure.filename or 'a file'}: {failure.strerror}; free disk "
                        "space or fix the permissions, then retry")
            raise typer.Exit(EXIT_REFUSED) from None
        except Exception as failure:
            if _is_usage_error(failure):
                _without_values(failure)
                raise
            raise _internal(failure, ctx.meta.get(_ARGV, sys.argv[1:])) from None


# Errors of the disk or the permissions, not of loa-mem: the user can fix them.
_THE_MACHINES_FAULT = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


_ARGV = "loa_mem.argv"  # the command line as given, kept in the context tree's shared meta


def _internal(failure: BaseException, argv: list[str]) -> typer.Exit:
    path = _crash_log(failure, argv)
    print_error(f"unexpected error ({type(failure).__name__}); details in {path}; "
                "please report it")
    return typer.Exit(EXIT_INTERNAL)


def new_app(help_text: str) -> typer.Typer:
    return typer.Typer(
        cls=LoaGroup, help=help_text, no_args_is_help=True, add_completion=False,
        pretty_exceptions_enable=False, rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


class RootGroup(LoaGroup):
    """The top-level group builds only the command that runs.

    Typer inspects every command's signature to build it (~4 ms each); with fifty commands that
    alone would exceed the `--help` budget. The catalog (`catalog.json`, generated by
    `python -m loa_mem.cli.catalog` and checked by a test) says which module holds each command
    and its one-line help, so `--help` and a single command build nothing else.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[_ARGV] = list(args)
        return list(super().parse_args(ctx, args))

    def list_commands(self, ctx: Any) -> list[str]:
        from loa_mem.cli import catalog

        return list(dict.fromkeys([*catalog.names(), *self.commands]))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            from loa_mem.cli import catalog

            command = catalog.build(cmd_name)
            if command is None:
                return None
            self.commands[cmd_name] = command
        return self.commands[cmd_name]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        from loa_mem.cli import catalog

        rows = [(name, catalog.short_help(name)) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    cls=RootGroup, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
    help="loa-mem: a git-native memory layer for AI agents and the people who work with them.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loa-mem {__version__}")
        raise typer.Exit()


@app.callback()
def _root_options(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """loa-mem keeps memories as YAML entries in git; every change is one commit."""


def register() -> typer.Typer:
    """The application (commands are loaded on demand by `RootGroup`)."""
    return app


def run(argv: list[str]) -> int:
    git.scrub_process_env()
    register()
    try:
        app(args=argv, prog_name="loa-mem", standalone_mode=True)
    except SystemExit as done:
        return int(done.code or 0) if not isinstance(done.code, str) else 1
    return 0
