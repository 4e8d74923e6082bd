"""Wiring loa-mem into the places agents and developers already work.

- Claude Code: project `.claude/settings.json`. SessionStart (matchers startup, resume, clear
  and compact: after a resume, a /clear or a compaction the memories are gone from the context
  too) prints `loa-mem context`, which Claude Code adds to the context; SessionEnd runs
  `loa-mem hooks session-end`, which ends the session for the agent sidecars and runs
  `gc --trigger session_end` (and `capture decisions --if-enabled` before it); PostToolUse and
  PostToolUseFailure (matcher Bash) run `loa-mem capture tool-result --if-enabled`, which
  records a failed command as an error memory and its next success as the fix. Our handlers
  are new matcher groups whose command ends with the shell comment `# loa-mem:hook`; other
  hooks and settings are kept as they are, and uninstall removes exactly the groups carrying
  that mark (and containers it leaves empty).
- git: a block between marker lines in the pre-commit hook (under `core.hooksPath` when set)
  runs `loa-mem validate --staged` (what is staged is what gets committed); an existing shell
  hook keeps its lines, ours go right after its shebang so that an `exit 0` at its end cannot
  skip them.

Installing writes files and commits nothing, as `pre-commit install` does: the settings file may
hold the user's own uncommitted edits, and a git hook is not part of the tree.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loa_mem.core import git
from loa_mem.core.errors import InvalidFile, NothingToDo, Refused

MARK = "# loa-mem:hook"
SETTINGS = ".claude/settings.json"
SESSION_START_MATCHER = "startup|resume|clear|compact"
# Seconds Claude Code gives the SessionEnd hook (its default is 1.5 s for all of them): room for
# `session end` and gc, whose own time budget defers the rest of a large gc to the next run.
SESSION_END_TIMEOUT = 30
BEGIN = "# >>> loa-mem validate (added by `loa-mem hooks install --git`) >>>"
BEGIN_CREATED = "# >>> loa-mem validate (file created by `loa-mem hooks install --git`) >>>"
END = "# <<< loa-mem validate <<<"
SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


@dataclass(frozen=True)
class Changed:
    """What one install or uninstall did, per target."""

    action: str
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "targets": self.targets, "notes": self.notes}


def program(command: str) -> str:
    """`--command` as the shell sees it: one program, quoted when its path has spaces."""
    return shlex.quote(command.strip() or "loa-mem")


def lines(command: str = "loa-mem") -> dict[str, list[str]]:
    """The shell lines each moment runs, for any agent runner (`hooks print`)."""
    run = program(command)
    return {
        "session_start": [f"{run} context"],
        "session_end": [f'{run} session end --session "$SESSION_ID"',
                        f"{run} capture decisions --if-enabled",
                        f"{run} gc --trigger session_end --time-budget 1"],
        "after_tool": [f"{run} capture tool-result --if-enabled"],
        "pre_commit": [f"{run} validate --staged"],
    }


def _guarded(command: str, rest: str) -> str:
    """A handler's shell command: where loa-mem is not installed (a teammate who cloned the
    settings) it says so on stderr and exits 0, so the session goes on without memory."""
    run = program(command)
    return (f"command -v {run} >/dev/null 2>&1 || {{ echo 'loa-mem not installed; memory "
            f"hook skipped' >&2; exit 0; }}; {run} {rest} {MARK}")


def claude_handlers(command: str) -> dict[str, dict[str, Any]]:
    """Our matcher group for each Claude Code event."""
    return {
        "SessionStart": {"matcher": SESSION_START_MATCHER, "hooks": [
            {"type": "command", "command": _guarded(command, "context")}]},
        "SessionEnd": {"hooks": [
            {"type": "command", "command": _guarded(command, "hooks session-end"),
             "timeout": SESSION_END_TIMEOUT}]},
        **{event: {"matcher": "Bash", "hooks": [
            {"type": "command", "command": _guarded(command, "capture tool-result --if-enabled")}]}
           for event in ("PostToolUse", "PostToolUseFailure")},
    }


# -- Claude Code ----------------------------------------------------------------------------
def _read_settings(path: Path, rel: str) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as error:
        line, column = getattr(error, "lineno", 1), getattr(error, "colno", 1)
        raise InvalidFile(rel, line, column, f"not valid JSON ({getattr(error, 'msg', error)})",
                          "fix the file; nothing was written") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise InvalidFile(rel, 1, 1, "expected an object whose `hooks` is an object",
                          "fix the file; nothing was written")
    for event in claude_handlers("loa-mem"):
        if not isinstance(data.get("hooks", {}).get(event, []), list):
            line = next((n for n, text in enumerate(text.splitlines(), 1)
                         if f'"{event}"' in text), 1)
            raise InvalidFile(rel, line, 1, f"hooks.{event} is not a list of matcher groups",
                              "make it a list ([{\"hooks\": [...]}]), then install again; "
                              "nothing was written")
    return data


def _marked(handler: Any) -> bool:
    return isinstance(handler, dict) and str(handler.get("command", "")).rstrip().endswith(MARK)


def _handlers(group: Any) -> list[Any]:
    found = group.get("hooks") if isinstance(group, dict) else None
    return found if isinstance(found, list) else []


def _drop_ours(groups: list[Any], keep: Any = None) -> list[Any]:
    """`groups` without our handlers (except `keep`), and without the groups that only held
    ours; everything else in its place and order."""
    out = []
    for group in groups:
        handlers = _handlers(group)
        kept = [h for h in handlers if h is keep or not _marked(h)]
        if len(kept) == len(handlers):
            out.append(group)
        elif kept:
            out.append({**group, "hooks": kept})
    return out


def _merge_event(groups: list[Any], ours: dict[str, Any]) -> list[Any]:
    """Our group in `groups`: where one of ours already is, loa-mem's command is updated in
    place and every key the user added or changed on it stays; else it is added last."""
    existing = next(((g, h) for g in groups for h in _handlers(g) if _marked(h)), None)
    if existing is None:
        return [*groups, ours]
    group, handler = existing
    new_handler = {**ours["hooks"][0], **handler, "command": ours["hooks"][0]["command"]}
    for key, value in ours.items():
        if key != "hooks":
            group.setdefault(key, value)
    group["hooks"] = [new_handler if h is handler else h for h in _handlers(group)]
    return _drop_ours(groups, keep=new_handler)


def _without_ours(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`settings` minus our handlers, and the events they were on. Groups and containers that
    only held ours are dropped; anything else stays in its place and order."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings, []
    removed, kept_hooks = [], {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept_hooks[event] = groups
            continue
        kept = _drop_ours(groups)
        if kept != groups:
            removed.append(event)
        if kept or kept == groups:
            kept_hooks[event] = kept
    result = dict(settings)
    if kept_hooks or not removed:
        result["hooks"] = kept_hooks
    else:
        del result["hooks"]
    return result, removed


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from loa_mem.core.filewrite import atomic_write

    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def install_claude(top: Path, command: str) -> dict[str, Any]:
    path = top / SETTINGS
    before = _read_settings(path, SETTINGS)
    settings = json.loads(json.dumps(before))
    hooks = settings.setdefault("hooks", {})
    replaced = []
    for event, group in claude_handlers(command).items():
        groups = hooks.get(event, [])
        if any(_marked(h) for g in groups for h in _handlers(g)):
            replaced.append(event)
        hooks[event] = _merge_event(groups, group)
    changed = before != settings
    if changed:
        _write_json(path, settings)
    return {"path": SETTINGS, "events": list(claude_handlers(command)), "changed": changed,
            "replaced": replaced}


def uninstall_claude(top: Path) -> dict[str, Any]:
    path = top / SETTINGS
    settings, removed = _without_ours(_read_settings(path, SETTINGS))
    if removed:
        if settings:
            _write_json(path, settings)
        else:
            path.unlink()
            if path.parent.is_dir() and not any(path.parent.iterdir()):
                path.parent.rmdir()
    return {"path": SETTINGS, "events": removed, "changed": bool(removed),
            "deleted": bool(removed) and not settings}


# -- git pre-commit -------------------------------------------------------------------------
def pre_commit_path(top: Path) -> Path:
    """Where git runs the pre-commit hook from: core.hooksPath when set, else the hooks folder
    every worktree of the repository shares (a linked worktree's own git dir has none)."""
    hooks = git.run(top, "rev-parse", "--git-path", "hooks").strip()
    return top / hooks / "pre-commit"


def _block(command: str, begin: str) -> str:
    run = program(command)
    return (f"{begin}\n"
            f"if command -v {run} >/dev/null 2>&1; then\n"
            f"  {run} validate --staged || exit 1\n"
            f"else\n"
            f"  echo 'loa-mem is not on PATH; memory files were not validated' >&2\n"
            f"fi\n"
            f"{END}\n")


def _strip_block(text: str) -> tuple[str, bool, bool]:
    """`text` without our block; whether one was there; whether we had created the file."""
    out, inside, found, created = [], False, False, False
    for line in text.splitlines(keepends=True):
        stripped = line.rstrip("\n")
        if stripped in (BEGIN, BEGIN_CREATED):
            inside, found = True, True
            created = created or stripped == BEGIN_CREATED
        elif inside and stripped == END:
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out), found, created


def install_git(top: Path, command: str) -> dict[str, Any]:
    path = pre_commit_path(top)
    rel = _display(top, path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    rest, _, created = _strip_block(text)
    if not rest.strip() or (created and rest.strip() == "#!/bin/sh"):
        new = "#!/bin/sh\n" + _block(command, BEGIN_CREATED)
        created = True
    else:
        first, _, body = rest.partition("\n")
        if not first.startswith("#!"):
            first, body = "#!/bin/sh", rest
        elif os.path.basename(shlex.split(first[2:] or "sh")[-1]) not in SHELLS:
            raise Refused(f"{rel} is not a shell script ({first})",
                          f"add `{program(command)} validate --staged` to it yourself, or run "
                          "loa-mem through pre-commit (.pre-commit-hooks.yaml)")
        new = first + "\n" + _block(command, BEGIN) + body
    changed = new != text
    if changed:
        from loa_mem.core.filewrite import atomic_write

        atomic_write(path, new)
    path.chmod(path.stat().st_mode | 0o111)
    return {"path": rel, "changed": changed, "created_file": created}


def uninstall_git(top: Path) -> dict[str, Any]:
    path = pre_commit_path(top)
    rel = _display(top, path)
    if not path.exists():
        return {"path": rel, "changed": False, "deleted": False}
    rest, found, created = _strip_block(path.read_text(encoding="utf-8"))
    deleted = found and created and rest.strip() in ("", "#!/bin/sh")
    if deleted:
        path.unlink()
    elif found:
        from loa_mem.core.filewrite import atomic_write

        atomic_write(path, rest)
    return {"path": rel, "changed": found, "deleted": deleted}


def _display(top: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return str(path)


# -- commands -------------------------------------------------------------------------------
def install(top: Path, claude_code: bool, git_hook: bool, command: str) -> Changed:
    if not (claude_code or git_hook):
        raise Refused("say what to install", "add --claude-code, --git, or both")
    targets: dict[str, dict[str, Any]] = {}
    if claude_code:
        targets["claude_code"] = install_claude(top, command)
    if git_hook:
        targets["git"] = install_git(top, command)
    notes = []
    exe = command.strip()
    if exe and not os.path.isabs(exe) and _which(exe) is None:
        notes.append(f"`{exe}` is not on PATH here; hooks run it by that name "
                     "(use --command /full/path/to/loa-mem to pin one)")
    return Changed("install", targets, notes)


def uninstall(top: Path, claude_code: bool, git_hook: bool) -> Changed:
    both = not (claude_code or git_hook)
    targets: dict[str, dict[str, Any]] = {}
    if claude_code or both:
        targets["claude_code"] = uninstall_claude(top)
    if git_hook or both:
        targets["git"] = uninstall_git(top)
    if not any(t["changed"] for t in targets.values()):
        raise NothingToDo("no loa-mem hooks are installed here",
                          "`loa-mem hooks install` adds them")
    return Changed("uninstall", targets)


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)
