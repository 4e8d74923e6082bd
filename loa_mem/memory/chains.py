"""Supersede chains across the whole store (pure): what must hold, and what breaks it.

A chain is linear: each entry has at most one `superseded_by`, each at most one `supersedes`,
the two directions agree, and following `superseded_by` never comes back to where it started.
Two branches that each superseded the same entry leave a fork: both replacements say
`supersedes: X`, while X names only one of them. A person settles a fork by archiving the
replacement that should not stand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChainProblem:
    id: str          # the entry the problem is reported on
    key: str         # the field the problem is about
    kind: str        # one-way · fork · cycle
    message: str
    fix: str         # the command that settles it ('' when `loa-mem repair` does)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def problems(entries: Mapping[str, dict[str, Any]]) -> list[ChainProblem]:
    """Every one-way link, fork and cycle among `entries` (id -> data; one copy per id)."""
    found: list[ChainProblem] = []
    replacements: dict[str, list[str]] = defaultdict(list)
    for memory_id, data in entries.items():
        old = _text(data.get("supersedes"))
        if old is not None and old in entries:
            replacements[old].append(memory_id)
    for memory_id, data in entries.items():
        found.extend(_one_way(memory_id, data, entries))
    for old, newer in replacements.items():
        standing = [n for n in newer if not entries[n].get("archived")]
        if len(standing) > 1:
            kept = _text(entries[old].get("superseded_by")) or sorted(standing)[0]
            for other in sorted(n for n in standing if n != kept):
                found.append(ChainProblem(
                    other, "supersedes", "fork",
                    f"{old} was superseded twice (by {kept} and by {other}), on two branches",
                    f"keep one: loa-mem archive {other} --reason superseded "
                    f"(or archive {kept} instead)"))
    found.extend(_cycles(entries))
    return found


def _one_way(memory_id: str, data: dict[str, Any],
             entries: Mapping[str, dict[str, Any]]) -> list[ChainProblem]:
    found = []
    for key, back in (("superseded_by", "supersedes"), ("supersedes", "superseded_by")):
        other = _text(data.get(key))
        if other is None or other not in entries:
            continue
        answer = _text(entries[other].get(back))
        if answer is None:
            found.append(ChainProblem(memory_id, key, "one-way",
                                      f"{key} {other}, but {other} has no {back}", ""))
        elif answer != memory_id and key == "superseded_by":
            found.append(ChainProblem(memory_id, key, "one-way",
                                      f"superseded_by {other}, but {other} supersedes {answer}",
                                      ""))
    return found


def _cycles(entries: Mapping[str, dict[str, Any]]) -> list[ChainProblem]:
    found = []
    reported: set[str] = set()
    for start in sorted(entries):
        seen = [start]
        current = _text(entries[start].get("superseded_by"))
        while current is not None and current in entries and current not in seen:
            seen.append(current)
            current = _text(entries[current].get("superseded_by"))
        if current == start and start not in reported:
            reported.update(seen)
            loop = " -> ".join([*seen, start])
            found.append(ChainProblem(start, "superseded_by", "cycle",
                                      f"supersede chain goes round in a circle: {loop}",
                                      f"break it by hand: remove superseded_by from the newest "
                                      f"entry of the circle and supersedes from {start}'s "
                                      "successor, then run `loa-mem validate`"))
    return found
