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

Light on purpose (os and re only): the session-start hook and recall's fast path list the
files with it.
"""

from __future__ import annotations

import os
import re

LIMIT = 256 * 1024  # bytes a file reaches before new entries go to the next one
_MONTH_FILE = re.compile(r"^(\d{4}-\d{2})(?:\.([1-9]\d*))?(\.[a-z]+)$")


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
        match = _MONTH_FILE.match(name)
        if match and match.group(3) == extension:
            found.append((match.group(1), int(match.group(2) or 1), name))
    return [f"{folder_rel}/{name}" for *_, name in sorted(found)]


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
    match = _MONTH_FILE.match(last.rsplit("/", 1)[-1])
    part = int(match.group(2) or 1) + 1 if match else 2
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
