"""Helpers for the agent sidecar and session tests: readers of what a user can read (sidecar
files, the state index, git) and the refusal check (exit 1, one line, nothing written)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loa_mem.core import yamlio
from tests import support
from tests.conftest import Cli, git

AGENTS = "grimoires/loa/agents"
STATE = "grimoires/loa/MDAN-STATE.json"
EVENTS = "grimoires/loa/memory/events.jsonl"
T0 = "2026-02-01T10:30:00Z"  # the conftest clock


def rel(agent: str) -> str:
    return f"{AGENTS}/{agent}.yaml"


def sidecar(root: Path, agent: str) -> dict[str, Any]:
    data: dict[str, Any] = yamlio.load((root / rel(agent)).read_text(encoding="utf-8"), agent)
    return data


def memory(root: Path, agent: str, memory_id: str) -> dict[str, Any] | None:
    found = [m for m in sidecar(root, agent)["memories"] if m.get("id") == memory_id]
    return found[0] if found else None


def confidences(root: Path, agent: str) -> dict[str, float]:
    return {m["id"]: m["confidence"] for m in sidecar(root, agent)["memories"]}


def state(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / STATE).read_text(encoding="utf-8"))
    return data


def write_sidecar(root: Path, agent: str, memories: list[dict[str, Any]], **more: Any) -> None:
    """A sidecar as a person (or an earlier run) left it, committed. Memories get ids m1, m2...
    in order, so the list order is their age."""
    data = {"agent": agent, "created": "2026-01-01T00:00:00Z",
            "last_updated": "2026-01-01T00:00:00Z", "sessions_participated": 7,
            "memory_seq": len(memories),
            "memories": [{"id": f"m{n + 1}", "source_session": "2026-01-01T00:00:00Z",
                          "unreinforced_sessions": 0, **m} for n, m in enumerate(memories)],
            **more}
    write_text(root, rel(agent), yamlio.dump(data))


def write_text(root: Path, path: str, text: str) -> None:
    """`text` at `path`, committed (a hand edit the user already committed)."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    git(root, "add", path)
    git(root, "commit", "-q", "-m", f"hand edit {path}")


def note(n: int, confidence: float, **more: Any) -> dict[str, Any]:
    return {"type": "observation", "content": f"Note {n}", "confidence": confidence, **more}


def session(cli: Cli, session_id: str, *agents: str, now: str | None = None) -> dict[str, Any]:
    args = [a for agent in agents for a in ("--agent", agent)]
    out: dict[str, Any] = cli.ok("session", "start", *args, "--session", session_id, "--json",
                                 now=now).json()
    return out


def end(cli: Cli, session_id: str, now: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = cli.ok("session", "end", "--session", session_id, "--json",
                                 now=now).json()
    return out


def one_session(cli: Cli, agent: str, session_id: str, *steps: list[str]) -> dict[str, Any]:
    """Start a session with `agent`, run each step (an agent subcommand with --session added),
    end it; the end's JSON for that agent."""
    session(cli, session_id, agent)
    for step in steps:
        cli.ok("agent", *step, "--session", session_id)
    outcome: dict[str, Any] = end(cli, session_id)["agents"][0]
    return outcome


def idle_sessions(cli: Cli, agent: str, count: int, prefix: str = "idle") -> list[dict[str, Any]]:
    """`count` sessions in which `agent` takes part and records nothing; each end's outcome."""
    return [one_session(cli, agent, f"{prefix}-{n}") for n in range(1, count + 1)]


def commits(root: Path) -> int:
    return support.commit_count(root)


def open_sessions(root: Path) -> dict[str, bytes]:
    """The open sessions' state files (in the git directory), byte for byte."""
    folder = root / ".git" / "loa-mem" / "sessions"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*"))} if folder.exists() else {}


@contextmanager
def nothing_written(root: Path) -> Iterator[None]:
    """No file of the tree, no commit, no git status change and no open session changes."""
    before = (support.snapshot(root), commits(root), support.porcelain(root),
              open_sessions(root))
    yield
    after = (support.snapshot(root), commits(root), support.porcelain(root),
             open_sessions(root))
    assert after == before


def refused(cli: Cli, *args: str) -> str:
    """Run a command that must be refused: exit 1, one line on stderr, nothing written."""
    with nothing_written(cli.root):
        outcome = cli(*args)
    return support.one_line_error(outcome)
