"""The console entry point. Kept free of heavy imports: the fast paths (the session-start
context hook, recall) are dispatched from here before typer is imported."""

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
    if args[:1] == ["context"]:
        from loa_mem.context.fast import main as context_main

        sys.exit(context_main(args[1:], _slow_context, _run))
    if args[:2] == ["capture", "tool-result"]:
        from loa_mem.cli.fast_capture import main as capture_main

        sys.exit(capture_main(args[1:], _run))
    if args[:1] == ["recall"]:
        from loa_mem.cli.fast_recall import main as recall_main

        sys.exit(recall_main(args[1:], _run))
    sys.exit(_run(args))


def _run(args: list[str]) -> int:
    from loa_mem.cli.app import run

    return run(args)


def _slow_context(root: str | None, options: Any) -> Any:
    """The session-start block when a cache is stale: through the `Store`, so imported only then."""
    from loa_mem.integrations.context_sources import slow_block

    return slow_block(root, options)
