"""The rules of personal preferences and session memory (spec section 9): pure, no IO.

Records are plain JSON dicts, as stored, so the session-start hook can read them without
dataclasses or typing at run time. Every function takes `now` and returns new records.

A preference keeps the confidence it was given (`confidence`) and when (`confidence_at`), plus
when it was last used (`last_used`). Decay is applied at read time from the time unused, and
only the part of it not already counted when the confidence was stored: a preference unused for
40 days that is contradicted (its decayed 90, less 30, is stored as 60) does not lose its first
10 again on the next read.
"""

from __future__ import annotations

from loa_mem.core import clock
from loa_mem.core.errors import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

EXPLICIT = 100  # stated by the user: also what confirmation resets to
IMPLICIT_FIRST = 40  # first observation of a behaviour
IMPLICIT_STEP = 15  # each repeat of the same value
IMPLICIT_MAX = 85  # implicit preferences never reach certainty by observation alone
USE_STEP = 5  # each use, up to the original level
CONTRADICTION = 30  # an implicit preference contradicted by new behaviour
DECAY = ((90, 25), (30, 10))  # (days unused, total loss): the larger step replaces the smaller
APPLY_AT = 80
SUGGEST_AT = 50
SESSION_TTL_DAYS = 30
SESSION_CONFIDENCE = 80  # a decision of one session, not confirmed
SESSIONS_LOADED = 5
MAX_KEY = 64
MAX_TEXT = 500
MAX_ITEMS = 50

BANDS = {"apply": "apply", "suggest": "ask to confirm", "mention": "mention"}
_KEY_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_.-")


# -- values and keys ------------------------------------------------------------------------
def check_key(key: str) -> str:
    name = key.strip().lower()
    if not name or len(name) > MAX_KEY or not set(name) <= _KEY_CHARS or name[0] in "._-":
        raise Refused("the preference key is not valid",
                      f"use 1-{MAX_KEY} characters a-z, 0-9, '_', '.', '-', starting with a "
                      "letter or digit, e.g. channel_preference")
    return name


def parse_value(text: str) -> Any:
    """A number or a JSON list as such (`500000`, `'["Paid Search", "CTV"]'`); anything else,
    `true` and `02134` included, is the string as typed."""
    import json  # here, as in the functions below: the session-start hook imports this module
    stripped = text.strip()
    if stripped[:1] in "-0123456789[" and stripped:
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return check_value(text)
        if isinstance(parsed, (int, float, list)) and not isinstance(parsed, bool):
            return check_value(parsed)
    return check_value(text)


def check_value(value: Any) -> Any:
    import json

    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not 0 < len(value) <= MAX_ITEMS:
        raise Refused(f"a list value holds 1-{MAX_ITEMS} items, not {len(value)}")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise Refused(f"value {json.dumps(item)} is not a string or a number",
                          "values are strings, numbers, or lists of them")
        if isinstance(item, str) and not 0 < len(item.strip()) <= MAX_TEXT:
            raise Refused(f"a text value holds 1-{MAX_TEXT} characters, not {len(item)}")
    return value


def same_value(a: Any, b: Any) -> bool:
    """Lists are the same whatever their order: a repeat of the same choices."""
    import json

    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(json.dumps, a)) == sorted(map(json.dumps, b))
    if isinstance(a, (list, str)) or isinstance(b, (list, str)):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


def show_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


# -- confidence -----------------------------------------------------------------------------
def loss(days_unused: float) -> int:
    for days, lost in DECAY:
        if days_unused >= days:
            return lost
    return 0


def _days(later: datetime, earlier: str) -> float:
    return (later - clock.parse(earlier)).total_seconds() / 86400


def effective(pref: dict[str, Any], now: datetime) -> int:
    """The confidence now: the stored one less the decay not yet counted in it."""
    counted = loss(_days(clock.parse(pref["confidence_at"]), pref["last_used"]))
    due = loss(_days(now, pref["last_used"])) - counted
    return max(0, int(pref["confidence"]) - max(0, due))


def band(confidence: int) -> str:
    if confidence >= APPLY_AT:
        return "apply"
    return "suggest" if confidence >= SUGGEST_AT else "mention"


def action(pref: dict[str, Any], confidence: int) -> str:
    if pref.get("flagged"):
        return "do not use (contradicted, flagged for removal)"
    return BANDS[band(confidence)]


# -- preference rules -----------------------------------------------------------------------
def _fresh(key: str, value: Any, kind: str, level: int, stamp: str, context: str | None
           ) -> dict[str, Any]:
    return {"key": key, "value": value, "kind": kind, "confidence": level,
            "confidence_at": stamp, "original": level, "persistent": kind == "explicit",
            "learned_from": "stated" if kind == "explicit" else "session behavior",
            "context": context, "first_observed": stamp, "observation_count": 1,
            "last_used": stamp, "flagged": False, "contradictions": 0,
            "contradicted_by": None}


def _at(pref: dict[str, Any], level: int, stamp: str, used: bool = True, **changes: Any
        ) -> dict[str, Any]:
    new = {**pref, "confidence": max(0, level), "confidence_at": stamp, **changes}
    if used:
        new["last_used"] = stamp
    return new


def set_explicit(old: dict[str, Any] | None, key: str, value: Any, now: datetime,
                 context: str | None = None) -> dict[str, Any]:
    stamp = clock.iso(now)
    if old is None or not same_value(old["value"], value):
        return _fresh(key, value, "explicit", EXPLICIT, stamp, context)
    return _at(old, EXPLICIT, stamp, kind="explicit", original=EXPLICIT, persistent=True,
               learned_from="stated", flagged=False,
               context=context if context is not None else old.get("context"))


def observe(old: dict[str, Any] | None, key: str, value: Any, now: datetime,
            context: str | None = None) -> tuple[dict[str, Any], str]:
    """A behaviour seen once more. The same value adds 15, up to 85 (an explicit preference:
    up to its original 100); a different value contradicts the preference, and takes its place
    when the contradicted one is left below a first observation's 40."""
    stamp = clock.iso(now)
    if old is None:
        return _fresh(key, value, "implicit", IMPLICIT_FIRST, stamp, context), "new"
    if same_value(old["value"], value):
        cap = IMPLICIT_MAX if old["kind"] == "implicit" else int(old["original"])
        level = min(cap, effective(old, now) + IMPLICIT_STEP)
        return _at(old, level, stamp, observation_count=int(old["observation_count"]) + 1,
                   original=max(int(old["original"]), level),
                   context=context or old.get("context")), "repeat"
    contradicted = contradict(old, value, now)
    if contradicted["confidence"] < IMPLICIT_FIRST:
        return _fresh(key, value, "implicit", IMPLICIT_FIRST, stamp, context), "replaced"
    return contradicted, "contradicted"


def use(pref: dict[str, Any], now: datetime) -> dict[str, Any]:
    if pref.get("flagged"):
        raise Refused(f"preference {pref['key']!r} was contradicted and is flagged for removal",
                      f"confirm it (pref confirm {pref['key']}) or set it again")
    current = effective(pref, now)
    level = max(current, min(int(pref["original"]), current + USE_STEP))
    return _at(pref, level, clock.iso(now))


def confirm(pref: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Confirmation is the user saying it: explicit and persistent from now on."""
    return _at(pref, EXPLICIT, clock.iso(now), kind="explicit", original=EXPLICIT,
               persistent=True, flagged=False, learned_from="confirmed")


def contradict(pref: dict[str, Any], value: Any, now: datetime) -> dict[str, Any]:
    """-30 for an implicit preference; an explicit one is reset to 0 and flagged for removal.
    The time unused is not reset: a contradiction is not a use."""
    if same_value(pref["value"], value):
        raise Refused(f"{show_value(value)!r} is the current value of {pref['key']!r}; it does "
                      "not contradict it", f"to strengthen it use: pref use {pref['key']}")
    changes = {"contradictions": int(pref.get("contradictions") or 0) + 1,
               "contradicted_by": value}
    if pref["kind"] == "explicit":
        return _at(pref, 0, clock.iso(now), used=False, flagged=True, **changes)
    return _at(pref, effective(pref, now) - CONTRADICTION, clock.iso(now), used=False,
               **changes)


# -- session memory -------------------------------------------------------------------------
def session_record(session: str, key: str, value: Any, now: datetime, persistent: bool,
                   ttl_days: int = SESSION_TTL_DAYS, confidence: int | None = None,
                   context: str | None = None) -> dict[str, Any]:
    if not session.strip() or len(session) > 200:
        raise Refused("--session must be 1-200 characters", "pass the agent's session id")
    if ttl_days < 1:
        raise Refused(f"--ttl must be at least 1 day, not {ttl_days}")
    level = confidence if confidence is not None else (
        EXPLICIT if persistent else SESSION_CONFIDENCE)
    if not 0 <= level <= 100:
        raise Refused(f"--confidence is 0-100, not {level}")
    return {"session": session.strip(), "key": key, "value": value, "context": context,
            "recorded_at": clock.iso(now), "persistent": persistent, "confidence": level,
            "expires_at": None if persistent else clock.iso(now + clock.days(ttl_days))}


def confirmed_record(record: dict[str, Any]) -> dict[str, Any]:
    """The changes that confirm a session record: persistent, at the explicit confidence."""
    return {"persistent": True, "expires_at": None,
            "confidence": max(int(record["confidence"]), EXPLICIT)}


def live(record: dict[str, Any], now: datetime) -> bool:
    expires = record.get("expires_at")
    return bool(record.get("persistent")) or (expires is not None and
                                              clock.parse(expires) > now)


def load_sessions(records: list[dict[str, Any]], now: datetime,
                  limit: int = SESSIONS_LOADED) -> tuple[list[str], list[dict[str, Any]]]:
    """The last `limit` sessions among the records still live (persistent, or not yet
    expired), and their records, highest confidence first, then newest."""
    kept = [r for r in records if live(r, now)]
    latest: dict[str, str] = {}
    for record in kept:
        latest[record["session"]] = max(latest.get(record["session"], ""),
                                        record["recorded_at"])
    sessions = sorted(latest, key=lambda s: (latest[s], s), reverse=True)[:limit]
    chosen = sorted((r for r in kept if r["session"] in sessions),
                    key=lambda r: r["recorded_at"], reverse=True)
    chosen.sort(key=lambda r: -int(r["confidence"]))  # stable: newest first within a level
    return sessions, chosen


# -- privacy --------------------------------------------------------------------------------
_USER_FIELDS = ("key", "value", "context", "contradicted_by", "session")


def matches(item: dict[str, Any], text: str) -> bool:
    """Whether `text` occurs (case-insensitively) in anything the user or an agent wrote in
    the record: its key, value, context, contradicting value or session id."""
    needle = text.casefold()
    for field in _USER_FIELDS:
        value = item.get(field)
        if value is None:
            continue
        parts = value if isinstance(value, list) else [value]
        if any(needle in str(part).casefold() for part in parts):
            return True
    return False
