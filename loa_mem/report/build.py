"""`loa-mem report`: gather the data, render the page, write it (or not), and say what was done."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core.errors import Refused
from loa_mem.memory.store import Store
from loa_mem.report import data as data_mod

DEFAULT_OUTPUT = "loa-mem-report.html"


@dataclass(frozen=True)
class Built:
    report: data_mod.Report
    html: str | None  # where the page was written ("-": stdout), None when it was not
    bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {"html": self.html, "bytes": self.bytes, **self.report.to_json()}


def output_path(given: str | None) -> Path:
    """Where the page goes: `-o FILE` (relative to the current directory), else the default
    name in the current directory. A directory is refused by name."""
    path = Path(given or DEFAULT_OUTPUT).expanduser()
    if path.is_dir():
        raise Refused(f"{given or DEFAULT_OUTPUT} is a directory",
                      "give a file name, such as -o memory-report.html")
    folder = next((p for p in path.absolute().parents if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise Refused(f"{folder} is a file, not a folder", "give a path in a folder")
    if path.suffix.lower() not in (".html", ".htm"):
        raise Refused(f"{path.name} does not end in .html",
                      "give a file name ending in .html, so a browser opens it as a page")
    return path


def build(store: Store, html: bool, output: str | None) -> Built:
    """The report of `store`; with `html`, the page too, written to `output` ("-": stdout)."""
    from loa_mem.report import html as html_mod

    target = output_path(output) if html and output != "-" else None
    report = data_mod.gather(store)
    if not html:
        return Built(report, None, None)
    page = html_mod.render(report)
    encoded = page.encode("utf-8")
    if target is None:
        sys.stdout.buffer.write(encoded)
        sys.stdout.flush()
        return Built(report, "-", len(encoded))
    from loa_mem.core.filewrite import atomic_write

    atomic_write(target, encoded)
    return Built(report, str(target), len(encoded))
