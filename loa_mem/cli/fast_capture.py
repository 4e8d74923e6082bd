"""`loa-mem capture tool-result`, dispatched by `entry.main` before typer is imported.

Claude Code runs the hook after every Bash call, and almost every call succeeds with no open
error of its command. That case is answered here with the standard library alone: a hook input
that is not a Bash call, or a success whose command key is not in `open-errors.json`, exits 0
at once. Everything else (a failure, a success with an open error, no `open-errors.json` yet,
input that does not parse, any option) goes to the Typer command with the same stdin.
"""

from __future__ import annotations

import io
import json
import os
import sys

from loa_mem.context import fast as context_fast
from loa_mem.core import cachefile
from loa_mem.memory import layout
from loa_mem.memory.capture import open_errors, rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def _nothing_to_do(raw: bytes) -> bool:
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    result = rules.parse_hook(data)
    if result is None:
        return True
    if result.failed:
        return False
    top = context_fast.find_top(None)
    if top is None:
        return False
    cache = os.path.join(context_fast.git_dir(top), "loa-mem")
    recorded = open_errors.read(cache)
    if recorded is None or not _current(top, cache, recorded[1]):
        return False
    return rules.command_key(result.command) not in recorded[0]


def _current(top: str, cache: str, recorded: open_errors.Signatures) -> bool:
    """Whether the live error files are as they were when `open-errors.json` was written: a
    pull or an edit since may have brought an open error of this very command."""
    try:
        cached_config = cachefile.read(os.path.join(cache, cachefile.CONFIG))
        if not isinstance(cached_config, dict) or cached_config.get(
                "signature") != context_fast.signature(os.path.join(top, context_fast.CONFIG_FILE)):
            return False
        memory = cached_config["config"]["memory_schema"]
        listed = layout.files(top, memory["storage_dir"],
                              memory["categories"]["error"]["storage_file"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    now = {rel: sig for rel in listed
           if (sig := context_fast.signature(os.path.join(top, rel))) is not None}
    return now == recorded


def main(argv: list[str], slow: Callable[[list[str]], int]) -> int:
    if argv not in (["tool-result"], ["tool-result", "--if-enabled"]) or sys.stdin is None:
        return slow(["capture", *argv])
    raw = sys.stdin.buffer.read()
    if _nothing_to_do(raw):
        return 0
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    return slow(["capture", *argv])
