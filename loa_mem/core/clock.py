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
