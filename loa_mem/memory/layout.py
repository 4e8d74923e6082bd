"""Which files hold a category's entries: one file, then a file per month.

A category starts as one file, `<dir>/<storage_file>` (`decisions.yaml`, the layout every store
began with). Once that file holds `LIMIT` bytes, new entries go to the category's folder, named
after the file without its extension (`decisions/`), one file per month in which they were
written (`decisions/2026-11.yaml`); a month file past the limit continues in `2026-11.2.yaml`,
`2026-11.3.yaml`, and so on. Nothing is ever moved: the single file keeps its entries and stays
a grimoire file like any other; once the folder holds a file, every new entry goes there.

Why: a write rewrites its file and git hashes and compresses the whole new blob, so a file that
grows with the store makes every `remember` slower. Bounded files keep that cost flat.
The same rule applies in `dir` = storage_dir and in the archive dir, and to the events log
(`events.jsonl`, then `events/2026-11.jsonl`, ...), which every write appends to and commits.

Light on purpose (os only, not even `re`): the session-start hook and recall's fast path list
the files with it.
"""

from __future__ import annotations

import os

LIMIT = 256 * 1024  # bytes a file reaches before new entries go to the next one


def folder(dir_rel: str, storage_file: str) -> str:
    """The category's folder of month files, relative to the store's top."""
    return _join(dir_rel, os.path.splitext(storage_file)[0])


def month_files(top: str, folder_rel: str, extension: str = ".yaml") -> list[str]:
    """The month files in `folder_rel` (relative paths), oldest first."""
    try:
        names = os.listdir(os.path.join(top, folder_rel))
    except OSError:
        return []
    found = []
    for name in names:
        parsed = month_file(name)
        if parsed is not None and parsed[2] == extension:
            found.append((parsed[0], parsed[1], name))
    return [f"{folder_rel}/{name}" for *_, name in sorted(found)]


def month_file(name: str) -> tuple[str, int, str] | None:
    """(month, part, extension) of a month file's name (`2026-11.yaml` -> ("2026-11", 1,
    ".yaml"), `2026-11.3.yaml` -> part 3); None for any other name."""
    stem, dot, extension = name.rpartition(".")
    month, dot_part, part = stem.partition(".")
    if not (dot and extension and _lower_ascii(extension)):
        return None
    if not (len(month) == 7 and month[4] == "-" and _digits(month[:4]) and _digits(month[5:])):
        return None
    if not dot_part:
        return month, 1, f".{extension}"
    if _digits(part) and "1" <= part[0] <= "9":
        return month, int(part), f".{extension}"
    return None


def _digits(text: str) -> bool:
    return text.isdecimal()  # as the \d of a pattern: any decimal digit, not ASCII only


def _lower_ascii(text: str) -> bool:
    return text.isascii() and text.isalpha() and text.islower()


def files(top: str, dir_rel: str, storage_file: str) -> list[str]:
    """Every file of one category in `dir_rel`: the single file (listed whether or not it
    exists), then its month files, oldest first."""
    return [_join(dir_rel, storage_file),
            *month_files(top, folder(dir_rel, storage_file), _extension(storage_file))]


def patterns(dir_rel: str, storage_file: str) -> list[str]:
    """git attribute patterns covering every file `files` can list."""
    return [_join(dir_rel, storage_file),
            f"{folder(dir_rel, storage_file)}/*{_extension(storage_file)}"]


def write_target(top: str, dir_rel: str, storage_file: str, month: str) -> str:
    """The file a new entry written in `month` (YYYY-MM) goes to."""
    single = _join(dir_rel, storage_file)
    sub = folder(dir_rel, storage_file)
    extension = _extension(storage_file)
    months = month_files(top, sub, extension)
    if not months and _size(top, single) < LIMIT:
        return single
    current = [path for path in months if path.rsplit("/", 1)[-1].startswith(month + ".")]
    if not current:
        return f"{sub}/{month}{extension}"
    last = current[-1]
    if _size(top, last) < LIMIT:
        return last
    parsed = month_file(last.rsplit("/", 1)[-1])
    part = parsed[1] + 1 if parsed else 2
    return f"{sub}/{month}.{part}{extension}"


def _extension(storage_file: str) -> str:
    return os.path.splitext(storage_file)[1] or ".yaml"


def _size(top: str, rel: str) -> int:
    try:
        return os.stat(os.path.join(top, rel)).st_size
    except OSError:
        return 0


def _join(dir_rel: str, name: str) -> str:
    return os.path.normpath(os.path.join(dir_rel, name)).replace(os.sep, "/")
