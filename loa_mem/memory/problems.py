"""What validate reports (a problem, the report) and the state of one run, shared by the
framework (`validate.py`), the memory entries' checks (`check.py`) and every domain's check."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from loa_mem.memory.files import GrimoireFile
from loa_mem.memory.index import Row

if TYPE_CHECKING:
    from loa_mem.memory.store import Store


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    rule: str
    message: str
    severity: str = "error"
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "id": self.id, "rule": self.rule,
                "message": self.message, "severity": self.severity}


def secret_problems(rel: str, lines: list[str], data: Any) -> Iterator[Problem]:
    """Every text of a hand-edited file that holds a secret or personal data, by its line; the
    message names the field and the kind, never the text."""
    from loa_mem.core import sensitive  # compiled only when a file is scanned

    for dotted, value, kinds in sensitive.found_in(data):
        first = value.splitlines()[0][:40] if value.strip() else value
        line = next((n + 1 for n, text in enumerate(lines) if first and first in text), 1)
        yield Problem(rel, line, "secret", f"{dotted} contains {kinds}")


@dataclass(frozen=True)
class Report:
    problems: list[Problem]
    files: int
    entries: int
    # files the features checked besides grimoire files, by kind (agent_sidecars: 3, ...)
    others: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "files": self.files, "entries": self.entries,
                "checked": self.others, "problems": [p.to_json() for p in self.problems]}


Checker: TypeAlias = "Callable[[Store, list[str] | None, dict[str, int]], Iterable[Problem]]"


@dataclass
class Seen:
    row: Row
    grimoire: GrimoireFile

    @property
    def data(self) -> dict[str, Any]:
        return self.row.data if isinstance(self.row.data, dict) else {}

    @property
    def first_line(self) -> int:
        return self.row.first_line


@dataclass
class Run:
    store: Store
    problems: list[Problem] = field(default_factory=list)
    seen: dict[str, list[Seen]] = field(default_factory=dict)
    entries: int = 0

    def add(self, seen: Seen | None, path: str, line: int, rule: str, message: str,
            severity: str = "error") -> None:
        memory_id = str(seen.data.get("id")) if seen and seen.data.get("id") else None
        self.problems.append(Problem(path, line, rule, message, severity, memory_id))
