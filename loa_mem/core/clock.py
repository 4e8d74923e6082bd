"""The one clock. Every rule that reads the time reads `LOA_MEM_NOW` first, so hooks, tests and
audits replay exactly. Timestamps are stored as ISO 8601 UTC strings ending in `Z`, which sort
lexically in time order (the index relies on that)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

from loa_mem.core.errors import ConfigError, Refused


def now() -> datetime:
    fixed = os.environ.get("LOA_MEM_NOW")
    if fixed:
        try:
            moment = parse(fixed)
        except (ValueError, OverflowError):
            raise ConfigError(
                f"LOA_MEM_NOW={fixed!r} is not an ISO 8601 time",
                "use a form like 2026-02-01T10:30:00Z",
            ) from None
        if not FIRST_YEAR <= moment.year <= LAST_YEAR:
            raise ConfigError(
                f"LOA_MEM_NOW={fixed!r} is outside the years {FIRST_YEAR}-{LAST_YEAR}",
                "ids hold a four-digit year and expiry dates lie up to 99999 days ahead; "
                "use a time such as 2026-02-01T10:30:00Z")
        return moment
    return datetime.now(timezone.utc).replace(microsecond=0)


# The clock loa-mem accepts: ids need a four-digit year, and every date it computes from now
# (an expiry up to 99999 days ahead, a look-back window) must stay inside Python's calendar.
FIRST_YEAR, LAST_YEAR = 1970, 9000


def parse(text: str) -> datetime:
    """Parse ISO 8601; a time without an offset is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def written_epoch(text: object) -> float | None:
    """The Unix time of a text in exactly the form loa-mem writes times (`iso`:
    2026-02-01T10:30:00Z, a year from 1970 on), told without `datetime` (a cold build reads one
    per entry, and the session-start hook imports no `re`); None for any other text, including
    an impossible date, which `parse` decides."""
    if type(text) is not str or len(text) != 20 or text[4::3] != "--T::Z":
        return None
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    if not (digits.isascii() and digits.isdigit()):
        return None
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if year < 1970 or not (1 <= month <= 12 and 1 <= day <= _MONTH_DAYS[month] + leap) or \
            hour > 23 or minute > 59 or second > 59:
        return None
    # days since 1970-01-01 of a proleptic Gregorian date (the "days from civil" formula)
    shifted = year - (month <= 2)
    era, in_era = divmod(shifted, 400)
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = in_era * 365 + in_era // 4 - in_era // 100 + day_of_year
    days = era * 146097 + day_of_era - 719468
    return float(days * 86400 + hour * 3600 + minute * 60 + second)


_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_field(text: object, field: str) -> datetime:
    """Parse a timestamp read from an entry, naming the field when it is not one."""
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=timezone.utc)
    try:
        return parse(str(text))
    except ValueError:
        raise Refused(f"{field} {text!r} is not an ISO 8601 time") from None


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(now())


def days(n: float) -> timedelta:
    return timedelta(days=n)
