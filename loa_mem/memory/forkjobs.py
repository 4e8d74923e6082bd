"""Jobs run in forked processes, their results read back through pipes as they finish.

What a cold build needs of a process pool, without `multiprocessing`, whose pool costs the
building process ~20-40 ms of imports and three threads that take their share of its CPU
while it writes the index. The job numbers are written to one pipe before the children start,
four bytes each: a read that small is atomic, so each job goes to exactly one child, and a
child that finds the pipe empty is done. Each child writes its results to a pipe of its own
(enlarged where the system allows, so that a child seldom waits while the parent writes the
index), each as a length and a pickle. A job that raises sends its exception, which the parent
raises again; a child that dies leaves its pipe closed early, and the parent raises too. Either
way the other children are stopped and reaped.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_PIPE_BYTES = 1 << 20
_JOB = struct.Struct("<I")
_SIZE = struct.Struct("<Q")


class WorkerDied(RuntimeError):
    """A child process ended before it sent the results of the jobs it took."""


def imap_unordered(function: Callable[[Any], Any], jobs: Sequence[Any], processes: int
                   ) -> Iterator[Any]:
    """`function(job)` of each job, in the order they finish, run in `processes` children."""
    tasks_read, tasks_write = os.pipe()
    with os.fdopen(tasks_write, "wb") as tasks:  # closed before the children start
        tasks.write(b"".join(_JOB.pack(n) for n in range(len(jobs))))
    sys.stdout.flush()
    sys.stderr.flush()
    children: dict[int, int] = {}  # the read end of each child's pipe: its process id
    try:
        for _ in range(processes):
            read, write = os.pipe()
            with contextlib.suppress(AttributeError, OSError):
                import fcntl

                fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child, which never returns
                _child(function, jobs, tasks_read, write, [read, *children])
            os.close(write)
            children[read] = pid
        os.close(tasks_read)
        yield from _results(children, len(jobs))
    finally:
        _stop(children)


def _child(function: Callable[[Any], Any], jobs: Sequence[Any], tasks: int, out: int,
           others: list[int]) -> None:  # pragma: no cover - runs in the child
    code = 0
    try:
        for fd in others:
            os.close(fd)
        while data := os.read(tasks, _JOB.size):
            number = _JOB.unpack(data)[0]
            try:
                message = pickle.dumps((True, function(jobs[number])), pickle.HIGHEST_PROTOCOL)
            except Exception as error:  # the parent raises it
                message = _error(error)
            _write(out, _SIZE.pack(len(message)) + message)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _error(error: Exception) -> bytes:
    try:
        return pickle.dumps((False, error), pickle.HIGHEST_PROTOCOL)
    except Exception:  # an exception that does not pickle: its text
        return pickle.dumps((False, RuntimeError(f"{type(error).__name__}: {error}")))


def _write(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the child
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _results(children: dict[int, int], count: int) -> Iterator[Any]:
    buffers = {fd: bytearray() for fd in children}
    while count:
        if not buffers:
            raise WorkerDied("a process reading the grimoire files ended before its work was done")
        ready, _, _ = select.select(list(buffers), [], [])
        for fd in ready:
            chunk = os.read(fd, _PIPE_BYTES)
            if not chunk:
                del buffers[fd]
                continue
            buffer = buffers[fd]
            buffer += chunk
            while len(buffer) >= _SIZE.size and len(buffer) >= _SIZE.size + (
                    size := _SIZE.unpack_from(buffer)[0]):
                ok, value = pickle.loads(buffer[_SIZE.size:_SIZE.size + size])
                del buffer[:_SIZE.size + size]
                if not ok:
                    raise value
                count -= 1
                yield value


def _stop(children: dict[int, int]) -> None:
    """Reap the children; those still running (the parent stopped early) are killed first."""
    for fd, pid in children.items():
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
