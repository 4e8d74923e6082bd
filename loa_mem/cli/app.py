"""The Typer application, its shared options, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from loa_mem import __version__
from loa_mem.cli import failures, helpstyle
from loa_mem.cli.render import error as print_error
from loa_mem.core import git, notices
from loa_mem.core.errors import EXIT_REFUSED

Json = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Root = Annotated[str | None, typer.Option(
    "--root", help="Store root (default: LOA_MEM_ROOT, else the git top level of the cwd).",
    show_default=False)]
NoCommit = Annotated[bool, typer.Option(
    "--no-commit", help="Write the files but do not commit; `loa-mem commit` commits later.")]


class LoaGroup(TyperGroup):
    """Hands every failure to `failures.handle` (one line, a JSON object under --json, the
    contract's exit code); bare, a group prints its help and exits 0."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())
            ctx.exit(0)
        result: list[str] = super().parse_args(ctx, args)
        return result

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except BaseException as failure:
            if isinstance(failure, SystemExit):
                raise
            if failures.is_closed_pipe(failure):
                failures.quiet_closed_pipe()
                raise typer.Exit(0) from None
            code = failures.handle(failure, _argv(ctx))
            raise typer.Exit(code) from None
        finally:
            for note in notices.drain():
                print_error(note)


_ARGV = "loa_mem.argv"  # the command line as given, in the context tree's shared meta


def _argv(ctx: Any) -> list[str]:
    return list(ctx.meta.get(_ARGV) or sys.argv[1:])


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
        try:
            result: list[str] = super().parse_args(ctx, args)
        except Exception as failure:
            if not failures.is_usage_error(failure):
                raise
            ctx.exit(failures.usage(failure, list(args)))
        return result

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            from loa_mem.cli import catalog

            command = catalog.build(cmd_name)
            if command is None:
                return None
            _refuse_opposite_flags(command)
            helpstyle.tidy(command)
            self.commands[cmd_name] = command
        return self.commands[cmd_name]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        from loa_mem.cli import catalog

        rows = [(name, catalog.short_help(name)) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    cls=RootGroup, no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
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
        code = 0
    except SystemExit as done:
        code = int(done.code or 0) if not isinstance(done.code, str) else 1
    try:
        sys.stdout.flush()
    except OSError as failure:
        if not failures.is_closed_pipe(failure):
            raise
        failures.quiet_closed_pipe()
    return code
