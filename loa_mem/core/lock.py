"""One writer at a time: an advisory lock that covers read, modify, write and commit.

stdlib `fcntl.flock` rather than the filelock package: filelock's import costs ~120 ms here,
a third of the `remember` budget (decision entry "Writers lock with flock"). The lock file
records who holds it, so a writer that gives up can say who is in the way. The kernel releases
the lock when a holder dies, so a killed process never leaves the store locked.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loa_mem.core import clock
from loa_mem.core.errors import LockBusy, WriteFailed

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def _host() -> str:
    """This machine's name (what `socket.gethostname` answers, without importing `socket`,
    which costs a writer ~7 ms)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket  # pragma: no cover - Windows

    return socket.gethostname()  # pragma: no cover


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another loa-mem process"
    return (f"pid {info.get('pid')} on {info.get('host')} ({info.get('op')}, "
            f"since {info.get('since')})")


@contextmanager
def hold(path: Path, op: str, timeout: float) -> Iterator[None]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise WriteFailed(f"cannot write to this store: {path}: {error.strerror or error}",
                          "writing needs write access to the checkout and its .git folder "
                          "(reading works as it is); nothing was written") from None
    try:
        if fcntl is not None:
            deadline = time.monotonic() + timeout
            delay = 0.005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockBusy(
                            f"the store is locked by {_holder(path)}; waited {timeout:g} s",
                            "retry when it finishes, or raise LOA_MEM_LOCK_TIMEOUT",
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
        info = {"pid": os.getpid(), "host": _host(), "op": op,
                "since": clock.iso(clock.now())}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError as error:
            raise WriteFailed(f"cannot write to this store: {path}: {error.strerror or error}",
                              "free disk space or fix the permissions, then retry; nothing was "
                              "written") from None
        yield
    finally:
        if fcntl is not None:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def free(path: str | Path) -> bool:
    """Whether nobody holds the lock at `path` now (told without waiting)."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)
