"""The one exception family that reaches users, and the exit codes of the command contract.

Core code raises these; only `loa_mem.cli.failures` turns them into a message and an exit code.
A message says what went wrong and where; `hint` says what to do about it.
"""

from __future__ import annotations

import errno

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class LoaMemError(Exception):
    """A problem the user can fix: refused input, bad files, missing entries, a busy lock."""

    exit_code = EXIT_REFUSED
    kind = "error"

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


class Refused(LoaMemError):
    """Input that breaks an entry rule (category, floor, tags, secrets, size)."""

    kind = "refused"


class NotFound(LoaMemError):
    kind = "not-found"


class InvalidFile(LoaMemError):
    """A grimoire, config or sidecar file that does not parse or does not validate."""

    kind = "invalid-file"

    def __init__(self, path: str, line: int, column: int, message: str, hint: str = "") -> None:
        super().__init__(f"{path}:{line}:{column}: {message}",
                         hint or "fix the file; nothing was written")
        self.path = path
        self.line = line
        self.column = column


def invalid_values(error: InvalidFile) -> tuple[str, int, int, str, str]:
    """`error` as plain values, to travel back from a worker process (an exception whose
    constructor takes its own arguments does not pickle as itself)."""
    return (error.path, error.line, error.column, error.message.split(": ", 1)[-1], error.hint)


def invalid_from(value: object) -> InvalidFile | None:
    """The error a worker sent back as `invalid_values`: a plain tuple, where rows come as other
    types (named tuples included); None for any other result."""
    if type(value) is not tuple:
        return None
    path, line, column, message, hint = value
    return InvalidFile(path, line, column, message, hint)


class ConfigError(LoaMemError):
    kind = "config"


class NotARepo(LoaMemError):
    kind = "not-a-repo"


class NoStore(LoaMemError):
    """A git repository where `loa-mem init` never ran: nothing is written into it."""

    kind = "no-store"


class LockBusy(LoaMemError):
    kind = "lock-busy"


class GitFailed(LoaMemError):
    kind = "git"


class WriteFailed(LoaMemError):
    """The disk or the folder refused a write (full, read-only, no permission)."""

    kind = "write-failed"


class MachineFault(LoaMemError):
    """The operating system refused (a full disk, a read-only folder, a directory where a file
    belongs): outside loa-mem, for the user to fix."""

    kind = "io"


class NothingToDo(LoaMemError):
    kind = "nothing-to-do"


class SwitchedOff(LoaMemError):
    """A feature the project's `.loa.config.yaml` turns off (the message names the key)."""

    kind = "switched-off"


class UsageError(LoaMemError):
    exit_code = EXIT_USAGE
    kind = "usage"


def user_error(failure: BaseException) -> LoaMemError | None:
    """The user-facing form of an error, or None for a bug.

    Besides loa-mem's own errors: the machine's refusals (a full disk, a read-only or
    protected folder, a directory where a file belongs), text that is not Unicode, and the
    index database refusing to write. All of them are for the user to fix, none is a crash."""
    import sqlite3

    if isinstance(failure, LoaMemError):
        return failure
    if isinstance(failure, OSError) and failure.errno in _MACHINE_FAULTS:
        where = failure.filename or "a file"
        return MachineFault(f"{where}: {failure.strerror}", _MACHINE_FAULTS[failure.errno])
    if isinstance(failure, UnicodeError):
        return Refused("some text is not valid UTF-8 / Unicode (a lone surrogate or an "
                       "undecodable byte)", "pass and store text as UTF-8; nothing was written")
    if isinstance(failure, sqlite3.OperationalError):
        return MachineFault(f"the index in .git/loa-mem cannot be written ({failure})",
                            "free disk space or fix the permissions of .git/loa-mem, then "
                            "retry (the index is derived: deleting it is safe); nothing was "
                            "written")
    return None


_FIX_PERMISSIONS = "free disk space or fix the permissions, then retry"
# Errors of the disk, the permissions or the layout of files, not of loa-mem: the user can fix
# them. Each with what to do.
_MACHINE_FAULTS = {
    errno.ENOSPC: _FIX_PERMISSIONS, errno.EDQUOT: _FIX_PERMISSIONS,
    errno.EFBIG: _FIX_PERMISSIONS, errno.EROFS: _FIX_PERMISSIONS,
    errno.EACCES: _FIX_PERMISSIONS, errno.EPERM: _FIX_PERMISSIONS,
    errno.EISDIR: "a directory is where a file belongs; move it away, then retry",
    errno.ENOTDIR: "a file is where a directory belongs; move it away, then retry",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.ELOOP: "a symbolic link loops; fix or remove it",
}


def error_object(error: LoaMemError) -> dict[str, dict[str, str]]:
    """The JSON form of an error, printed on stdout under --json: one object, always the
    same three keys."""
    return {"error": {"kind": error.kind, "message": error.message, "hint": error.hint}}
