"""Agent sidecar files: `<agents.dir>/<agent>.yaml`, one YAML mapping per agent (spec section 8).

Reading for a write goes through a ruamel round trip, so a sidecar a person edited keeps its
comments, key order and quoting when a command rewrites it; a writer changes only the top-level
keys it owns (the agents feature: everything but `trust`; the trust feature: `trust`) and leaves
the others as loaded. `read_sidecar` is the fast PyYAML read for commands that only show data.

Key order of a new sidecar: agent, created, last_updated, sessions_participated, memory_seq,
memories, relationships, relationship_counts, decision_history (trust is appended by the trust
feature). Timestamps are ISO 8601 strings; a hand-written unquoted timestamp is read as text too.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from loa_mem.context import block as context
from loa_mem.core import clock, yamledit, yamlio
from loa_mem.core.errors import InvalidFile, Refused

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.transaction import Transaction

__all__ = ["RELATIONSHIP_KINDS", "agent_names", "agents_dir", "check_agent_name", "load_sidecar",
           "new_sidecar", "plain", "put_sidecar", "read_sidecar", "sidecar_rel"]

RELATIONSHIP_KINDS = ("agrees_with", "disagrees_with", "complements")


def check_agent_name(name: str) -> str:
    """`name` when it is a safe agent name (it becomes a file name and a YAML key on every
    platform: no path separators, no leading dot; `context.agents_problem`); Refused
    otherwise."""
    from loa_mem.core.sensitive import refuse_sensitive

    if context.agents_problem((name,)):
        raise Refused("the agent name is not allowed",
                      "use 1-64 letters, digits, '-' or '_', starting with a letter or digit")
    refuse_sensitive(name, "the agent name")
    return name


def agents_dir(store: Store) -> str:
    return context.agents_dir(store.config.data)


def state_index_rel(store: Store) -> str:
    return str(store.config.section("agents").get("state_index") or
               "grimoires/loa/MDAN-STATE.json")


def sidecar_rel(store: Store, agent: str) -> str:
    """The sidecar's path relative to the store root."""
    return context.sidecar_path(store.config.data, check_agent_name(agent))


def agent_names(store: Store) -> list[str]:
    """Agents that have a sidecar, sorted."""
    return [n for n in context.agent_names(str(store.top), store.config.data)
            if not context.agents_problem((n,))]


def sidecar_text(store: Store, agent: str) -> tuple[str, str] | None:
    rel = sidecar_rel(store, agent)
    try:
        return rel, (store.top / rel).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidFile(rel, 1, 1, "not UTF-8 text", "fix or remove the file") from None


def _mapping(data: Any, rel: str) -> dict[str, Any]:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidFile(rel, 1, 1, "a sidecar must be a YAML mapping",
                          "fix the file (see `loa-mem validate`); nothing was written")
    return data


def load_sidecar(store: Store, agent: str) -> dict[str, Any] | None:
    """The sidecar for a read-modify-write (a ruamel round-trip mapping, a dict); None when
    absent; InvalidFile (file, line, column) when it does not parse or is not a mapping."""
    found = sidecar_text(store, agent)
    if found is None:
        return None
    return round_trip_mapping(*found)


def round_trip_mapping(rel: str, text: str) -> dict[str, Any]:
    """A sidecar's text as a ruamel round-trip mapping (comments kept for writing it back)."""
    return _mapping(yamledit.round_trip_load(text, rel), rel)


def read_sidecar(store: Store, agent: str) -> dict[str, Any] | None:
    """The sidecar as plain data (fast, read-only); None when absent."""
    found = sidecar_text(store, agent)
    if found is None:
        return None
    rel, text = found
    return _mapping(yamlio.load(text, rel), rel)


def new_sidecar(agent: str, now_iso: str) -> dict[str, Any]:
    """An empty sidecar (a new agent, no sessions yet)."""
    return {"agent": check_agent_name(agent), "created": now_iso, "last_updated": now_iso,
            "sessions_participated": 0, "memory_seq": 0, "memories": [],
            "relationships": {kind: [] for kind in RELATIONSHIP_KINDS},
            "relationship_counts": {}, "decision_history": []}


def put_sidecar(txn: Transaction, store: Store, agent: str, data: dict[str, Any]) -> None:
    """Write `data` (as loaded by `load_sidecar`, or `new_sidecar`, changed in place) with the
    transaction: comments and key order of a loaded sidecar survive."""
    txn.put(sidecar_rel(store, agent), yamledit.round_trip_dump(data))


def plain(value: Any) -> Any:
    """Plain dicts, lists and scalars from a round-trip document; timestamps as ISO text."""
    return yamledit.plain(value, _iso)


def _iso(value: datetime) -> str:
    return clock.iso(value if value.tzinfo else value.replace(tzinfo=timezone.utc))
