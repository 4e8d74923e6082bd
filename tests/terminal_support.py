"""What the terminal tests share: every command loa-mem has, as a user would type it, and a
real process run under a pseudo-terminal of a given width."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loa_mem.cli import catalog


def commands() -> Iterator[tuple[list[str], Any]]:
    """Each runnable command (groups walked down to their subcommands) with its click command."""
    def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        subs = getattr(command, "commands", None)
        if not subs:
            yield path, command
            return
        for name, sub in subs.items():
            yield from walk(sub, [*path, name])

    for name in catalog.names():
        yield from walk(catalog.build(name), [name])


def options(command: Any) -> set[str]:
    return {o for p in command.params for o in [*p.opts, *p.secondary_opts]}


def required_args(command: Any) -> list[str]:
    """Placeholder values for what the command requires, so that it gets past parsing."""
    args: list[str] = []
    for param in command.params:
        if param.required and param.param_type_name == "argument":
            args.append("MEM-20260101-aaaaaaaa")
        elif param.required:
            args += [param.opts[0], "fact"]
    return args


def on_terminal(root: Path, *args: str, columns: int = 80,
                env: dict[str, str] | None = None) -> str:
    """Run loa-mem as a real process whose stdout is a terminal `columns` wide; what it printed
    there (these tests read the tables)."""
    return on_terminal_with_errors(root, *args, columns=columns, env=env)[0]


def on_terminal_with_errors(root: Path, *args: str, columns: int = 80,
                            env: dict[str, str] | None = None) -> tuple[str, str]:
    """As `on_terminal`: what the process printed on the terminal, and on stderr."""
    leader, follower = pty.openpty()
    full_env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm",
                **(env or {})}
    with subprocess.Popen([sys.executable, "-m", "loa_mem", *args], cwd=root, env=full_env,
                          stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
                          ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done writing
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.stderr is not None
        errors = process.stderr.read().decode()
        assert process.wait() == 0, errors
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n"), errors
