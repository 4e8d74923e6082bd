"""Reading text that a user wrote or committed: files and stdin, as UTF-8, with an error that
says where the text stops being text.

Every file loa-mem reads can be anything a commit can hold: binary bytes, another encoding, a
directory in a file's place. Each of those is an `InvalidFile` naming the file, the line and
the column (or a refusal for stdin), never a crash.
"""

from __future__ import annotations

import errno
import sys

from loa_mem.core.errors import InvalidFile, Refused

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib is not imported at run time: the catch-up paths' import budget
    from pathlib import Path


def decode(data: bytes, where: str) -> str:
    """`data` as UTF-8 text; an undecodable byte is an InvalidFile at its line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[:error.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise InvalidFile(where, line, column,
                          f"not UTF-8 text (byte 0x{data[error.start]:02x})",
                          f"save it as UTF-8, or restore it with `git checkout -- {where}`; "
                          "nothing was written") from None


def read_text(path: Path, where: str | None = None) -> str:
    """The UTF-8 text of `path` (`where`: how messages name it). A missing file raises
    FileNotFoundError as before; a directory or an unreadable file is an InvalidFile."""
    name = where or str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise InvalidFile(name, 1, 1, "is a directory, where a file belongs",
                          "move the directory away (loa-mem recreates the file), then retry"
                          ) from None
    except OSError as error:
        if error.errno == errno.ENOTDIR:
            raise InvalidFile(name, 1, 1, "a file is where one of its folders belongs",
                              "move that file away, then retry") from None
        raise
    return decode(data, name)


def read_stdin(what: str = "stdin") -> str:
    """All of stdin as UTF-8 text; anything else is refused (nothing is written)."""
    stream = sys.stdin
    if stream is None:
        return ""
    raw = getattr(stream, "buffer", None)
    if raw is None:
        text: str = stream.read()
        if any("\ud800" <= c <= "\udfff" for c in text):
            raise Refused(f"{what} is not valid UTF-8", "pipe UTF-8 text; nothing was written")
        return text
    data: bytes = raw.read()
    try:
        text = data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
    except UnicodeDecodeError as error:
        raise Refused(f"{what} is not valid UTF-8 (byte 0x{data[error.start]:02x} at byte "
                      f"{error.start + 1})", "pipe UTF-8 text (convert it with iconv); nothing "
                      "was written") from None
    # as text-mode stdin reads it: any line ending becomes "\n"
    return text.replace("\r\n", "\n").replace("\r", "\n")


def own_ending(path: Path, text: str) -> str:
    """`text` with the line ending `path` has on disk (CRLF when its first line ends so): a
    file loa-mem merges, repairs or rewrites whole keeps the line endings it was committed or
    checked out with."""
    try:
        with path.open("rb") as handle:
            first = handle.readline()
    except OSError:
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n") if first.endswith(b"\r\n") else text
