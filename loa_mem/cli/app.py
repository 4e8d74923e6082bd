"""The Typer application, its shared options, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from loa_mem import __version__, git
from loa_mem.errors import EXIT_INTERNAL, LoaMemError
from loa_mem.render import error as print_error

Json = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
Root = Annotated[str | None, typer.Option(
    "--root", help="Store root (default: LOA_MEM_ROOT, else the git top level of the cwd).",
    show_default=False)]
NoCommit = Annotated[bool, typer.Option(
    "--no-commit", help="Write the files but do not commit; `loa-mem commit` commits later.")]


def _crash_log(error: BaseException) -> str:
    handle, path = tempfile.mkstemp(prefix="loa-mem-crash-", suffix=".log")
    with os.fdopen(handle, "w", encoding="utf-8") as log:
        log.write(f"loa-mem {__version__}\nargv: {sys.argv!r}\n\n")
        log.write("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    return path


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
        except Exception as failure:  # noqa: BLE001 - the last line of defence
            from click.exceptions import ClickException

            if isinstance(failure, ClickException):
                raise
            path = _crash_log(failure)
            print_error(f"unexpected error ({type(failure).__name__}); details in {path}; "
                        "please report it")
            raise typer.Exit(EXIT_INTERNAL) from None


def new_app(help_text: str) -> typer.Typer:
    return typer.Typer(
        cls=LoaGroup, help=help_text, no_args_is_help=True, add_completion=False,
        pretty_exceptions_enable=False, rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


app = new_app("loa-mem: a git-native memory layer for AI agents and the people who work with them.")


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
    from loa_mem import features

    if not app.registered_commands:
        for add_commands in features.hooks("add_commands"):
            add_commands(app)  # type: ignore[operator]
    return app


def run(argv: list[str]) -> int:
    git.scrub_process_env()
    register()
    try:
        app(args=argv, prog_name="loa-mem", standalone_mode=True)
    except SystemExit as done:
        return int(done.code or 0) if not isinstance(done.code, str) else 1
    return 0
