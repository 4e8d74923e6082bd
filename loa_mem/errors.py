"""The one exception family that reaches users, and the exit codes of the command contract.

Core code raises these; only `loa_mem.cli.app.run` turns them into a message and an exit code.
A message says what went wrong and where; `hint` says what to do about it.
"""

from __future__ import annotations

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


class ConfigError(LoaMemError):
    kind = "config"


class NotARepo(LoaMemError):
    kind = "not-a-repo"


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


class UsageError(LoaMemError):
    exit_code = EXIT_USAGE
    kind = "usage"
