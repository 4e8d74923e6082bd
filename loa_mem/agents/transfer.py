"""import -f mdan | export -f mdan: an MDAN `.sidecar.json` in and out of an agent sidecar.

Import writes `<agents.dir>/<agent>.yaml` (and its state index line) in one commit: a new agent
gets the file's sidecar as it is; an agent that has a sidecar gets what it does not hold yet
(`mdan.merge`). The result is checked against the sidecar schema before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loa_mem.agents import mdan, sidecars
from loa_mem.agents.state import load_checked, save
from loa_mem.core import clock
from loa_mem.core.errors import NotFound, NothingToDo, Refused

if TYPE_CHECKING:
    from loa_mem.memory.commands.transfer import Exported
    from loa_mem.memory.store import Store


@dataclass(frozen=True)
class SidecarImported:
    source: str
    agent: str
    path: str
    created: bool
    added: int
    held: int
    dry_run: bool = False
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "format": "mdan", "agent": self.agent, "path": self.path,
                "created_sidecar": self.created, "memories_added": self.added,
                "memories_already_held": self.held, "dry_run": self.dry_run,
                "commit": self.commit}


def _problems(data: dict[str, Any], name: str) -> None:
    from loa_mem.core import schemacheck

    found = schemacheck.problems("agent.schema.json", sidecars.plain(data))
    if found:
        raise Refused(f"{name}: {found[0].dotted or 'the sidecar'}: {found[0].message}",
                      "fix the file; nothing was written")


def _plan(store: Store, data: dict[str, Any], who: str, name: str
          ) -> tuple[dict[str, Any], bool, int, int]:
    """The sidecar after the import, whether it is new, memories added and already held."""
    incoming = mdan.to_sidecar(data, who, clock.now_iso())
    existing = load_checked(store, who)
    if existing is None:
        _problems(incoming, name)
        return incoming, True, len(incoming["memories"]), 0
    before = sidecars.plain(existing)
    added, held = mdan.merge(existing, incoming)
    if sidecars.plain(existing) == before:
        raise NothingToDo(f"{who}'s sidecar already holds everything in {name}",
                          "nothing was written")
    _problems(existing, name)
    return existing, False, added, held


def import_sidecar(store: Store, source: str, agent: str | None, actor: str, *,
                   dry_run: bool = False, commit: bool = True) -> SidecarImported:
    from loa_mem.core.sensitive import refuse_sensitive
    from loa_mem.memory.commands.transfer import read_source

    text, name = read_source(store, source)
    data = mdan.parse(text, name)
    who = mdan.agent_of(data, name, agent)
    refuse_sensitive(text, name)
    rel = sidecars.sidecar_rel(store, who)
    if dry_run:
        _, created, added, held = _plan(store, data, who, name)
        return SidecarImported(name, who, rel, created, added, held, True)
    with store.write("import", actor, commit) as txn:
        sidecar, created, added, held = _plan(store, data, who, name)
        save(txn, store, {who: sidecar})
        txn.event("agent-import", [], None, agent=who, source=name, added=added)
        txn.what = f"{who}'s sidecar from {name} ({added} memories added)"
    return SidecarImported(name, who, rel, created, added, held, commit=txn.commit_sha)


def export_sidecar(store: Store, agent: str | None) -> Exported:
    import json

    from loa_mem.memory.commands.transfer import Exported

    if not agent:
        raise Refused("export -f mdan writes one agent's sidecar", "name it: --by-agent NAME")
    who = sidecars.check_agent_name(agent)
    data = sidecars.read_sidecar(store, who)
    if data is None:
        raise NotFound(f"no such agent (no sidecar {sidecars.sidecar_rel(store, who)})",
                       "see `loa-mem agent list`")
    out = mdan.from_sidecar(sidecars.plain(data))
    return Exported("mdan", len(out["memories"]),
                    json.dumps(out, ensure_ascii=False, indent=2) + "\n")
