"""Human views of the trust commands' results (JSON shapes live on the results)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loa_mem.cli.render import Block, Table
from loa_mem.trust.rules import moved, shown

if TYPE_CHECKING:
    from loa_mem.trust.commands import Advocate, AgentTrust, Report
    from loa_mem.trust.recording import Checked, Dissented, Overridden
    from loa_mem.trust.regret import Usefulness

HISTORY_SHOWN = 10


def _commit(sha: str | None) -> str:
    return f" (commit {sha[:10]})" if sha else " (not committed)"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _exact(value: float) -> str:
    """A depth part as stored (4 decimals, no trailing zeros), so the sum can be checked."""
    return f"{value:.4f}".rstrip("0").rstrip(".") or "0"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _new(created: bool, agent: str) -> list[Block]:
    return [f"new agent {agent}: sidecar created, on probation"] if created else []


def dissented(r: Dissented) -> list[Block]:
    d = r.depth
    where = f" in {r.round_id}" if r.round_id else ""
    return [*_new(r.created, r.agent),
            f"dissent by {r.agent}{where} recorded{_commit(r.commit)}",
            f"depth {_exact(d.depth)} = length {_exact(d.length)} ({d.words} words) + citations "
            f"{_exact(d.citation_bonus)} ({d.citations}) + novelty {_exact(d.novelty)}",
            f"trust {moved(r.score_before, r.score)}; {_n(r.rounds, 'round')}"
            + ("; on probation" if r.probation else "")]


def overridden(r: Overridden) -> list[Block]:
    return [*_new(r.created, r.agent),
            f"override of {r.agent} in {r.round_id} recorded{_commit(r.commit)}",
            f"agent output {r.agent_output.path} vs human decision {r.human_decision.path}: "
            f"similarity {r.similarity:.2f}",
            f"regret is checked after {r.deadline} (trust check-reverts --round {r.round_id})",
            f"trust {moved(r.score_before, r.score)}"]


def checked(r: Checked) -> list[Block]:
    rows = [(c.agent, c.status, c.how, c.similarity_to_agent, c.similarity_to_human,
             moved(c.score_before, c.score)) for c in r.checks]
    head = f"round {r.round_id}, final {r.final.path}" + (
        _commit(r.commit) if r.commit else "; nothing changed")
    return [head, Table(["agent", "status", "why", "sim agent", "sim human", "trust"], rows)]


def _scope(scope: str, days: int) -> str:
    return f"last {days} days" if scope == "window" else "all history"


def _history_score(value: object) -> str | None:
    return shown(value) if isinstance(value, (int, float)) else None


def standing(r: AgentTrust) -> list[Block]:
    b, days = r.breakdown, r.window_days
    lines: list[Block] = [
        f"{r.agent}: trust {shown(r.score)}"
        + ("" if r.exists else " (no sidecar yet: a new agent)")
        + (f"; on probation ({_n(r.rounds, 'round')})" if r.probation
           else f"; {_n(r.rounds, 'round')}"),
        f"impact ratio {_ratio(b.impact_ratio)}, mean depth {_ratio(b.mean_depth)} of 2 "
        f"({_n(b.dissents, 'dissent')}, {_scope(b.dissent_scope, days)}); regret ratio "
        f"{_ratio(b.regret_ratio)} ({_n(b.overrides, 'override')}, "
        f"{_scope(b.override_scope, days)})",
        f"score = .4 impact + .3 depth/2 + .3 (1 - regret); a part without data counts at "
        f"the prior {shown(b.prior)} (the start score)",
    ]
    recent = r.history[-HISTORY_SHOWN:]
    if recent:
        lines.append(Table(["time", "score", "reason", "round"],
                           [(h.get("timestamp"), _history_score(h.get("score")), h.get("reason"),
                             h.get("round_id")) for h in recent], "score history"))
    return lines


def reported(r: Report) -> list[Block]:
    if not r.agents:
        return ["no agent has a sidecar yet"]
    rows = [(a.agent, shown(a.score), "yes" if a.probation else "no", a.rounds, a.dissents,
             a.overrides, _ratio(a.breakdown.impact_ratio), _ratio(a.breakdown.mean_depth),
             _ratio(a.breakdown.regret_ratio), _held(a.usefulness)) for a in r.agents]
    u = r.usefulness
    return [Table(["agent", "score", "probation", "rounds", "dissents", "overrides",
                   "impact", "depth", "regret", "held"], rows, "agent trust"),
            f"escalation usefulness: {_held(u)} of the checked overrides held "
            f"({u.held} held, {u.regretted} regretted)"]


def _held(u: Usefulness) -> str:
    return "-" if u.ratio is None else f"{u.ratio:.2f}"


def advocate(r: Advocate) -> list[Block]:
    rows = [(c["agent"], shown(c["score"]), "yes" if c["probation"] else "no",
             f"{100 * c['probability']:.1f}%" if c["eligible"] or r.fallback else "-",
             c["excluded_because"] or "") for c in r.candidates]
    note = "; nobody was eligible, so every candidate was" if r.fallback else ""
    seed = f" (seed {r.seed})" if r.seed is not None else ""
    return [f"devil's advocate: {r.chosen}{seed}{note}",
            Table(["agent", "score", "probation", "chance", "excluded because"], rows)]
