"""`loa-mem validate` coverage of the `trust` block of every agent sidecar.

The rest of a sidecar (and whether it parses at all) is the agents feature's to check; this
checks the block against `trust.schema.json` and the rules that tie its numbers together.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loa_mem.core.errors import LoaMemError
from loa_mem.memory.validate import Problem


def _wanted(store: Any, paths: list[str] | None) -> set[str] | None:
    if not paths:
        return None
    top = Path(store.top).resolve()
    wanted = set()
    for given in paths:
        path = Path(given)
        absolute = path if path.is_absolute() else Path.cwd() / path
        try:
            wanted.add(absolute.resolve().relative_to(top).as_posix())
        except ValueError:
            wanted.add(given)
    return wanted


def _consistency(block: dict[str, Any], sessions: int, probation_rounds: int
                 ) -> Iterator[str]:
    rounds = int(block.get("rounds_participated") or 0) + sessions
    # Sessions end without touching the trust block: a stale `probation: true` is rewritten at
    # the agent's next trust event, so only probation ended too early is a problem.
    if block.get("probation") is False and rounds < probation_rounds:
        yield (f"trust.probation is False but the agent has {rounds} rounds "
               f"(probation lasts {probation_rounds})")
    stats = block.get("long_term_stats") or {}
    for kind, raw in (("dissents", "dissent_history"), ("overrides", "override_history")):
        total, folded = stats.get(f"total_{kind}"), stats.get(f"folded_{kind}") or 0
        if total is not None and total < folded + len(block.get(raw) or []):
            yield (f"trust.long_term_stats.total_{kind} is {total}, fewer than the "
                   f"{folded + len(block.get(raw) or [])} recorded")


def check(store: Any, paths: list[str] | None) -> Iterator[Problem]:
    from loa_mem.agents import sidecars
    from loa_mem.trust import commands as reads

    wanted = _wanted(store, paths)
    probation_rounds = reads.settings(store).probation_rounds
    for agent in sidecars.agent_names(store):
        rel = sidecars.sidecar_rel(store, agent)
        if wanted is not None and rel not in wanted:
            continue
        try:
            data = sidecars.load_sidecar(store, agent)
        except LoaMemError:
            continue  # a sidecar that does not parse is reported by the agents feature
        if not isinstance(data, dict) or data.get("trust") is None:
            continue
        block = reads.plain(data["trust"])
        line = reads.trust_line(Path(store.top), rel)
        found = reads.schema_problems(block)
        for where, message in found:
            yield Problem(rel, line, "trust-schema", f"{where}: {message}")
        if not found:
            for message in _consistency(block, reads.sessions_of(data), probation_rounds):
                yield Problem(rel, line, "trust-rule", message, "warning")
