"""One help style for every command: click's plain help, with placeholders named after what
they stand for (`--category CATEGORY`, `remember CONTENT`) instead of types (`<str>`) or
braces (`{content}`)."""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument


class _PlainArgument(TyperArgument):
    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        name = self.metavar or (self.name or "").upper()
        if self.nargs != 1:
            name += "..."
        return f"[{name}]" if usage and not self.required else name


def tidy(command: Any) -> None:
    """Give `command` (and each of its subcommands) the one help style."""
    for sub in (getattr(command, "commands", None) or {}).values():
        tidy(sub)
    for param in command.params:
        if isinstance(param, TyperArgument):
            param.__class__ = _PlainArgument
        elif not getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = _choices(param) or _placeholder(param)


def _choices(param: Any) -> str:
    choices = getattr(param.type, "choices", None)
    return "[" + "|".join(str(c) for c in choices) + "]" if choices else ""


def _placeholder(param: Any) -> str:
    longest = max(param.opts, key=len, default=param.name or "value")
    return str(longest).lstrip("-").replace("-", "_").upper()
