"""The working set's rules (pure): the manifest protocol, the eviction actions, hotness and the
glob of `working_set.keep`.

Hotness = .3 recent touches + .2 in working set + .3 hot-listed + .2 pinned. Recent touches
falls linearly from 1 (touched this turn) to 0 (untouched for `untouched_turns` turns, 10 when
that rule is off); in working set is 1 for a hot file that is not on the cold list, and for a
pinned file.
"""

from __future__ import annotations

import re
from functools import cache

PROTOCOL = "MEMORY-MGMT/0.1"
ACTIONS = ("delete_from_working_set", "summarize_then_evict", "archive", "compress")
WEIGHTS = {"recent_touches": 0.3, "in_working_set": 0.2, "model_hot_listed": 0.3,
           "user_pinned": 0.2}
BUDGET_THRESHOLD = 0.8


def hotness(*, turns_since_touch: int | None, horizon: int, hot_listed: bool, cold_listed: bool,
            pinned: bool) -> tuple[float, dict[str, float]]:
    """(hotness, its factors) of one file."""
    recent = 0.0
    if turns_since_touch is not None:
        recent = max(0.0, 1 - turns_since_touch / horizon)
    factors = {
        "recent_touches": round(recent, 2),
        "in_working_set": 1.0 if (hot_listed and not cold_listed) or pinned else 0.0,
        "model_hot_listed": 1.0 if hot_listed else 0.0,
        "user_pinned": 1.0 if pinned else 0.0,
    }
    value = sum(WEIGHTS[k] * v for k, v in factors.items())
    return round(value, 2), factors


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def glob_match(pattern: str, path: str) -> bool:
    """Git-style glob: `*` within a name, `**/` any number of folders."""
    return bool(_glob(pattern).match(path))
