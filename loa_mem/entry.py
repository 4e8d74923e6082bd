"""The console entry point. Kept free of heavy imports: the fast paths (the session-start
context hook, recall, remember) are dispatched from here before typer is imported."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook's import budget
    from typing import Any


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        # answered before any import: the merge driver's wrapper asks it to learn whether
        # loa-mem can run at all, once per merged file
        from loa_mem import __version__

        print(f"loa-mem {__version__}")
        sys.exit(0)
    try:
        code = _dispatch(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (`loa-mem recall | head -1`): nothing left to say, and Python's
        # own flush at exit must not complain either
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


def _dispatch(args: list[str]) -> int:
    if args[:1] == ["context"]:
        from loa_mem.context.fast import main as context_main

        return context_main(args[1:], _slow_context, _run)
    if args[:2] == ["capture", "tool-result"]:
        from loa_mem.cli.fast_capture import main as capture_main

        return capture_main(args[1:], _run)
    if args[:1] == ["recall"]:
        from loa_mem.cli.fast_recall import main as recall_main

        return recall_main(args[1:], _run)
    if args[:1] == ["remember"]:
        from loa_mem.cli.fast_remember import main as remember_main

        return remember_main(args[1:], _run)
    return _run(args)


def _run(args: list[str]) -> int:
    from loa_mem.cli.app import run

    return run(args)


def _slow_context(root: str | None, options: Any) -> Any:
    """The session-start block when a cache is stale: through the `Store`, so imported only then."""
    from loa_mem.integrations import context_pulled

    pulled = context_pulled.block(root, options)  # light: no SQLite, no Store
    if pulled is not None:
        return pulled
    from loa_mem.integrations.context_sources import after_pulled

    return after_pulled(root, options)
