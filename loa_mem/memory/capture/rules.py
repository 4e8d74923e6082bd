"""What each capture source becomes, as pure rules (no IO).

This module imports only the standard library's `hashlib` and `re`: the hook's shortcut
(`loa_mem.cli.fast_capture`) computes the command key with it before anything heavy loads.
"""

from __future__ import annotations

import hashlib
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CAPTURED_STATUS = "accepted"  # a Decision Protocol entry with another status is not captured
MAX_LINE = 300
MAX_CONTENT = 2000
_ERROR_WORDS = re.compile(r"error|fail|fatal|exception|traceback|denied|not found|cannot|"
                          r"can't|no such|refused|invalid|missing|undefined", re.IGNORECASE)
_EXIT_LINE = re.compile(r"^\s*(?:exit code|exit status|exited with code)\s*:?\s*(-?\d+)\s*$",
                        re.IGNORECASE)
_DIGITS = re.compile(r"\d+")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def normalize_command(command: str) -> str:
    return " ".join(command.split())


def command_key(command: str) -> str:
    """What `open-errors.json` files an open error under: the command, whitespace folded."""
    return _digest(normalize_command(command))


def error_signature(command: str, first_line: str) -> str:
    """An error's identity: its command and its first error line, with whitespace folded and
    numbers folded to `N` (a duration, a line number or a pid does not make a new error)."""
    line = _DIGITS.sub("N", " ".join(first_line.split()))
    return _digest(normalize_command(command) + "\n" + line)


def content_ref(text: str) -> str:
    """The reference of a captured item that has no id of its own."""
    return "sha:" + _digest(" ".join(text.lower().split()))


class ToolResult:
    """One Bash call as a PostToolUse / PostToolUseFailure hook reports it."""

    __slots__ = ("command", "exit_code", "failed", "lines", "session")

    def __init__(self, command: str, failed: bool, exit_code: int | None, lines: list[str],
                 session: str | None) -> None:
        self.command = command
        self.failed = failed
        self.exit_code = exit_code
        self.lines = lines
        self.session = session


def _exit_code(response: dict[str, Any]) -> int | None:
    for key in ("exit_code", "exitCode", "returncode", "return_code", "code"):
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _failure(data: dict[str, Any]) -> tuple[bool, int | None, str]:
    """(failed, exit code, the text that explains it) of a hook's input."""
    if data.get("hook_event_name") == "PostToolUseFailure" or isinstance(data.get("error"), str):
        text = str(data.get("error") or "")
        lines = text.splitlines()
        found = _EXIT_LINE.match(lines[0]) if lines else None
        if found:
            return True, int(found.group(1)), "\n".join(lines[1:])
        return True, None, text
    response = data.get("tool_response")
    if not isinstance(response, dict):
        return False, 0, ""
    code = _exit_code(response)
    stderr = response.get("stderr")
    failed = (code is not None and code != 0) or response.get("is_error") is True
    return failed, code, stderr if isinstance(stderr, str) else ""


def parse_hook(data: Any) -> ToolResult | None:
    """The Bash call a hook's JSON input describes; None when it is about another tool, has
    no command, or was interrupted by the user (not an error of the command)."""
    if not isinstance(data, dict) or data.get("tool_name") != "Bash":
        return None
    tool_input = data.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip():
        return None
    response = data.get("tool_response")
    if data.get("is_interrupt") is True or (
            isinstance(response, dict) and response.get("interrupted") is True):
        return None
    failed, code, text = _failure(data)
    session = data.get("session_id")
    return ToolResult(normalize_command(command), failed, code,
                      [line.rstrip() for line in text.splitlines() if line.strip()],
                      session if isinstance(session, str) and session else None)


def first_error_line(lines: list[str], exit_code: int | None) -> str:
    """The line that says what went wrong: the first that names an error, else the first."""
    for line in lines:
        if _ERROR_WORDS.search(line):
            return line.strip()
    if lines:
        return lines[0].strip()
    return f"exit code {exit_code}" if exit_code is not None else "no error output"


def cut(text: str, limit: int = MAX_LINE) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def error_content(command: str, exit_code: int | None, first: str, more: list[str]) -> str:
    """The error memory's text: the command, how it failed, then a few more lines."""
    how = f"exit code {exit_code}" if exit_code is not None else "an error"
    text = f"`{cut(command)}` failed with {how}: {cut(first)}"
    for line in more:
        addition = "\n" + cut(line)
        if len(text) + len(addition) > MAX_CONTENT:
            break
        text += addition
    return text


def program_tag(command: str) -> str | None:
    """The command's program as a tag (`npm`, `pytest`), when it makes a valid one."""
    words = [w for w in command.split() if "=" not in w]
    if not words:
        return None
    name = re.sub(r"[^a-z0-9]+", "-", words[0].rsplit("/", 1)[-1].lower()).strip("-")
    return name if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", name) else None


def decision_text(item: dict[str, Any]) -> str | None:
    """A Decision Protocol entry's text: `content`, else `decision` with its `rationale`."""
    content = item.get("content")
    if isinstance(content, str) and content.strip():
        return content.strip()
    decision = item.get("decision")
    if not isinstance(decision, str) or not decision.strip():
        return None
    rationale = item.get("rationale")
    if isinstance(rationale, str) and rationale.strip():
        return f"{decision.strip()} Rationale: {rationale.strip()}"
    return decision.strip()


def is_accepted(item: dict[str, Any]) -> bool:
    status = item.get("status")
    return status is None or str(status).strip().lower() == CAPTURED_STATUS


_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")


def learning_lines(text: str) -> list[str]:
    """Plain compound-learning output: each Markdown bullet or numbered item is one learning
    (continuation lines join it); headings and other lines are not learnings."""
    found: list[str] = []
    open_item = False
    for line in text.splitlines():
        bullet = _BULLET.match(line)
        if bullet:
            found.append(bullet.group(1))
            open_item = True
        elif open_item and line.startswith((" ", "\t")) and line.strip():
            found[-1] += " " + line.strip()
        else:
            open_item = False
    return found
