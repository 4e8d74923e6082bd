"""The parsing side of a cold build (`coldbuild`): grimoire files read in parts, in parallel.

A large file is cut into parts of about `PART_BYTES` at the start of a top-level item (a line
that starts with "- ", as the fast reader cuts), so that both cores stay busy to the end and the
building process gets its first rows early; each part is read and turned into rows where it was
parsed (`indexrows.file_rows`), and only plain values travel back. A part that cannot be read
apart from the rest of its file (an odd item, bytes that are not UTF-8) says so, and its file is
then read whole, as every smaller file is, with the fast reader's full-parser fallback and its
errors. The job that reads a file's first bytes also records the file's text in blocks
(`reread.built_record`, for the first catch-up after the build), where the building process
would otherwise do it while the others wait.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loa_mem.core import textfile, yamlfast
from loa_mem.core.errors import InvalidFile, invalid_values
from loa_mem.memory.fastrows import Preparer

PART_BYTES = 256 * 1024
_PARALLEL_BYTES = 1_000_000  # below this, a process pool costs more than it saves
_ITEM = re.compile(rb"\n-(?=[ \n])")

# (path, full path, first byte, end byte or -1 for the whole file, first line, prepare,
# the file's signature)
Job = tuple[str, str, int, int, int, Preparer, tuple[int, int]]
# what a job gives back: (path, first byte, rows | an error's values | None: read the file whole,
# the file's block record (meta key, value) when this job read its first bytes, else None)
Result = tuple[str, int, Any, tuple[str, str] | None]


def jobs(files: list[tuple[str, Path, tuple[int, int]]], prepare: Preparer) -> list[Job]:
    """The parts of `files` ((path, full path, signature)), the largest files first."""
    sizes = {rel: os.path.getsize(full) for rel, full, _ in files}
    found: list[Job] = []
    for rel, full, signature in sorted(files, key=lambda file: -sizes[file[0]]):
        if sizes[rel] <= 2 * PART_BYTES:
            found.append((rel, str(full), 0, -1, 0, prepare, signature))
            continue
        found.extend((rel, str(full), start, end, line, prepare, signature)
                     for start, end, line in _parts(full))
    return found


def _parts(full: Path) -> list[tuple[int, int, int]]:
    """(first byte, end byte, first line) of each part of a large file."""
    with open(full, "rb") as handle:
        data = handle.read()
    size = len(data)
    found = []
    start, line = 0, 0
    while start < size:
        boundary = _ITEM.search(data, start + PART_BYTES) if start + PART_BYTES < size else None
        end = boundary.start() + 1 if boundary else size
        found.append((start, end, line))
        line += data.count(b"\n", start, end)
        start = end
    return found


def parts_of(jobs: list[Job]) -> dict[str, int]:
    """How many parts each file was cut into."""
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job[0]] = counts.get(job[0], 0) + 1
    return counts


def processes(work: list[Job]) -> int:
    """How many processes `results` reads `work` in (1: in this one)."""
    total = sum(os.path.getsize(job[1]) for job in work if job[2] == 0)
    if len(work) > 1 and (os.cpu_count() or 1) > 1 and total > _PARALLEL_BYTES \
            and hasattr(os, "fork"):
        return min(len(work), os.cpu_count() or 1)
    return 1


def results(work: list[Job], count: int) -> Iterator[Result]:
    """Each job's result, as the jobs finish, read in `count` processes (`processes`)."""
    if count > 1:
        from loa_mem.memory import forkjobs

        yield from forkjobs.imap_unordered(run, work, count)
    else:
        yield from map(run, work)


def run(job: Job) -> Result:
    """Read one job's part (or its whole file) and make its rows, without the garbage
    collector's passes (each entry makes a few containers, none in a cycle: the passes would
    cost about 30% of the parse)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(job)
    finally:
        if collecting:
            gc.enable()


def _run(job: Job) -> Result:
    rel, full, start, end, line, prepare, signature = job
    if end < 0:
        try:
            text = textfile.read_text(Path(full), rel)
            # as a part that is the whole file; else the fast reader's fallback and its errors
            rows = prepare.part_rows(rel, text, 0) or prepare(rel, yamlfast.load_spans(text, rel))
        except InvalidFile as error:
            return rel, start, invalid_values(error), None
        return rel, start, rows, _record(full, rel, rows.indent, rows.flow, signature)
    with open(full, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return rel, start, None, None
    part = prepare.part_rows(rel, text, line)
    if part is None:
        return rel, start, None, None
    # a file read in parts is a block list at column 0 (read whole otherwise)
    return rel, start, part, _record(full, rel, 0, False, signature) if start == 0 else None


def _record(full: str, rel: str, indent: int, flow: bool, signature: tuple[int, int]
            ) -> tuple[str, str] | None:
    if flow:
        return None
    from loa_mem.memory import reread

    return reread.built_record(full, rel, indent, signature)
