"""Writing a personal store: one lock, one commit per command, a retry, a private umask.

A write computes the new preferences and session records once, then saves them: each changed
file written atomically, then one commit of exactly those files in the user's own repository
(never the project's). A failed save is retried once after `RETRY_DELAY` seconds; when the retry
fails too, the files are put back as they were, the error is logged and reported, and nothing
else changes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loa_mem.core import clock, git, lock
from loa_mem.core.errors import LoaMemError, WriteFailed
from loa_mem.core.filewrite import atomic_write
from loa_mem.people import home as people

RETRY_DELAY = 2.0  # seconds before the one retry of a failed save (the spec's number)
LOCK_TIMEOUT = 10.0
pause: Callable[[float], None] = time.sleep  # tests replace it to run without waiting
_IDENTITY = ("loa-mem", "loa-mem@localhost")
_EXCLUDED = (people.ACCESS_LOG, people.LOCK_FILE, "*.tmp")


class Change:
    """The state a command changes inside `writing`; saved when the block ends."""

    def __init__(self, folder: str, user: str, op: str,
                 prefs: dict[str, dict[str, Any]], records: list[dict[str, Any]]) -> None:
        self.folder, self.user, self.op = folder, user, op
        self.prefs, self.records = prefs, records
        self.keys: list[str] = []
        self.what = ""
        self.commit: str | None = None


def dump_prefs(prefs: dict[str, dict[str, Any]]) -> str:
    return _dump({"format": people.FORMAT, "preferences": dict(sorted(prefs.items()))})


def dump_records(records: list[dict[str, Any]]) -> str:
    return _dump({"format": people.FORMAT, "records": records})


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


@contextmanager
def locked(folder: str, op: str) -> Iterator[None]:
    """The user's lock and a private umask, for work outside `writing` (a purge); failures
    are logged."""
    with people.Private(), lock.hold(Path(folder) / people.LOCK_FILE, op, LOCK_TIMEOUT):
        try:
            yield
        except Exception as failure:
            people.log_error(folder, op, failure)
            raise
        people.log(folder, op, outcome="ok")


@contextmanager
def writing(user: str, op: str) -> Iterator[Change]:
    """Hold the user's lock, read the store, let the caller change it, save it, log it."""
    try:
        folder = people.user_dir(user, create=True)
    except LoaMemError as refused:  # not the user's folder: logged in this account's log
        people.log_error(None, op, refused)
        raise
    try:
        with people.Private(), lock.hold(Path(folder) / people.LOCK_FILE, op, LOCK_TIMEOUT):
            try:
                ensure_repo(folder, user)
                prefs, records = people.read(folder)
                before = {people.PREFS_FILE: dump_prefs(prefs),
                          people.SESSIONS_FILE: dump_records(records)}
                change = Change(folder, user, op, prefs, records)
                yield change
                _save_with_retry(change, before)
            except Exception as failure:
                if not isinstance(failure, WriteFailed):
                    people.log_error(folder, op, failure)
                raise
            people.log(folder, op, change.keys, outcome="ok", commit=change.commit)
    except OSError as error:
        raise people.unusable(folder, error) from None


def ensure_repo(folder: str, user: str) -> None:
    """Make the folder a git repository of its own, with `user.json` as its first commit."""
    top = Path(folder)
    if not (top / ".git").exists():
        git.init(top)
        for name, value in (("user.name", _IDENTITY[0]), ("user.email", _IDENTITY[1]),
                            ("commit.gpgsign", "false"), ("gc.auto", "0"),
                            ("core.hooksPath", "/dev/null"), ("core.sharedRepository", "0600")):
            git.run(top, "config", name, value)
        exclude = git.git_dir(top) / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text("".join(f"/{name}\n" for name in _EXCLUDED), encoding="utf-8")
    if not (top / people.USER_FILE).exists():
        marker = _dump({"format": people.FORMAT, "user": user, "created_at": clock.now_iso()})
        _write_atomic(top / people.USER_FILE, marker)
        git.commit(top, [people.USER_FILE],
                   git.message("pref init", "a personal store", [], {"Loa-Actor": "loa-mem"}))


def _write_atomic(path: Path, text: str) -> None:
    atomic_write(path, text, new_mode=0o600)


def _save(change: Change, texts: dict[str, str]) -> None:
    top = Path(change.folder)
    for name, text in texts.items():
        _write_atomic(top / name, text)
    subject = change.what or change.op
    change.commit = git.commit(top, sorted(texts), git.message(change.op, subject, []))


def _save_with_retry(change: Change, before: dict[str, str]) -> None:
    after = {people.PREFS_FILE: dump_prefs(change.prefs),
             people.SESSIONS_FILE: dump_records(change.records)}
    changed = {name: text for name, text in after.items() if text != before[name]}
    if not changed:
        return
    try:
        _save(change, changed)
        return
    except (OSError, LoaMemError) as first:
        people.log_error(change.folder, change.op + " (retrying)", first)
    pause(RETRY_DELAY)
    try:
        _save(change, changed)
    except (OSError, LoaMemError) as second:
        _put_back(change.folder, {name: before[name] for name in changed})
        where = people.log_error(change.folder, change.op, second)
        detail = second.one_line() if isinstance(second, LoaMemError) else str(second)
        raise WriteFailed(
            f"could not save to your personal store {change.folder}, tried twice "
            f"{RETRY_DELAY:g} s apart: {detail}",
            f"nothing was changed (logged in {where}); run the command again later") from None


def _put_back(folder: str, texts: dict[str, str]) -> None:
    for name, text in texts.items():
        try:
            _write_atomic(Path(folder) / name, text)
        except OSError:
            continue


def redact_log(folder: str, keys: set[str]) -> int:
    """Replace forgotten keys in the access log by "[forgotten]"; how many lines changed."""
    path = Path(folder) / people.ACCESS_LOG
    if not keys or not path.exists():
        return 0
    lines, changed = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        logged = record.get("keys") or []
        if set(logged) & keys:
            record["keys"] = sorted({"[forgotten]" if k in keys else k for k in logged})
            changed += 1
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
    if changed:
        _write_atomic(path, "".join(line + "\n" for line in lines))
    return changed
