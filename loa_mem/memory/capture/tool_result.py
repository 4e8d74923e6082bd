"""`capture tool-result`: a failed Bash call becomes an error memory; its fix is recorded.

A failure is known by its signature (the command and its first error line, see
`rules.error_signature`). A repeat of a known error counts on that entry (`occurrences`,
`last_seen`) instead of adding one, and reopens it if it was fixed. The next success of the
same command records `fixed_at` on its open errors. Every stderr line is screened on its own: a
line that holds a secret or personal data is withheld, naming only what it looked like.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from loa_mem.core import clock
from loa_mem.core.errors import Refused
from loa_mem.core.sensitive import first_finding
from loa_mem.memory import rules as model
from loa_mem.memory.capture import open_errors, rules
from loa_mem.memory.capture.sources import Captured, gate
from loa_mem.memory.commands.remember import screen
from loa_mem.memory.files import signature_of
from loa_mem.memory.index import Row
from loa_mem.memory.store import Store

SOURCE = "tool-result"
_LIVE = ("in_archive=0 AND retired=0 AND superseded_by IS NULL AND category='error' "
         "AND (expires_at IS NULL OR expires_at>?) AND ")


def withheld(line: str, what: str = "line") -> str:
    kind = first_finding(line)
    return f"[{what} withheld: it looks like it contains {kind}]" if kind else line


def parse_input(text: str) -> rules.ToolResult | None:
    try:
        data = json.loads(text)
    except ValueError:
        raise Refused("stdin is not JSON: capture tool-result reads the input of a Claude Code "
                      "PostToolUse or PostToolUseFailure hook", "run it from the hook that "
                      "`loa-mem hooks install` writes; nothing was written") from None
    if not isinstance(data, dict):
        raise Refused("stdin is not a JSON object: capture tool-result reads a hook's input",
                      "run it from the hook that `loa-mem hooks install` writes; nothing was "
                      "written")
    return rules.parse_hook(data)


def capture_tool_result(store: Store, text: str, if_enabled: bool, actor: str,
                        commit: bool = True) -> Captured:
    result = parse_input(text)
    if result is None:
        return Captured(SOURCE, note="not a finished Bash call: nothing to capture")
    off = gate(store, "errors", if_enabled)
    if off:
        return Captured(SOURCE, off=off)
    try:
        if result.failed:
            return _failure(store, result, actor, commit)
        return _success(store, result, actor, commit)
    finally:
        refresh_open_errors(store)


def _known(store: Store, signature: str) -> Row | None:
    rows = store.index.where(_LIVE + "json_extract(data, '$.capture.signature')=? ORDER BY id",
                             (clock.now_iso(), signature))
    return rows[0] if rows else None


def _new_error(store: Store, result: rules.ToolResult, first: str, signature: str
               ) -> dict[str, Any]:
    keep = int(store.config.capture["stderr_lines"])
    lines = [withheld(line) for line in result.lines]
    more = [line for line in lines if line.strip() != first][:keep - 1]
    command = withheld(result.command, "command")
    tags = tuple(t for t in ("auto-capture", rules.program_tag(result.command)) if t)
    summary = rules.cut(f"`{command}` fails: {first}", model.MAX_SUMMARY)
    request = model.NewEntry(
        content=rules.error_content(command, result.exit_code, first, more), category="error",
        summary=summary, tags=tags, session=result.session or model.HOOK_SESSION,
        phase="tool-result")
    screen(request)
    entry = model.build_entry(request, "MEM-00000000-000", store.config.rule("error"),
                              clock.now())
    entry["capture"] = {"source": SOURCE, "signature": signature, "command": rules.cut(
        command, 500), "command_key": rules.command_key(result.command),
        "exit_code": result.exit_code, "occurrences": 1, "last_seen": clock.now_iso()}
    return entry


def _failure(store: Store, result: rules.ToolResult, actor: str, commit: bool) -> Captured:
    first = withheld(rules.first_error_line(result.lines, result.exit_code))
    signature = rules.error_signature(result.command, first)
    entry = _new_error(store, result, first, signature) if _known(store, signature) is None \
        else None
    now = clock.now_iso()
    with store.write("capture", actor, commit) as txn:
        row = _known(store, signature)
        if row is not None:
            def repeat(mapping: Any) -> None:
                found = mapping["capture"]
                found["occurrences"] = int(found.get("occurrences") or 1) + 1
                found["last_seen"] = now
                for key in ("fixed_at", "fixed_session"):
                    if key in found:
                        del found[key]

            txn.change(row, repeat)
            txn.event("capture", [row.id], source=SOURCE, repeat=True)
            txn.what = f"{row.id} failed again"
            updated = True
        else:
            entry = entry or _new_error(store, result, first, signature)
            entry["id"] = store.next_id(now[:10].replace("-", ""))
            txn.add(entry)
            txn.event("capture", [entry["id"]], source=SOURCE, refs=[signature])
            txn.what = f"{entry['id']} {entry['summary']}"
            updated = False
    if updated:
        assert row is not None
        return Captured(SOURCE, updated=[row.id], commit=txn.commit_sha)
    assert entry is not None
    return Captured(SOURCE, added=[entry["id"]], commit=txn.commit_sha)


def _open_for(store: Store, key: str) -> list[Row]:
    return store.index.where(_LIVE + "json_extract(data, '$.capture.command_key')=? AND "
                             "json_extract(data, '$.capture.fixed_at') IS NULL ORDER BY id",
                             (clock.now_iso(), key))


def _success(store: Store, result: rules.ToolResult, actor: str, commit: bool) -> Captured:
    key = rules.command_key(result.command)
    if not _open_for(store, key):
        return Captured(SOURCE, note="the command succeeded; no open error of it to fix")
    now = clock.now_iso()
    with store.write("capture", actor, commit) as txn:
        rows = _open_for(store, key)

        def fixed(mapping: Any) -> None:
            mapping["capture"]["fixed_at"] = now
            mapping["capture"]["fixed_session"] = result.session

        for row in rows:
            txn.change(row, fixed)
        txn.event("capture", [r.id for r in rows], source=SOURCE, fixed=True)
        txn.what = f"{', '.join(r.id for r in rows)} fixed: the command succeeded"
    return Captured(SOURCE, fixed=[r.id for r in rows], commit=txn.commit_sha)


def refresh_open_errors(store: Store) -> None:
    """Rewrite `open-errors.json` from the error entries (see `open_errors`)."""
    found: dict[str, list[str]] = {}
    for row in store.index.where(_LIVE + "json_extract(data, '$.capture.command_key') IS NOT "
                                 "NULL AND json_extract(data, '$.capture.fixed_at') IS NULL "
                                 "ORDER BY id", (clock.now_iso(),)):
        found.setdefault(str(row.data["capture"]["command_key"]), []).append(row.id)
    signatures = {g.path: signature_of(store.top / g.path) for g in store.grimoire_files()
                  if g.category == "error" and not g.in_archive}
    with contextlib.suppress(OSError):  # a missing file only costs a success the full path
        open_errors.write(str(store.cache_dir), found,
                          {rel: list(sig) for rel, sig in signatures.items() if sig})
