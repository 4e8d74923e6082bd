"""An index a large cold build left unsettled (see `coldbuild`): how it is marked, and
starting the process that settles it (`settler`), in the background.

Light on purpose: the session-start hook and recall's fast path, which read the index with
their own SQL, start a settler too when they find the mark and nobody at work on it (a settler
that was killed). The settler is started with `os.posix_spawn` in a session of its own, its
standard streams on /dev/null (a caller reading a command's output to its end must not wait
for it), rather than with `subprocess`, whose imports would cost the command more than the
spawn itself.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    Where = str | os.PathLike[str]

UNSETTLED = "unsettled"  # the index's meta key while its settling is still to do
LOCK = "build.lock"  # in the index's folder: held by a build or a settler at work


def start(index: Where) -> None:
    """Start a settler for the index file `index`; nothing when it cannot be started (the
    next command that opens the index starts one)."""
    _reap()
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "loa_mem.memory.settler",
                                              os.path.abspath(index)], os.environ,
                             file_actions=quiet, setsid=True)
    except (OSError, AttributeError, ValueError):  # no posix_spawn, no executable
        return
    _started.append(pid)


_started: list[int] = []


def _reap() -> None:
    """Collect the settlers this process started that have ended (a long-lived process, such
    as the MCP server, would otherwise keep each one as a zombie)."""
    for pid in list(_started):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _started.remove(pid)


def resume(index: Where) -> None:
    """Start a settler for `index` (found unsettled) unless one is at work: holding the
    lock, or started by this process (the build's own, before it takes the lock)."""
    from loa_mem.core import lock

    _reap()
    if not _started and lock.free(os.path.join(os.path.dirname(os.path.abspath(index)), LOCK)):
        start(index)
