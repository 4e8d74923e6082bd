"""What a clone needs for memory files to merge by id, set up by any loa-mem command.

git does not copy a repository's config to its clones, so the merge driver that `init`
registered exists only where `init` ran. Every command that opens a store therefore checks,
by reading two small files (no git process), that this clone has:
- the drivers in its git config, named by program (`loa-mem`), never by an absolute path that
  breaks when a virtual environment moves;
- the attribute lines in `.git/info/attributes` (per clone, never committed), so no command
  but `init` changes a tracked file.

When loa-mem cannot run where git runs the driver (not on PATH, a broken installation), the
driver command falls back to git's own line merge: conflict markers for a grimoire file, a
union of lines for the events log. Never a silent "keep ours".

A clone that has none of the drivers' sections gets them appended to its config the way `git
config` writes a new section (under git's own `config.lock`, keeping the file's mode), rather
than by four `git config` processes, which cost a fresh clone's first command 15-35 ms; any
other case (an old driver to replace, a lock held, an odd file) goes through `git config`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from loa_mem.core import git

DRIVER = "loa-mem"
LOG_DRIVER = "loa-mem-log"
_NAMES = {DRIVER: "loa-mem: merge memory files by entry id",
          LOG_DRIVER: "loa-mem: merge the events log (a union of lines)"}
ATTRIBUTES_NOTE = "# loa-mem: merge memory files by entry id (see `loa-mem merge-driver`)"


def driver_command(union: bool) -> str:
    """The shell command git runs for a file: loa-mem when it can run, else git's merge."""
    fallback = ("git merge-file --marker-size=%L -L ours -L base -L theirs"
                f"{' --union' if union else ''} %A %O %B")
    return ("if loa-mem --version >/dev/null 2>&1; then exec loa-mem merge-driver "
            f"%O %A %B %P --marker-size %L; else {fallback}; fi")


def attribute_lines(grimoires: list[str], events: list[str], others: tuple[str, ...] = ()
                    ) -> list[str]:
    """Grimoire files and derived JSON summaries (`others`) merge through loa-mem, the
    events log as a union."""
    return [*(f"{path} merge={DRIVER}" for path in [*grimoires, *others]),
            *(f"{path} merge={LOG_DRIVER}" for path in events)]


def _config_has(config_text: str) -> bool:
    return all(f'[merge "{name}"]' in config_text for name in _NAMES) and all(
        driver_command(name == LOG_DRIVER).replace("\\", "\\\\").replace('"', '\\"')
        in config_text for name in _NAMES)


def ensure(top: Path, grimoires: list[str], events: list[str], others: tuple[str, ...] = ()
           ) -> None:
    """Register what this clone lacks; quiet, and harmless where .git is read-only."""
    common = git.common_dir(top)
    with contextlib.suppress(OSError):
        config = (common / "config").read_text(encoding="utf-8", errors="replace")
        if not _config_has(config) and not _append_drivers(common / "config"):
            _register_drivers(top)
        info = common / "info" / "attributes"
        text = info.read_text(encoding="utf-8") if info.exists() else ""
        present = {line.strip() for line in text.splitlines()}
        missing = [line for line in attribute_lines(grimoires, events, others)
                   if line not in present]
        if missing:
            from loa_mem.core.filewrite import atomic_write

            lead = "" if not text or text.endswith("\n") else "\n"
            note = [] if ATTRIBUTES_NOTE in present else [ATTRIBUTES_NOTE]
            # per clone, and written again by any command that finds a line missing
            atomic_write(info, text + lead + "".join(f"{line}\n" for line in note + missing),
                         durable=False)


def _value(text: str) -> str:
    """A config value as `git config` writes it: quoted when it holds a comment character or
    outer blanks, with backslashes, quotes, tabs and newlines escaped."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
               .replace("\n", "\\n"))
    quoted = any(mark in text for mark in ";#") or text != text.strip()
    return f'"{escaped}"' if quoted else escaped


def driver_sections() -> str:
    """The drivers' config sections, as `git config` would add them to a file."""
    return "".join(f'[merge "{name}"]\n\tname = {_value(label)}\n'
                   f"\tdriver = {_value(driver_command(name == LOG_DRIVER))}\n"
                   for name, label in _NAMES.items())


def _append_drivers(config: Path) -> bool:
    """Append the drivers' sections to `config` when it has none of them, under git's lock
    protocol; False when that is not the case or not possible (the caller asks git)."""
    lock = config.with_name(config.name + ".lock")
    try:
        status = config.lstat()
        # a symlinked config, or one another git process is writing: git knows best
        if not stat.S_ISREG(status.st_mode):
            return False
        handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), status.st_mode & 0o7777)
            text = config.read_bytes()  # again, now that no git process can change it
            if b"loa-mem" in text.lower():  # a driver to replace: `git config` edits in place
                raise FileExistsError(config)
            lead = b"" if not text or text.endswith(b"\n") else b"\n"
            out.write(text + lead + driver_sections().encode())
        os.replace(lock, config)
    except OSError:
        with contextlib.suppress(OSError):
            lock.unlink()
        return False
    return True


def _register_drivers(top: Path) -> None:
    for name, label in _NAMES.items():
        for key, value in (("name", label), ("driver", driver_command(name == LOG_DRIVER))):
            git.run(top, "config", f"merge.{name}.{key}", value, check=False)
