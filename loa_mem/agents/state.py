"""The agent sidecars as the commands read and write them: checked on read, saved with their
lines of the state index (`agents.state_index`, the MDAN-STATE.json `agent_sidecars` block)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from loa_mem.agents import rules, sidecars
from loa_mem.agents.check import checked_sidecar
from loa_mem.agents.sidecars import state_index_rel
from loa_mem.core.errors import InvalidFile

if TYPE_CHECKING:
    from loa_mem.memory.store import Store
    from loa_mem.memory.transaction import Transaction

__all__ = ["load_checked", "read_checked", "save", "settings", "state_index_rel"]


def settings(store: Store) -> rules.Settings:
    return rules.Settings.of(store.config.section("agents"))


def save(txn: Transaction, store: Store, changed: dict[str, dict[str, Any]]) -> None:
    """Write the changed sidecars and their lines of the state index (other keys of the index
    file, and other agents' lines, stay as they are)."""
    rel = sidecars.state_index_rel(store)
    path = store.top / rel
    state: dict[str, Any] = {}
    if path.exists():
        try:
            state = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as error:
            raise InvalidFile(rel, getattr(error, "lineno", 1), getattr(error, "colno", 1),
                              "not valid JSON", "fix or delete it; it is rebuilt") from None
        if not isinstance(state, dict):
            raise InvalidFile(rel, 1, 1, "expected a JSON object", "fix or delete it")
    index = state.get("agent_sidecars")
    index = dict(index) if isinstance(index, dict) else {}
    for agent, data in changed.items():
        sidecars.put_sidecar(txn, store, agent, data)
        index[agent] = {"path": sidecars.sidecar_rel(store, agent),
                        "last_updated": str(data.get("last_updated")),
                        "memory_count": len(rules.memories(data)),
                        "sessions": int(data.get("sessions_participated") or 0)}
    state["agent_sidecars"] = dict(sorted(index.items()))
    txn.put(rel, json.dumps(state, indent=2, ensure_ascii=False) + "\n")


def load_checked(store: Store, agent: str) -> dict[str, Any] | None:
    """The sidecar for a read-modify-write (None when absent); InvalidFile when it does not
    parse or `validate` finds an error in it, and then nothing is written."""
    found = checked_sidecar(store, agent)
    return None if found is None else sidecars.round_trip_mapping(*found[:2])


def read_checked(store: Store, agent: str) -> dict[str, Any] | None:
    """The sidecar as plain data (None when absent), checked like `load_checked`."""
    found = checked_sidecar(store, agent)
    return None if found is None else found[2]
