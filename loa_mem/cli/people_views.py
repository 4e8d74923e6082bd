"""Human views of the `pref` results (JSON shapes live on the results)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loa_mem.cli.render import Block, Table
from loa_mem.people.rules import show_value

if TYPE_CHECKING:
    from loa_mem.people.commands import (
        Deleted,
        PrefChanged,
        PrefShown,
        Remembered,
        SessionRecorded,
        SessionsLoaded,
        SessionStart,
    )


def _commit(sha: str | None) -> str:
    return f" (commit {sha[:10]})" if sha else ""


def _date(stamp: str | None) -> str:
    return stamp[:10] if stamp else "-"


def _pref_line(p: dict[str, Any]) -> str:
    return (f"{p['key']} = {show_value(p['value'])}: confidence {p['confidence']}, "
            f"band {p['band']}; the agent should: {p['action']}")


def changed(result: PrefChanged) -> list[Block]:
    p = result.pref
    note = f" [{result.note}]" if result.note else ""
    return [f"{result.op}{note}: {_pref_line(p)}{_commit(result.commit)}",
            f"  {p['kind']}, {p['observation_count']} observation(s) since "
            f"{_date(p['first_observed'])}, last used {_date(p['last_used'])}"
            + (", flagged for removal" if p.get("flagged") else "")]


def got(result: PrefShown) -> list[Block]:
    return [_pref_line(result.pref)]


def _prefs_table(prefs: list[dict[str, Any]], title: str) -> Table:
    return Table(["key", "value", "confidence", "band", "agent should", "kind", "seen",
                  "first observed", "last used"],
                 [[p["key"], show_value(p["value"]), p["confidence"], p["band"], p["action"],
                   p["kind"], p["observation_count"], _date(p["first_observed"]),
                   _date(p["last_used"])] for p in prefs], title)


def _sessions_table(records: list[dict[str, Any]], title: str) -> Table:
    return Table(["session", "key", "value", "confidence", "persistent", "expires", "state"],
                 [[r["session"], r["key"], show_value(r["value"]), r["confidence"],
                   "yes" if r["persistent"] else "no", _date(r.get("expires_at")),
                   "live" if r.get("live") else "expired"] for r in records], title)


def shown(result: Remembered) -> list[Block]:
    blocks: list[Block] = [f"What loa-mem remembers about {result.user} (store: {result.folder})"]
    if not result.preferences and not result.sessions:
        return [*blocks, "nothing: no preferences and no session records"]
    if result.preferences:
        blocks.append(_prefs_table(result.preferences, "Preferences"))
    if result.sessions:
        blocks.append(_sessions_table(result.sessions, "Session records"))
    return blocks


def defaults(result: SessionStart) -> list[Block]:
    blocks: list[Block] = [f"Default settings of {result.user}"]
    if not result.applied and not result.to_confirm:
        return [*blocks, "none yet: no preference reaches 50"]
    if result.applied:
        blocks.append(_prefs_table(result.applied, "Applied without asking (80-100)"))
    if result.to_confirm:
        blocks.append(_prefs_table(result.to_confirm, "Suggested, to confirm (50-79)"))
    return blocks


def context(result: SessionStart) -> list[Block]:
    lines: list[Block] = [f"- {p['key']}: {show_value(p['value'])} (confidence "
                          f"{p['confidence']})" for p in result.applied]
    lines += [f"- {p['key']}: {show_value(p['value'])} (to confirm: ask before applying; "
              f"confidence {p['confidence']})" for p in result.to_confirm]
    lines += [f"- {r['key']}: {show_value(r['value'])} (session {r['session']}; "
              + ("persistent" if r["persistent"] else f"confidence {r['confidence']}") + ")"
              for r in result.sessions]
    return lines


def deleted(result: Deleted) -> list[Block]:
    what = f"{len(result.preferences)} preference(s) and {len(result.sessions)} session record(s)"
    blocks: list[Block] = []
    if result.preferences:
        blocks.append(_prefs_table(result.preferences, "Deleted preferences"))
    if result.sessions:
        blocks.append(_sessions_table(result.sessions, "Deleted session records"))
    blocks.append(f"deleted {what} now{_commit(result.commit)}")
    if result.purged is None:
        blocks.append("git history still holds them; add --purge to remove them from it too")
    else:
        blocks.append(f"purged: rewrote {result.purged.commits} commit(s), expired the reflogs "
                      f"and pruned unreachable objects ({result.purged.objects_before} -> "
                      f"{result.purged.objects_after} objects); the data is gone from git too")
    return blocks


def recorded(result: SessionRecorded) -> list[Block]:
    r = result.record
    until = "persistent" if r["persistent"] else f"expires {r['expires_at']}"
    said: list[Block] = [f"recorded {r['key']} = {show_value(r['value'])} for session "
                         f"{r['session']} (confidence {r['confidence']}, {until})"
                         + ("" if result.pending else _commit(result.commit))]
    if result.pending:
        said.append(f"not stored yet ({result.pending}); kept, and stored at the next session "
                    "start")
    return said


def loaded(result: SessionsLoaded) -> list[Block]:
    if not result.records:
        return ["no live session records"]
    return [_sessions_table(result.records,
                            f"Last {len(result.sessions)} session(s), by confidence")]
