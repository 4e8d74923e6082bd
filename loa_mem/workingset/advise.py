"""advise: the model's hot and cold hints, and loa-mem's answer to each (spec section 7).

One call is one turn. The rules, applied in this order to each path:

1. A path named twice (hot and cold), missing, a directory or outside the store is refused by
   name before anything is written.
2. A file the user referenced is **promoted**: put on the hot list even if the model did not
   mention it or called it cold.
3. A hot hint is **honored**: the file joins (or stays on) the hot list, its touches go up, and
   it leaves the cold list.
4. A cold hint on a file that must be kept (the config, the events log, the decisions file,
   loa-mem's own files, `working_set.keep` patterns) or on a pinned file is **overridden**.
5. A cold hint is **deferred** when acting on it could lose something or the signal is weak:
   `compress` of a file whose current bytes are not committed (git could not bring them back)
   or that is not UTF-8 text, and any cold hint on a file the model hot-listed within the last
   `defer_turns` turns (a flip-flop: hint again to confirm).
6. Otherwise the cold hint is **honored**: the file goes on the cold list, for `gc` to act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import NothingToDo, Refused
from loa_mem.core.git import uncommitted
from loa_mem.workingset import manifests as ws
from loa_mem.workingset import meta
from loa_mem.workingset import rules as ws_rules
from loa_mem.workingset.collect_plan import compress_blocker

HONORED, DEFERRED, OVERRIDDEN, PROMOTED = "honored", "deferred", "overridden", "promoted"


@dataclass(frozen=True)
class Hint:
    path: str
    why: str | None = None
    action: str | None = None
    postmortem: str | None = None


@dataclass(frozen=True)
class AdviseRequest:
    why: str | None = None
    hot: tuple[Hint, ...] = ()
    cold: tuple[Hint, ...] = ()
    referenced: tuple[str, ...] = ()
    trigger_gc: bool = False


@dataclass(frozen=True)
class MemoryAction:
    path: str
    model_suggested: str | None
    action_taken: str
    reason: str
    suggested_action: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "model_suggested": self.model_suggested,
                "suggested_action": self.suggested_action, "action_taken": self.action_taken,
                "reason": self.reason}


@dataclass(frozen=True)
class Advised:
    turn: int
    memory_actions: list[MemoryAction]
    hot: int
    cold: int
    commit: str | None = None
    gc: Any = None
    sidecars: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "memory_actions": [a.to_json() for a in self.memory_actions],
                "hot": self.hot, "cold": self.cold, "sidecars": self.sidecars,
                "commit": self.commit, "gc": self.gc.to_json() if self.gc is not None else None}


def request_from_json(data: Any) -> AdviseRequest:
    """A `memory.advise` object (`{hot, cold, trigger_gc, why}`), checked against its schema."""
    from loa_mem.core import schemacheck

    if not isinstance(data, dict):
        raise Refused("memory.advise input must be a JSON object",
                      'for example {"why": "...", "cold": [{"path": "log.txt"}]}')
    found = schemacheck.problems("memory_advise.schema.json", data)
    if found:
        first = found[0]
        raise Refused(f"memory.advise input: {first.dotted or '(top level)'}: {first.message}",
                      "see `loa-mem advise --help` for the shape")
    hot = tuple(Hint(h["path"], h.get("why")) for h in data.get("hot") or [])
    cold = tuple(Hint(c["path"], c.get("why"),
                      c.get("suggested_action") or "delete_from_working_set", c.get("postmortem"))
                 for c in data.get("cold") or [])
    return AdviseRequest(data["why"], hot, cold, (), bool(data.get("trigger_gc")))


@dataclass
class _Turn:
    store: Any
    settings: ws.Settings
    manifests: ws.Manifests
    now: str
    actor: str
    actions: list[MemoryAction] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)

    def answer(self, path: str, suggested: str | None, taken: str, reason: str,
               action: str | None = None) -> None:
        self.actions.append(MemoryAction(path, suggested, taken, reason, action))
        self.touched.append(path)


def _resolve(store: Any, request: AdviseRequest) -> AdviseRequest:
    from loa_mem.core.sensitive import screen

    screen([("--why", request.why)] + [("the why of a hint", h.why)
                                       for h in request.hot + request.cold]
           + [("--postmortem", h.postmortem) for h in request.cold])
    def located(hint: Hint) -> Hint:
        if hint.action is not None and hint.action not in ws_rules.ACTIONS:
            plain = re.fullmatch(r"[a-z][a-z_-]{0,39}", hint.action)  # a word, never a secret
            named = f" {hint.action!r}" if plain else ""
            raise Refused(f"unknown --action{named} for {hint.path}",
                          f"use one of: {', '.join(ws_rules.ACTIONS)}")
        return Hint(ws.existing_file(store, hint.path), hint.why, hint.action,
                    _postmortem(hint))

    def explained(hint: Hint) -> Hint:
        why = hint.why or request.why
        if not why or not why.strip():
            raise Refused(f"say why for {hint.path}", "pass --why (for each hint, or once)")
        return Hint(hint.path, why.strip(), hint.action, hint.postmortem)

    hot = tuple(located(h) for h in request.hot)
    cold = tuple(located(h) for h in request.cold)
    referenced = tuple(dict.fromkeys(ws.existing_file(store, p) for p in request.referenced))
    named = [h.path for h in hot + cold]
    twice = sorted({p for p in named if named.count(p) > 1})
    if twice:
        raise Refused(f"{twice[0]} is hinted more than once in one call",
                      "give each path one hint: hot or cold")
    return AdviseRequest(request.why, tuple(explained(h) for h in hot),
                         tuple(explained(h) for h in cold), referenced, request.trigger_gc)


def _postmortem(hint: Hint) -> str | None:
    """An archived attempt keeps one line on why it failed; no other hint takes one."""
    if hint.action != "archive":
        if hint.postmortem is not None:
            raise Refused(f"a postmortem is for --action archive, not for {hint.path}",
                          "put --postmortem after --cold PATH --action archive")
        return None
    line = (hint.postmortem or "").strip()
    if not line:
        raise Refused(f"archiving {hint.path} needs a postmortem: one line on why the "
                      "attempt failed", "pass --postmortem \"...\" after --action archive; "
                      "nothing was written")
    if "\n" in line:
        raise Refused(f"the postmortem of {hint.path} is more than one line",
                      "give one line; nothing was written")
    return line


def _hot(turn: _Turn, hint: Hint, referenced: bool) -> None:
    m = turn.manifests
    was_cold = m.drop_cold(hint.path)
    m.touch(hint.path, hint.why or "", turn.now)
    reason = "on the hot list" + (" (left the cold list)" if was_cold else "")
    if referenced:
        reason += "; the user referenced it too"
    turn.answer(hint.path, "hot", HONORED, reason)


def _promote(turn: _Turn, path: str, cold: Hint | None) -> None:
    m = turn.manifests
    m.drop_cold(path)
    hot = m.hot_item(path)
    m.touch(path, str(hot.get("why")) if hot is not None else "the user referenced it",
            turn.now)
    reason = "the user referenced it" + ("; kept hot over the cold hint" if cold else "")
    turn.answer(path, "evict" if cold else None, PROMOTED, reason,
                cold.action if cold else None)


def _cold(turn: _Turn, hint: Hint, not_committed: set[str]) -> None:
    m, s = turn.manifests, turn.settings
    action = hint.action or "delete_from_working_set"
    keep = ws.must_keep(turn.store, s, hint.path)
    if keep is None and meta.is_pinned(Path(turn.store.top), hint.path):
        keep = f"pinned (pin: true in {meta.sidecar_path(hint.path)}); unpin it to let it go"
    if keep is not None:
        m.drop_cold(hint.path)
        turn.answer(hint.path, "evict", OVERRIDDEN, keep, action)
        return
    blocker = compress_blocker(Path(turn.store.top), hint.path, not_committed) if (
        action == "compress") else None
    hot = m.hot_item(hint.path)
    if blocker is None and hot is not None and isinstance(hot.get("last_turn"), int):
        since = m.turn - int(hot["last_turn"])
        if since <= s.defer_turns:
            blocker = (f"hot-listed {since} turn(s) ago: a quick change of mind; hint it cold "
                       "again to confirm")
    if blocker is not None:
        turn.answer(hint.path, "evict", DEFERRED, blocker, action)
        return
    m.set_cold(hint.path, hint.why or "", action, hint.postmortem)
    postmortem = f"; postmortem: {hint.postmortem}" if hint.postmortem else ""
    turn.answer(hint.path, "evict", HONORED, f"on the cold list for gc ({action}){postmortem}",
                action)


def _sidecars(turn: _Turn, txn: Any) -> list[str]:
    """Create missing sidecars of the files this turn named and refresh their hotness."""
    top, written = Path(turn.store.top), []
    for path in dict.fromkeys(turn.touched):
        if ws.own_file_reason(turn.store, turn.settings, path):
            continue
        sidecar = meta.ensure(top, path, turn.actor)
        sidecar.set("hotness", ws.hotness(turn.manifests, path, sidecar.pinned)[0])
        sidecar.stamp(turn.now)
        if sidecar.changed:
            txn.put(sidecar.path, sidecar.text())
            written.append(sidecar.path)
    return written


def _what(turn: _Turn) -> str:
    counts: dict[str, int] = {}
    for action in turn.actions:
        counts[action.action_taken] = counts.get(action.action_taken, 0) + 1
    return f"turn {turn.manifests.turn}: " + ", ".join(f"{n} {k}" for k, n in counts.items())


def _body(actions: list[MemoryAction]) -> str:
    return "\n".join(f"- {a.action_taken}: {a.path} ({a.model_suggested or 'not mentioned'}"
                     f"{', ' + a.suggested_action if a.suggested_action else ''}): {a.reason}"
                     for a in actions)


def _apply(turn: _Turn, request: AdviseRequest, txn: Any) -> None:
    m = turn.manifests
    m.next_turn()
    referenced = set(request.referenced)
    cold_by_path = {h.path: h for h in request.cold}
    not_committed = uncommitted(Path(turn.store.top),
                                [h.path for h in request.cold if h.action == "compress"])
    for hint in request.hot:
        _hot(turn, hint, hint.path in referenced)
    hinted_hot = {h.path for h in request.hot}
    for path in request.referenced:
        if path not in hinted_hot:
            _promote(turn, path, cold_by_path.get(path))
    for hint in request.cold:
        if hint.path not in referenced:
            _cold(turn, hint, not_committed)


def advise(store: Any, request: AdviseRequest, actor: str, commit: bool = True,
           ) -> Advised:
    s = ws.settings(store)
    request = _resolve(store, request)
    if not (request.hot or request.cold or request.referenced):
        if request.trigger_gc:
            from loa_mem.workingset.collect import gc

            result = gc(store, "explicit", None, False, actor, commit)
            return Advised(0, [], 0, 0, None, result)
        raise NothingToDo("no hints given",
                          "pass --hot PATH, --cold PATH, --referenced PATH or --trigger-gc")
    with store.write("advise", actor, commit) as txn:
        turn = _Turn(store, s, ws.Manifests(store, s), clock.now_iso(), actor)
        _apply(turn, request, txn)
        for rel, text in turn.manifests.texts(turn.now).items():
            txn.put(rel, text)
        sidecars = _sidecars(turn, txn)
        txn.event("advise", [], request.why, turn=turn.manifests.turn,
                  memory_actions=[a.to_json() for a in turn.actions],
                  trigger_gc=request.trigger_gc or None)
        txn.what = _what(turn)
        txn.body = _body(turn.actions)
    advised = Advised(turn.manifests.turn, turn.actions, len(turn.manifests.hot_paths()),
                      len(turn.manifests.cold_paths()), txn.commit_sha, None, sidecars)
    if request.trigger_gc:
        from loa_mem.workingset.collect import gc

        result = gc(store, "explicit", None, False, actor, commit)
        advised = Advised(advised.turn, advised.memory_actions, advised.hot, advised.cold,
                          advised.commit, result, sidecars)
    return advised
