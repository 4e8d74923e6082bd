"""People: the private memory of one person's preferences and recent sessions (spec section 9).

How it is stored. A personal store lives outside every project: `LOA_MEM_HOME`, else the
platform's user data directory (`~/.local/share/loa-mem` on Linux). Each user has one folder
there, named from the user id (`alice-example.com-1a2b3c4d`), and that folder is its own git
repository: `user.json` (whose folder it is), `preferences.json`, `sessions.json`, each change
one commit. `access.log` (one JSON line per read or write) and `.lock` sit beside them, outside
git, so reading never writes a commit.

What must always hold:
- a command touches exactly one folder, the one its user id names; the id is checked and
  slugged (no separators, no leading dot) and the folder must be a real directory owned by the
  account running the command, not a symbolic link, and not inside another user's store;
- folders are 0700 and files 0600 (written under umask 077), git's objects included;
- every read and every write appends a line to the user's access log; an error that stops a
  read is logged there too (or, when the folder itself cannot be used, in the account's
  `~/.local/state/loa-mem/errors.log`) and the session starts without preferences.

This module is imported by the session-start hook (`loa-mem context`): standard library and
light loa_mem modules only.
"""

from __future__ import annotations

import os
import sys
import zlib

from loa_mem.core import clock, gitfast, jsontext
from loa_mem.core.errors import InvalidFile, LoaMemError, Refused
from loa_mem.people import rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

APP = "loa-mem"
FORMAT = 1
USER_FILE = "user.json"
PREFS_FILE = "preferences.json"
SESSIONS_FILE = "sessions.json"
ACCESS_LOG = "access.log"
LOCK_FILE = ".lock"
MAX_USER = 200


class Private:
    """umask 077 while it is held, so every file and folder made (by git too) is the owner's."""

    def __enter__(self) -> None:
        self.saved = os.umask(0o077)

    def __exit__(self, *exc: object) -> None:
        os.umask(self.saved)


# -- where ------------------------------------------------------------------------------------
def default_home() -> str:
    """The platform's user data directory. On Linux and the BSDs it is computed here exactly as
    platformdirs does (a test checks they agree), sparing the hook platformdirs' ~12 ms import."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = os.environ.get("XDG_DATA_HOME", "").strip()
        return os.path.join(base or os.path.expanduser("~/.local/share"), APP)
    import platformdirs

    return str(platformdirs.user_data_dir(APP, appauthor=False))


def home() -> str:
    return os.path.realpath(os.environ.get("LOA_MEM_HOME") or default_home())


def error_log() -> str:
    """Where errors go when the user's own folder cannot be used: this account's state dir."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = os.environ.get("XDG_STATE_HOME", "").strip()
        return os.path.join(base or os.path.expanduser("~/.local/state"), APP, "errors.log")
    import platformdirs

    return os.path.join(platformdirs.user_log_dir(APP, appauthor=False), "errors.log")


# -- who --------------------------------------------------------------------------------------
def resolve_user(given: str | None, email_cache: str | None = None) -> str:
    """`--user`, else LOA_MEM_USER, else git's user.email (as git reads it here; kept in the
    file `email_cache` while git's config files stay as they are, see `gitfast`)."""
    user = given if given is not None else os.environ.get("LOA_MEM_USER") or (
        gitfast.cached_user_email(email_cache) if email_cache else gitfast.user_email())
    if not user:
        raise Refused("no user: nobody to remember preferences for",
                      "pass --user ID, set LOA_MEM_USER, or git config user.email ADDRESS")
    return check_user(user)


def check_user(user: str) -> str:
    name = user.strip().lower()
    if not name or len(name) > MAX_USER:
        raise Refused(f"a user id holds 1-{MAX_USER} characters", "e.g. --user alice@example.com")
    if any(c in name for c in "/\\\0") or name.startswith(".") or not name.isprintable():
        raise Refused("a user id cannot hold '/', '\\', control characters or start with '.'",
                      "pass the person's id (e.g. an e-mail address), never a path")
    return name


PERSONAL = ("an e-mail address", "a phone number")  # a person's own store may hold these


def secrets_in(text: str | None) -> str:
    """The kinds of secret in `text` ("" for none): the screen without the person's own
    e-mail address or phone number."""
    from loa_mem.core.sensitive import scan

    found = [f.kind for f in scan(text or "") if f.kind not in PERSONAL]
    return ", ".join(dict.fromkeys(found))


def slug(user: str) -> str:
    """The folder name for a user id: readable, unique by a checksum of the whole id, and never
    a path (`../bob` and `bob` name different folders; `user.json` catches a collision)."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in user)
    base = kept.strip("._-")[:48] or "user"
    return f"{base}-{zlib.crc32(user.encode('utf-8')):08x}"


class Unusable(LoaMemError):
    """A personal store that cannot be read or written (permissions, a missing disk...)."""

    kind = "personal-store"


def user_dir(user: str, create: bool = False) -> str:
    """The user's folder, after every check; made (0700, no repository yet) when `create`."""
    top = home()
    folder = os.path.join(top, slug(user))
    _not_inside_a_store(top)
    try:
        try:
            stat = os.lstat(folder)
        except FileNotFoundError:
            if not create:
                return folder
            kinds = secrets_in(user)
            if kinds:  # the id would name the folder and sign its commits
                raise Refused(f"the user id looks like it contains {kinds}",
                              "pass the person's id (e.g. an e-mail address), never a secret"
                              ) from None
            with Private():
                os.makedirs(top, mode=0o700, exist_ok=True)
                # a concurrent first write may have made it: it is checked below all the same
                try:  # noqa: SIM105 - contextlib (and what it imports) is not for the hook
                    os.mkdir(folder, 0o700)
                except FileExistsError:
                    pass
            stat = os.lstat(folder)
        _owned(folder, stat)
        if stat.st_mode & 0o077:  # made by hand, or by an older umask: make it private again
            os.chmod(folder, 0o700)
        _same_user(folder, user)
    except OSError as error:
        raise unusable(folder, error) from None
    return folder


def unusable(where: str, error: OSError) -> Unusable:
    return Unusable(f"cannot use the personal store {where}: {error.strerror or error}",
                    "check that LOA_MEM_HOME is yours and writable; nothing was changed")


def _not_inside_a_store(top: str) -> None:
    current = top
    while True:
        if os.path.isfile(os.path.join(current, USER_FILE)) and os.path.exists(
                os.path.join(current, ".git")):
            raise Refused(f"LOA_MEM_HOME ({top}) is inside a personal store ({current})",
                          "point LOA_MEM_HOME at a folder of its own")
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def _owned(folder: str, stat: os.stat_result) -> None:
    import stat as kinds

    if kinds.S_ISLNK(stat.st_mode) or not kinds.S_ISDIR(stat.st_mode):
        raise Refused(f"{folder} is not a folder (a link or a file), so it is not used as a "
                      "personal store", "remove it or point LOA_MEM_HOME elsewhere")
    if hasattr(os, "geteuid") and stat.st_uid != os.geteuid():
        raise Refused(f"the personal store {folder} belongs to another account (uid "
                      f"{stat.st_uid}, you are {os.geteuid()}); it is never read or written",
                      "run as its owner, or use your own user id or LOA_MEM_HOME")


def _same_user(folder: str, user: str) -> None:
    marker = os.path.join(folder, USER_FILE)
    try:
        recorded = _load_json(marker).get("user")
    except FileNotFoundError:
        return
    if recorded != user:
        raise Refused(f"{folder} holds the store of another user id",
                      "pass your own user id; nothing was read or written")


# -- reading ----------------------------------------------------------------------------------
def _load_json(path: str) -> dict[str, Any]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, encoding="utf-8") as handle:
        text = handle.read()
    import json  # once a file is there: a session start without any must not pay it (`jsontext`)

    try:
        data = json.loads(text)
    except ValueError as bad:
        line, col = getattr(bad, "lineno", 1), getattr(bad, "colno", 1)
        raise InvalidFile(path, line, col, f"not JSON: {getattr(bad, 'msg', bad)}",
                          "fix it, or bring back the last good version: git -C "
                          f"{os.path.dirname(path)} checkout -- {os.path.basename(path)}"
                          ) from None
    if not isinstance(data, dict) or data.get("format", FORMAT) != FORMAT:
        raise InvalidFile(path, 1, 1, f"not a format-{FORMAT} loa-mem personal file")
    return data


def read(folder: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The preferences by key and the session records; empty when never written."""
    found: list[Any] = []
    for name, field, empty in ((PREFS_FILE, "preferences", {}), (SESSIONS_FILE, "records", [])):
        path = os.path.join(folder, name)
        try:
            value = _load_json(path).get(field, empty)
        except FileNotFoundError:
            value = empty
        except OSError as error:
            raise unusable(path, error) from None
        if type(value) is not type(empty):
            raise InvalidFile(path, 1, 1, f"{field!r} must be a JSON {type(empty).__name__}")
        items: list[Any] = list(value.values()) if isinstance(value, dict) else value
        for item in items:
            _check_record(path, item, _PREF_FIELDS if name == PREFS_FILE else _RECORD_FIELDS)
        found.append(value)
    return found[0], found[1]


_PREF_FIELDS = {"key": str, "kind": str, "confidence": int, "confidence_at": str,
                "original": int, "last_used": str, "first_observed": str,
                "observation_count": int}
_RECORD_FIELDS = {"session": str, "key": str, "recorded_at": str, "confidence": int}


def _check_record(path: str, item: object, fields: dict[str, type]) -> None:
    """Records edited by hand must still hold what the rules read, or the file is refused."""
    bad = not isinstance(item, dict) or "value" not in item or any(
        not isinstance(item.get(name), kind) for name, kind in fields.items())
    if bad:
        what = item.get("key") if isinstance(item, dict) else None
        raise InvalidFile(path, 1, 1, f"record {what!r} lacks a field or has a wrong type "
                          f"(needs value and {', '.join(fields)})")


# -- the access log -------------------------------------------------------------------------
def _append(path: str, record: dict[str, Any]) -> None:
    line = jsontext.dumps(record) + "\n"
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    with Private():
        fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def log(folder: str, op: str, keys: list[str] | None = None, **details: Any) -> None:
    """One line in the user's access log: when, which command, which keys (never values)."""
    record = {"at": clock.now_iso(), "op": op, "keys": sorted(set(keys or [])),
              "pid": os.getpid(), **details}
    _append(os.path.join(folder, ACCESS_LOG), record)


def log_error(folder: str | None, op: str, failure: BaseException) -> str:
    """Log a failure in the user's access log, else in this account's error log; the path."""
    message = failure.one_line() if isinstance(failure, LoaMemError) else (
        f"{type(failure).__name__}: {failure}")
    details: dict[str, Any] = {"outcome": "error", "error": message}
    if folder is not None:
        try:
            log(folder, op, **details)
            return os.path.join(folder, ACCESS_LOG)
        except OSError:
            pass
    path = error_log()
    try:
        with Private():
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _append(path, {"at": _safe_now(), "op": op, "store": folder, **details})
    except OSError:
        return ""
    return path


def _safe_now() -> str:
    try:
        return clock.now_iso()
    except LoaMemError:
        return ""


# -- session start ----------------------------------------------------------------------------
def session_start(user: str | None) -> dict[str, Any]:
    """What a session starts with: the preferences to apply and those to confirm, best first,
    and the live records (persistent or unexpired) of the last 5 sessions, by confidence. A
    store that cannot be read gives none of them, and the error is logged, never raised."""
    folder: str | None = None
    try:
        name = resolve_user(user)
        folder = user_dir(name, create=True)
        prefs, records = read(folder)
        now = clock.now()
        ranked = sorted(((rules.effective(p, now), key, p) for key, p in prefs.items()
                         if not p.get("flagged")), key=lambda t: (-t[0], t[1]))
        picked = {b: [_brief(p, c) for c, _, p in ranked if rules.band(c) == b]
                  for b in ("apply", "suggest")}
        _, recent = rules.load_sessions(records, now)
        sessions = [{k: r[k] for k in ("session", "key", "value", "confidence", "persistent")}
                    for r in recent]
        log(folder, "pref context", [*(p["key"] for p in picked["apply"]),
                                     *(p["key"] for p in picked["suggest"]),
                                     *(r["key"] for r in sessions)], outcome="ok")
        return {"user": name, "applied": picked["apply"], "to_confirm": picked["suggest"],
                "sessions": sessions, "error": None}
    except Exception as failure:  # the session starts without preferences, as the spec says
        where = log_error(folder, "pref context", failure)
        return {"user": user, "applied": [], "to_confirm": [], "sessions": [],
                "error": str(failure), "logged_in": where}


def _brief(pref: dict[str, Any], confidence: int) -> dict[str, Any]:
    return {"key": pref["key"], "value": pref["value"], "confidence": confidence,
            "action": rules.action(pref, confidence)}


def context_lines(user: str | None) -> list[str]:
    """One line per applied preference, then per preference to confirm (marked), for
    `loa-mem context`. Never raises and never commits."""
    start = session_start(user)
    lines = [f"{p['key']}: {rules.show_value(p['value'])} (confidence {p['confidence']})"
             for p in start["applied"]]
    lines += [f"{p['key']}: {rules.show_value(p['value'])} (to confirm: ask before applying; "
              f"confidence {p['confidence']})" for p in start["to_confirm"]]
    lines += [f"{r['key']}: {rules.show_value(r['value'])} (session {r['session']}; "
              + ("persistent" if r["persistent"] else f"confidence {r['confidence']}") + ")"
              for r in start["sessions"]]
    return lines
