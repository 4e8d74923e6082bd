"""The events log: `events.jsonl` beside the grimoire files, one JSON object per operation.

It is append-only and committed with the change it records, so it is the readable audit trail of
who did what, when and why. Its lines also keep every id ever handed out, so an id that was
forgotten is never reused.
"""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path
from typing import Any

from loa_mem.core import clock

EVENTS_FILE = "events.jsonl"


def actor(agent: str | None = None) -> str:
    """Who acts, as the events log records it: LOA_MEM_ACTOR, else the agent, else the OS user.
    A name given by the environment or an option is screened like every field written."""
    from loa_mem.core.sensitive import refuse_sensitive

    if os.environ.get("LOA_MEM_ACTOR"):
        refuse_sensitive(os.environ["LOA_MEM_ACTOR"], "LOA_MEM_ACTOR")
        return os.environ["LOA_MEM_ACTOR"]
    if agent:
        refuse_sensitive(agent, "the agent name (--agent)")
        return f"agent:{agent}"
    try:
        return f"user:{getpass.getuser()}"
    except (KeyError, OSError):
        return "user:unknown"


def make(op: str, ids: list[str], who: str, reason: str | None = None,
         **details: Any) -> dict[str, Any]:
    # Every line has the same five keys (reason null when there is none), so readers of the
    # log never need to guess.
    event: dict[str, Any] = {"op": op, "ids": ids, "time": clock.now_iso(), "actor": who,
                             "reason": reason or None}
    event.update({k: v for k, v in details.items() if v is not None})
    return event


def append(path: Path, events: list[dict[str, Any]]) -> None:
    if not events:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e, ensure_ascii=False, sort_keys=False) for e in events]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        ending, lead = "\n", ""
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as existing:
                existing.seek(-min(size, 2), os.SEEK_END)
                tail = existing.read(2)
            # the log's own line ending (CRLF in a checkout with core.autocrlf) is kept
            ending = "\r\n" if tail.endswith(b"\r\n") else "\n"
            lead = "" if tail.endswith(b"\n") else "\n"
        payload = lead + "".join(line + ending for line in lines)
        os.write(fd, payload.encode("utf-8"))
    finally:
        os.close(fd)


def parse_lines(text: str) -> list[dict[str, Any]]:
    """Events in `text`; a line that is not a JSON object (a hand edit, a torn write) is skipped.
    Lines end at "\n" only: JSON text may hold U+2028, U+2029 or U+0085 unescaped."""
    found = []
    for line in text.split("\n"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


def read_all(path: Path) -> list[dict[str, Any]]:
    try:
        return parse_lines(path.read_bytes().decode("utf-8", "replace"))
    except FileNotFoundError:
        return []


def problems(path: Path) -> list[tuple[int, str]]:
    """(line, what) for each line of the log that is not a JSON object: a torn write or a hand
    edit. Readers skip such a line, so it costs nothing but the record it held."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    found = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            found.append((number, "is not UTF-8 text"))
            continue
        except ValueError:
            found.append((number, "is not complete JSON (a torn write or a hand edit)"))
            continue
        if not isinstance(event, dict):
            found.append((number, "is not a JSON object"))
    return found


def unmatched(lines: list[str], against: list[str]) -> list[str]:
    """The lines of `lines` that `against` does not hold, each line counted as often as it
    occurs (a log may hold the same line twice), in `lines`' order."""
    left: dict[str, int] = {}
    for line in against:
        left[line] = left.get(line, 0) + 1
    found = []
    for line in lines:
        if left.get(line, 0) > 0:
            left[line] -= 1
        else:
            found.append(line)
    return found
