"""The Typer application, its shared options, and the one place errors become exit codes."""

from __future__ import annotations

import os
import re
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from loa_mem import __version__
from loa_mem.cli.render import error as print_error
from loa_mem.core import git, notices
from loa_mem.core.errors import EXIT_INTERNAL, EXIT_REFUSED, user_error

Json = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Root = Annotated[str | None, typer.Option(
    "--root", help="Store root (default: LOA_MEM_ROOT, else the git top level of the cwd).",
    show_default=False)]
NoCommit = Annotated[bool, typer.Option(
    "--no-commit", help="Write the files but do not commit; `loa-mem commit` commits later.")]


def _crash_log(error: BaseException, argv: list[str]) -> str:
    """A bug report: where it failed, never what it was given. Arguments, messages and local
    values can hold the text a user was storing (a secret the screening was about to refuse),
    so the log names the command and its option names, the error's type and the code path."""
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
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as failure:
            if _is_usage_error(failure):
                _without_values(failure)
                raise
            known = user_error(failure)
            notices.drain()  # a note about a write that did not happen would mislead
            if known is None:
                raise _internal(failure, ctx.meta.get(_ARGV) or sys.argv[1:]) from None
            print_error(f"{known.kind}: {known.one_line()}")
            raise typer.Exit(known.exit_code) from None
        finally:
            for note in notices.drain():
                print_error(note)


_ARGV = "loa_mem.argv"  # the command line as given, in the context tree's shared meta


def _internal(failure: BaseException, argv: list[str]) -> typer.Exit:
    path = _crash_log(failure, argv)
    print_error(f"unexpected error ({type(failure).__name__}); details in {path}; "
                "please report it")
    return typer.Exit(EXIT_INTERNAL)


def undecodable_input(args: list[str]) -> str:
    """What on the command line or in loa-mem's environment variables is not UTF-8 text
    (Python hands undecodable bytes over as lone surrogates), or ''."""
    for position, arg in enumerate(args):
        name, equals, value = arg.partition("=") if arg.startswith("-") else ("", "", arg)
        bad = _first_surrogate(value if equals else arg)
        if bad < 0:
            continue
        previous = args[position - 1] if position else ""
        if equals:
            what = f"the value of {name}"
        elif previous.startswith("-") and "=" not in previous and previous != "-":
            what = f"argument {position + 1} (after {previous})"
        else:
            what = f"argument {position + 1}"
        char = (value if equals else arg)[bad]
        return f"{what} is not valid UTF-8 (byte {_byte(char)} at character {bad + 1})"
    for name, value in sorted(os.environ.items()):
        bad = _first_surrogate(value)
        if name.startswith("LOA_MEM_") and bad >= 0:
            return (f"environment variable {name} is not valid UTF-8 (byte {_byte(value[bad])} "
                    f"at character {bad + 1})")
    return ""


def _first_surrogate(text: str) -> int:
    return next((i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff"), -1)


def _byte(char: str) -> str:
    code = ord(char)
    return f"0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"


def _refuse_opposite_flags(command: Any) -> None:
    """`--success --failure` is a usage error (exit 2), not "the last one wins": for every
    on/off flag pair of `command` and of its subcommands."""
    for sub in (getattr(command, "commands", None) or {}).values():
        _refuse_opposite_flags(sub)
    pairs = [p for p in command.params if getattr(p, "secondary_opts", None)
             and getattr(p, "is_flag", False)]
    if not pairs:
        return
    parse = command.parse_args

    def parse_args(ctx: Any, args: list[str]) -> Any:
        given = args[:args.index("--")] if "--" in args else args
        for param in pairs:
            on = [a for a in given if a in param.opts]
            off = [a for a in given if a in param.secondary_opts]
            if on and off:
                ctx.fail(f"{on[0]} and {off[0]} contradict each other; pass one of them")
        return parse(ctx, args)

    command.parse_args = parse_args


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

    def list_commands(self, ctx: Any) -> list[str]:
        from loa_mem.cli import catalog

        return list(dict.fromkeys([*catalog.names(), *self.commands]))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[_ARGV] = list(args)
        problem = undecodable_input(args)
        if problem:
            print_error(f"refused: {problem}; loa-mem stores text as UTF-8: convert it (for "
                        "example with iconv) or leave the byte out; nothing was written")
            ctx.exit(EXIT_REFUSED)
        result: list[str] = super().parse_args(ctx, args)
        return result

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            from loa_mem.cli import catalog

            command = catalog.build(cmd_name)
            if command is None:
                return None
            _refuse_opposite_flags(command)
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
