"""The `pref` commands (spec section 9): each returns a frozen result with `to_json()`.

Writes go through `people_store.writing` (lock, one commit, retry, access log); reads through
`_reading` (access log). Nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import LoaMemError, NotFound, NothingToDo, Refused, WriteFailed
from loa_mem.people import home as people
from loa_mem.people import purge as people_purge
from loa_mem.people import rules
from loa_mem.people import start as pending
from loa_mem.people import writing as people_store
from loa_mem.people.purge import Drop, Purged


def _screen(text: str | None, where: str) -> None:
    """Secrets are refused everywhere; a person's own e-mail address or phone number may stay
    in their own store."""
    kinds = people.secrets_in(text)
    if kinds:
        raise Refused(f"{where} looks like it contains {kinds}",
                      "a preference never holds a secret; describe it instead")


def _value(text: str, where: str) -> Any:
    value = rules.parse_value(text)
    for part in value if isinstance(value, list) else [value]:
        _screen(str(part), where)
    return value


def _view(pref: dict[str, Any]) -> dict[str, Any]:
    confidence = rules.effective(pref, clock.now())
    return {**pref, "stored_confidence": pref["confidence"], "confidence": confidence,
            "band": rules.band(confidence), "action": rules.action(pref, confidence)}


def _session_view(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "live": rules.live(record, clock.now())}


@dataclass(frozen=True)
class PrefChanged:
    user: str
    op: str
    pref: dict[str, Any]
    note: str = ""
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "op": self.op, "note": self.note, "commit": self.commit,
                "preference": self.pref}


def _key(key: str) -> str:
    _screen(key, "the preference key")
    return rules.check_key(key)


def _change(user: str | None, op: str, key: str, apply: Any) -> PrefChanged:
    name, key = people.resolve_user(user), _key(key)
    with people_store.writing(name, op) as change:
        old = change.prefs.get(key)
        new, note = apply(old, key)
        change.prefs[key] = new
        change.keys, change.what = [key], "1 preference"
    return PrefChanged(name, op, _view(new), note, change.commit)


def _existing(old: dict[str, Any] | None, key: str) -> dict[str, Any]:
    if old is None:
        raise NotFound("no preference with that key", "see `loa-mem pref show` for what is kept")
    return old


def pref_set(user: str | None, key: str, text: str, context: str | None = None) -> PrefChanged:
    value = _value(text, "the value")
    _screen(context, "--context")
    return _change(user, "pref set", key, lambda old, k: (
        rules.set_explicit(old, k, value, clock.now(), context), "explicit"))


def pref_observe(user: str | None, key: str, text: str, context: str | None = None
                 ) -> PrefChanged:
    value = _value(text, "the value")
    _screen(context, "--context")
    return _change(user, "pref observe", key,
                   lambda old, k: rules.observe(old, k, value, clock.now(), context))


def pref_use(user: str | None, key: str) -> PrefChanged:
    return _change(user, "pref use", key, lambda old, k: (
        rules.use(_existing(old, k), clock.now()), "used"))


def pref_confirm(user: str | None, key: str) -> PrefChanged:
    return _change(user, "pref confirm", key, lambda old, k: (
        rules.confirm(_existing(old, k), clock.now()), "confirmed"))


def pref_contradict(user: str | None, key: str, text: str) -> PrefChanged:
    value = _value(text, "the value")

    def apply(old: dict[str, Any] | None, k: str) -> tuple[dict[str, Any], str]:
        new = rules.contradict(_existing(old, k), value, clock.now())
        return new, "flagged for removal" if new.get("flagged") else "contradicted"

    return _change(user, "pref contradict", key, apply)


# -- reading --------------------------------------------------------------------------------
def _reading(user: str | None, op: str, keys: list[str] | None = None
             ) -> tuple[str, str, dict[str, dict[str, Any]], list[dict[str, Any]]]:
    folder = None
    try:
        name = people.resolve_user(user)
        folder = people.user_dir(name, create=True)
        prefs, records = people.read(folder)
    except Exception as failure:
        people.log_error(folder, op, failure)
        raise
    people.log(folder, op, keys if keys is not None else list(prefs), outcome="ok")
    return name, folder, prefs, records


@dataclass(frozen=True)
class PrefShown:
    user: str
    pref: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "key": self.pref["key"], "value": self.pref["value"],
                "confidence": self.pref["confidence"], "band": self.pref["band"],
                "action": self.pref["action"], "preference": self.pref}


def pref_get(user: str | None, key: str) -> PrefShown:
    key = rules.check_key(key)
    name, _, prefs, _ = _reading(user, "pref get", [key])
    return PrefShown(name, _view(_existing(prefs.get(key), key)))


@dataclass(frozen=True)
class Remembered:
    user: str
    folder: str
    preferences: list[dict[str, Any]]
    sessions: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "store": self.folder, "preferences": self.preferences,
                "sessions": self.sessions}


def show(user: str | None) -> Remembered:
    name, folder, prefs, records = _reading(user, "pref show")
    views = sorted((_view(p) for p in prefs.values()), key=lambda v: (-v["confidence"], v["key"]))
    return Remembered(name, folder, views, [_session_view(r) for r in records])


@dataclass(frozen=True)
class SessionStart:
    user: str | None
    applied: list[dict[str, Any]]
    to_confirm: list[dict[str, Any]]
    error: str | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "applied": self.applied, "to_confirm": self.to_confirm,
                "sessions": self.sessions, "error": self.error}


def context(user: str | None) -> SessionStart:
    """What `loa-mem context` adds (pending session records stored first); a store that
    cannot be read gives nothing (logged)."""
    pending.retry_pending(user)
    start = people.session_start(user)
    return SessionStart(start["user"], start["applied"], start["to_confirm"], start["error"],
                        start["sessions"])


def defaults(user: str | None) -> SessionStart:
    name, _, prefs, _ = _reading(user, "pref defaults")
    views = sorted((_view(p) for p in prefs.values() if not p.get("flagged")),
                   key=lambda v: (-v["confidence"], v["key"]))
    return SessionStart(name, [v for v in views if v["band"] == "apply"],
                        [v for v in views if v["band"] == "suggest"])


# -- deleting -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deleted:
    user: str
    op: str
    preferences: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
    commit: str | None = None
    purged: Purged | None = None
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "op": self.op, "text": self.text,
                "preferences": self.preferences, "sessions": self.sessions,
                "commit": self.commit, "purged": self.purged.to_json() if self.purged else None}


def _delete(name: str, op: str, drop: Drop, purge: bool,
            text: str | None = None) -> Deleted:
    with people_store.writing(name, op) as change:
        gone = [p for p in change.prefs.values() if drop("preference", p)]
        ended = [r for r in change.records if drop("session", r)]
        waiting = pending.read_pending(change.folder)
        unsaved = [r for r in waiting if drop("session", r)]
        if unsaved:  # records not stored yet are the person's data all the same
            pending.write_pending(change.folder, [r for r in waiting if r not in unsaved])
        if not gone and not ended and not unsaved and not purge:
            raise NothingToDo("nothing in your personal memory matches" if text is not None
                              else "nothing to clear", "see `loa-mem pref show`")
        change.prefs = {k: p for k, p in change.prefs.items() if p not in gone}
        change.records = [r for r in change.records if r not in ended]
        change.keys = [p["key"] for p in gone]
        change.what = f"{len(gone)} preference(s), {len(ended)} session record(s)"
    people_store.redact_log(change.folder, {p["key"] for p in gone})
    purged = None
    if purge:
        with people_store.locked(change.folder, op + " --purge"):
            purged = people_purge.rewrite(change.folder, drop)
    return Deleted(name, op, [_view(p) for p in gone],
                   [_session_view(r) for r in ended + unsaved],
                   change.commit, purged, text)


def forget(user: str | None, text: str, purge: bool = False) -> Deleted:
    if len(text.strip()) < 2:
        raise Refused("forget needs at least 2 characters to look for",
                      "e.g. loa-mem pref forget Retail")
    name = people.resolve_user(user)
    return _delete(name, "pref forget", lambda _, item: rules.matches(item, text.strip()),
                   purge, text.strip())


def clear(user: str | None, flagged: bool = False, sessions: bool = False,
          purge: bool = False) -> Deleted:
    name = people.resolve_user(user)

    def drop(kind: str, item: dict[str, Any]) -> bool:
        if kind == "session":
            return sessions
        return bool(item.get("flagged")) or not flagged

    return _delete(name, "pref clear", drop, purge)


# -- sessions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SessionRecorded:
    user: str
    record: dict[str, Any]
    commit: str | None
    pending: str | None = None  # why it waits for the next session start

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "record": self.record, "commit": self.commit,
                "pending": self.pending}


def session_record(user: str | None, session: str, key: str, text: str, persistent: bool,
                   ttl_days: int = rules.SESSION_TTL_DAYS, confidence: int | None = None,
                   context: str | None = None) -> SessionRecorded:
    name, key = people.resolve_user(user), _key(key)
    _screen(session, "--session")
    _screen(context, "--context")
    record = rules.session_record(session, key, _value(text, "the value"), clock.now(),
                                  persistent, ttl_days, confidence, context)
    try:
        with people_store.writing(name, "pref session record") as change:
            change.records.append(record)
            change.keys, change.what = [key], "1 session record"
    except WriteFailed as failure:  # logged; stored at the next session start
        pending.keep_pending(people.user_dir(name), record)
        return SessionRecorded(name, _session_view(record), None, failure.one_line())
    return SessionRecorded(name, _session_view(record), change.commit)


def session_confirm(user: str | None, key: str, session: str | None = None
                    ) -> SessionRecorded:
    """Make the newest live record of `key` (in `session`, when given) persistent, in place:
    confidence 100, no expiry, no second copy."""
    name, key = people.resolve_user(user), _key(key)
    now = clock.now()
    with people_store.writing(name, "pref session confirm") as change:
        found = [r for r in change.records if r["key"] == key and rules.live(r, now)
                 and (session is None or r["session"] == session)]
        if not found:
            raise NotFound(f"no live session record of {key}" + (
                f" in session {session}" if session else ""), "see `loa-mem pref session load`")
        record = max(found, key=lambda r: str(r["recorded_at"]))
        if record["persistent"]:
            raise NothingToDo(f"{key} of session {record['session']} is already persistent",
                              "nothing to change")
        record.update(rules.confirmed_record(record))
        change.keys, change.what = [key], "1 session record confirmed"
    return SessionRecorded(name, _session_view(record), change.commit)


@dataclass(frozen=True)
class SessionsLoaded:
    user: str | None
    sessions: list[str]
    records: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "sessions": self.sessions, "records": self.records,
                "error": self.error}


def session_load(user: str | None) -> SessionsLoaded:
    """The last 5 sessions' live records by confidence. A store that cannot be read gives
    none: the session proceeds without them, and the error is logged."""
    pending.retry_pending(user)
    try:
        name, _, _, records = _reading(user, "pref session load", [])
    except (LoaMemError, OSError) as failure:  # logged by _reading
        return SessionsLoaded(user, [], [], failure.one_line() if isinstance(
            failure, LoaMemError) else str(failure))
    sessions, chosen = rules.load_sessions(records, clock.now())
    return SessionsLoaded(name, sessions, [_session_view(r) for r in chosen])
