"""The caches in `<git dir>/loa-mem/` that the fast paths read (the config, the session-start
side cache, git's user e-mail), kept in marshal's format.

Why not JSON: the session-start hook reads them before every agent session, and `json` imports
`re` (and with it enum, functools and collections): about 10 ms of the hook's 50 ms budget.
marshal is built into the interpreter. These files are derived, outside git and local to one
machine, so Python's own format is enough: whatever this Python cannot read (another version's
format, a truncated or damaged file, a file from before this format) reads as absent, and the
slow path writes it again. Standard library only: the hook imports this module.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG = "config.cache"  # `.loa.config.yaml` as `config.load` checked it, with its signature
SIDE = "context.cache"  # what the session-start block reads besides the index (`context_sources`)
USER_EMAIL = "user-email"  # git's user.email and what it was read from (`gitfast`)
_MAGIC = "loa-mem cache 1"  # the first item of every cache file; anything else is not one


def read(path: str) -> Any:
    """The value kept at `path`; None when there is none this Python can read."""
    try:
        with open(path, "rb") as handle:
            kept = marshal.load(handle)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if type(kept) is tuple and len(kept) == 2 and kept[0] == _MAGIC:
        return kept[1]
    return None


def write(path: str, value: Any) -> None:
    """Replace the cache at `path` by `value` at once (a reader sees the old file or the new
    one, whole). A cache that cannot be written is left as it was: the next run computes it
    again. `value` holds only plain data (see `plain`), else ValueError."""
    data = marshal.dumps((_MAGIC, value))
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder or ".", exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:  # noqa: SIM105 - contextlib (and what it imports) is not for the hook
            os.unlink(tmp)
        except OSError:
            pass


def plain(value: Any) -> Any:
    """`value` as a JSON round trip gives it back: lists for tuples, string keys, and any other
    object as its `str` (so a date read from a sidecar's YAML is kept as its text). The side
    cache was JSON before it was marshal; its readers compare lists with lists."""
    import json

    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
