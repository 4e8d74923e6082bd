"""Pure rules of a Loa memory entry: ids, categories, floors, TTL, summaries, effectiveness.

Nothing here touches files, git or the clock; callers pass `now` in. Entries are plain dicts in
the key order of Loa's example, because they are written to YAML as they are.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import NamedTuple

from loa_mem.core import clock
from loa_mem.core.errors import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CATEGORIES = ("fact", "decision", "learning", "error", "preference")
ARCHIVE_REASONS = ("expired", "superseded", "manual", "ineffective")
# the sessions an entry records when it was written outside any session: a developer's
# `remember` without --session or LOA_MEM_SESSION, `capture` and a tool-result hook whose
# source names none (none of them a conversation: `neighbours` leaves them out)
NO_SESSION = "manual"
CAPTURE_SESSION = "capture"
HOOK_SESSION = "hook"
NO_SESSIONS = (NO_SESSION, CAPTURE_SESSION, HOOK_SESSION)
MAX_CONTENT = 2000
MAX_SUMMARY = 200
# The day, then a part no other clone or branch can mint: 8 random base32 characters (40 bits;
# two clones that each mint 10,000 ids on one day collide with odds of about 1 in 10,000).
# The older per-day sequence (3+ digits) stays valid everywhere.
ID_TEXT = r"MEM-\d{8}-(?:[a-z2-7]{6,}|\d{3,})"
ID_PATTERN = re.compile(r"^MEM-(\d{8})-([a-z2-7]{6,}|\d{3,})$")
LEGACY_ID_PATTERN = re.compile(r"^MEM-(\d{8})-(\d{3,})$")
ID_IN_TEXT = re.compile(rf"\b{ID_TEXT}\b")
_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
_RANDOM_PART = 8
TAG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TTL_PATTERN = re.compile(r"^(permanent|[1-9][0-9]{0,4}d)$")
LINES_PATTERN = re.compile(r"^[1-9][0-9]*(-[1-9][0-9]*)?$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class CategoryRule(NamedTuple):  # not a dataclass: see `core.located`
    name: str
    ttl: str
    floor: float
    storage_file: str


# Each category's default TTL and confidence floor (Loa's memory_schema defaults; a project's
# config may change them). The config's defaults and the `init` template are built from these.
DEFAULT_RULES = (
    CategoryRule("fact", "permanent", 0.8, "facts.yaml"),
    CategoryRule("decision", "permanent", 0.9, "decisions.yaml"),
    CategoryRule("learning", "90d", 0.7, "learnings.yaml"),
    CategoryRule("error", "30d", 0.6, "errors.yaml"),
    CategoryRule("preference", "permanent", 0.5, "preferences.yaml"),
)


class NewEntry(NamedTuple):
    """What a caller asks to remember, before it becomes an entry."""

    content: str
    category: str
    summary: str | None = None
    confidence: float | None = None
    tags: tuple[str, ...] = ()
    ttl: str | None = None
    session: str | None = None
    agent: str | None = None
    phase: str | None = None
    file_path: str | None = None
    line_range: str | None = None
    related: tuple[str, ...] = ()


def format_id(day: str, sequence: int) -> str:
    """A legacy id (the merge driver renumbers a legacy collision within its own form)."""
    return f"MEM-{day}-{sequence:03d}"


def new_id(day: str) -> str:
    """A fresh id for `day` (YYYYMMDD). The random part always holds a letter, so a new id is
    never mistaken for a legacy sequence number."""
    while True:
        # 256 is a multiple of 32: each byte picks one of the 32 characters with equal odds
        part = "".join(_BASE32[byte % 32] for byte in os.urandom(_RANDOM_PART))
        if not part.isdigit():
            return f"MEM-{day}-{part}"


def unused_id(memory_id: str, used: set[str]) -> str:
    """A new id of `memory_id`'s day that is not in `used` (and is added to it): what a copy
    gets when two entries came to share an id."""
    day = memory_id.split("-")[1]
    while True:
        fresh = new_id(day)
        if fresh not in used:
            used.add(fresh)
            return fresh


def split_legacy(memory_id: str) -> tuple[str, int] | None:
    """(day, sequence) of a legacy `MEM-YYYYMMDD-NNN` id, None for any other id."""
    match = LEGACY_ID_PATTERN.match(memory_id)
    return (match.group(1), int(match.group(2))) if match else None


def id_order(memory_id: str) -> tuple[str, int, int, str]:
    """Sort key: by day, legacy sequences in number order first, then the others by text."""
    legacy = split_legacy(memory_id)
    if legacy is not None:
        return legacy[0], 0, legacy[1], ""
    match = ID_PATTERN.match(memory_id)
    return (match.group(1), 1, 0, match.group(2)) if match else ("", 2, 0, memory_id)


def check_id(memory_id: str) -> str:
    if not ID_PATTERN.match(memory_id):
        raise Refused("that is not a memory id",
                      "ids look like MEM-20260201-k7x2mq4a (older ones MEM-20260201-001)")
    return memory_id


def ttl_days(ttl: str) -> int | None:
    """Days of a TTL, or None when permanent."""
    if not isinstance(ttl, str) or not TTL_PATTERN.fullmatch(ttl):
        raise Refused("the ttl (--ttl) is not valid", "use Nd (for example 30d) or permanent")
    return None if ttl == "permanent" else int(ttl[:-1])


def expires_at(timestamp: str, ttl: str) -> str | None:
    length = ttl_days(ttl)
    if length is None:
        return None
    start = clock.parse_field(timestamp, "source.timestamp")
    try:
        return clock.iso(start + clock.days(length))
    except OverflowError:
        raise Refused(f"ttl {ttl} from {clock.iso(start)} ends after the year 9999",
                      "use a shorter ttl or permanent") from None


def derive_summary(content: str) -> str:
    """First sentence of the content, cut to the summary limit."""
    text = " ".join(content.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) <= MAX_SUMMARY:
        return first
    return first[: MAX_SUMMARY - 1].rstrip() + "…"


def normalize(content: str) -> str:
    """What counts as the same content for duplicate detection: case and spacing ignored."""
    return " ".join(content.casefold().split()).rstrip(".!? ")


def check_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    for tag in tags:
        if not isinstance(tag, str) or not TAG_PATTERN.fullmatch(tag):
            suggestion = "-".join(re.findall(r"[a-z0-9]+", str(tag).lower()))
            hint = f"tags are lowercase kebab-case, for example {suggestion!r}" if suggestion else (
                "tags are lowercase kebab-case, for example 'database-choice'")
            raise Refused(f"tag {tag!r} is not lowercase kebab-case", hint)
    return tuple(dict.fromkeys(tags))


def check_confidence(confidence: float, rule: CategoryRule) -> float:
    if not 0 <= confidence <= 1:
        raise Refused(f"confidence {confidence} is outside 0..1",
                      "give a number such as 0.85 or 85%")
    if confidence < rule.floor:
        raise Refused(
            f"confidence {confidence} is under the {rule.name} floor of {rule.floor}",
            f"raise it to at least {rule.floor} or choose another category",
        )
    return confidence


def check_line_range(line_range: str) -> str:
    """`A` or `A-B` with 1 <= A <= B."""
    if not LINES_PATTERN.fullmatch(line_range):
        raise Refused("the line range (--lines) is not valid", "use A-B, for example 10-24")
    first, _, last = line_range.partition("-")
    if last and int(last) < int(first):
        raise Refused("the line range (--lines) ends before it starts",
                      f"use {last}-{first}")
    return line_range


def check_text(value: str | None, what: str) -> str | None:
    """Text that can be stored: Unicode scalar values only (a lone surrogate, which a JSON
    escape or an undecodable argument can carry, cannot be written as UTF-8), and no NUL."""
    if value is None:
        return None
    for position, char in enumerate(value):
        if "\ud800" <= char <= "\udfff":
            raise Refused(f"{what} holds a lone surrogate (U+{ord(char):04X} at character "
                          f"{position + 1}), which is not text", "send valid Unicode text")
        if char == "\x00":
            raise Refused(f"{what} holds a NUL character (at character {position + 1})",
                          "git cannot record it (commit messages quote the summary); remove it")
    return value


def check_content(content: str) -> str:
    check_text(content, "content")
    if not content.strip():
        raise Refused("content is empty", "say what to remember")
    if len(content) > MAX_CONTENT:
        raise Refused(
            f"content is {len(content)} characters, over the limit of {MAX_CONTENT}",
            "shorten it or split it into several entries",
        )
    return content


def check_category(category: str) -> str:
    if category not in CATEGORIES:
        raise Refused("unknown category (-c)", f"use one of: {', '.join(CATEGORIES)}")
    return category


def build_entry(request: NewEntry, memory_id: str, rule: CategoryRule,
                now: datetime) -> dict[str, Any]:
    """The entry as it is written, following the Loa creation steps in order."""
    content = check_content(request.content)
    for value, what in ((request.summary, "summary"), (request.session, "session"),
                        (request.agent, "agent"), (request.phase, "phase"),
                        (request.file_path, "file"), (request.ttl, "ttl"), *(
                            (tag, "tag") for tag in request.tags)):
        check_text(value, what)
    summary = request.summary if request.summary is not None else derive_summary(content)
    if not summary.strip() or len(summary) > MAX_SUMMARY:
        raise Refused(f"summary must be 1 to {MAX_SUMMARY} characters", "shorten --summary")
    confidence = check_confidence(
        request.confidence if request.confidence is not None else max(0.8, rule.floor), rule)
    ttl = request.ttl or rule.ttl
    timestamp = clock.iso(now)
    source: dict[str, Any] = {"session_id": request.session or NO_SESSION, "timestamp": timestamp}
    for key, value in (("agent", request.agent), ("phase", request.phase),
                       ("file_path", request.file_path), ("line_range", request.line_range)):
        if value:
            source[key] = value
    if request.line_range is not None:
        check_line_range(request.line_range)
    entry: dict[str, Any] = {
        "id": memory_id,
        "category": request.category,
        "content": content,
        "summary": summary,
        "confidence": confidence,
        "source": source,
        "ttl": ttl,
        "expires_at": expires_at(timestamp, ttl),
        "tags": list(check_tags(request.tags)),
    }
    if request.related:
        entry["related_memories"] = list(dict.fromkeys(request.related))
    return entry


def effectiveness_score(successes: int, applications: int) -> int | None:
    if applications <= 0:
        return None
    # Half up, as people round (1 success in 8 is 13), not Python's round-half-to-even (12).
    return (200 * successes + applications) // (2 * applications)


def tier(effectiveness: dict[str, Any] | None) -> str:
    """Effectiveness tier: high, normal, review, ineffective, or untested.

    An entry stays untested until some outcome (a success or a failure) is recorded: recalls
    alone count applications, and an entry nobody reported on must not drift towards archival.
    """
    effectiveness = effectiveness or {}
    applications = int(effectiveness.get("applications") or 0)
    outcomes = int(effectiveness.get("successes") or 0) + int(effectiveness.get("failures") or 0)
    score = effectiveness.get("score")
    if applications == 0 or score is None or outcomes == 0:
        return "untested"
    if score >= 80:
        return "high"
    if score >= 50:
        return "normal"
    if score >= 20 or applications < 3:
        return "review"
    return "ineffective"


def is_expired(entry: dict[str, Any], now_iso: str) -> bool:
    expiry = entry.get("expires_at")
    return bool(expiry) and clock.iso(clock.parse_field(expiry, "expires_at")) <= now_iso


def state(entry: dict[str, Any], in_archive: bool, now_iso: str) -> str:
    """active, expired, superseded or archived (the first that holds, from the last)."""
    if in_archive or entry.get("archived"):
        return "archived"
    if entry.get("superseded_by"):
        return "superseded"
    if is_expired(entry, now_iso):
        return "expired"
    return "active"


def is_active(entry: dict[str, Any]) -> bool:
    return not entry.get("archived") and not entry.get("superseded_by")
