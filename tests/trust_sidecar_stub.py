"""TEMPORARY: the sidecar IO API of agents-contract.md, until loa_mem/sidecars.py lands."""

from __future__ import annotations

import re
from typing import Any

from loa_mem import context, yamlio
from loa_mem.errors import Refused

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_agent_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name:
        raise Refused(f"agent name {name!r} is not a safe name", "use letters, digits, - _ .")
    return name


def sidecar_rel(store: Any, agent: str) -> str:
    return context.sidecar_path(store.config.data, agent)


def load_sidecar(store: Any, agent: str) -> dict[str, Any] | None:
    path = store.top / sidecar_rel(store, agent)
    if not path.exists():
        return None
    data: dict[str, Any] = yamlio.load(path.read_text(encoding="utf-8"), sidecar_rel(store, agent))
    return data


def new_sidecar(agent: str, now_iso: str) -> dict[str, Any]:
    return {"agent": agent, "created": now_iso, "last_updated": now_iso,
            "sessions_participated": 0, "memories": [],
            "relationships": {"agrees_with": [], "disagrees_with": [], "complements": []},
            "decision_history": []}


def put_sidecar(txn: Any, store: Any, agent: str, data: dict[str, Any]) -> None:
    txn.put(sidecar_rel(store, agent), yamlio.dump(data))


def agent_names(store: Any) -> list[str]:
    return context.agent_names(str(store.top), store.config.data)
