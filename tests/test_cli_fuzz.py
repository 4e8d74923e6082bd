"""Every command, given odd but possible arguments, answers with output or one clear error:
never an exception out of the command (a crash log), never a changed grimoire after a refusal.

The arguments come from each command's own parameters (its options, their choices, flags and
types, as Typer declares them) filled from a pool of values users and scripts really pass:
empty text, blanks, dashes, numbers out of range, a NaN, text that is not UTF-8 (as a shell
hands it over), ids of entries that exist, ids that do not, paths to folders and to nothing.
The draws are seeded, so a failure names the exact command line to run again.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from loa_mem.cli.app import register
from tests.conftest import Cli, git, run_loa_mem

# commands that wait for a person or a server rather than answer
_SKIP = {("mcp",), ("mcp", "serve"), ("report", "serve"), ("completion",)}
_SEED = int(os.environ.get("LOA_MEM_FUZZ_SEED", "7"))
_DRAWS = int(os.environ.get("LOA_MEM_FUZZ_DRAWS", "3"))
_STDINS = ["", "not json", "{}", "[]", '{"tool_name": 3}', '{"hook_event_name": null}',
           '{"session_id": "s", "tool_input": {"command": "make"}, "error": "exit 2"}',
           "\x00\x01", "{" * 5000]


# Typer ships its own copy of click: its classes are known by what they have, not by name
Command = Any


def _leaves(command: Command, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], Command]]:
    if hasattr(command, "list_commands"):  # a group, whose commands load on demand
        context = command.context_class(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and (*path, name) not in _SKIP and not sub.hidden:
                yield from _leaves(sub, (*path, name))
    else:
        yield path, command


_LEAVES = list(_leaves(typer.main.get_command(register())))


def _text_values(ids: list[str], root: Path) -> list[str]:
    return ["", " ", "-", "x", "database", "0", "-1", "1.5", "nan", "inf", "1e309",
            "99999999999999999999", "\u202eevil\u202c", "emoji 🧠", "line\nbreak", "tab\there",
            "a" * 5000, "MEM-20260101-zzzzzzzz", "MEM-x", "../../etc/passwd", "{}", "[1]",
            "null", "true", "*", "%s%n", "C:\\Windows", "\udcff\udcfe not utf-8",
            str(root), str(root / "nothing-here"), str(root / "grimoires"), *ids,
            *(str(path) for path in _odd_files(root.parent))]


def _odd_files(where: Path) -> list[Path]:
    """Files a command may be pointed at by mistake: binary, empty, half JSON, not YAML."""
    files = {"junk.bin": bytes(range(256)) * 4, "empty.txt": b"", "half.json": b'{"id": ',
             "odd.yaml": b"- id: [\n  :\n\t- x", "lines.jsonl": b'{"id": 1}\nnot json\n',
             "latin1.md": "caf\u00e9 na\u00efve".encode("latin-1")}
    for name, data in files.items():
        (where / name).write_bytes(data)
    return [where / name for name in files]


def _value(param: Any, rng: random.Random, texts: list[str]) -> str:
    kind = param.type
    if hasattr(kind, "choices") and rng.random() < 0.7:
        return str(rng.choice(list(kind.choices)))
    if kind.name in ("integer", "float", "integer range", "float range") \
            and rng.random() < 0.5:
        return rng.choice(["0", "-1", "1", "3", "1000000", "0.5", "-0.0", "2.5", "1e400",
                           "99999999999999999999", "-9223372036854775809"])
    return rng.choice(texts)


def _arguments(command: Command, rng: random.Random, texts: list[str]) -> list[str]:
    args: list[str] = []
    for param in command.params:
        if param.param_type_name == "option":
            if param.hidden or "--help" in param.opts or rng.random() < 0.6:
                continue
            name = max(param.opts, key=len)
            if param.is_flag:
                args.append(name if not param.secondary_opts or rng.random() < 0.5
                            else param.secondary_opts[0])
            else:
                args += [name, _value(param, rng, texts)]
        else:
            count = 1 if param.nargs == 1 else rng.randint(0 if not param.required else 1, 2)
            if not param.required and rng.random() < 0.3:
                continue
            args += [_value(param, rng, texts) for _ in range(count)]
    return args


def _seeded(cli: Cli) -> list[str]:
    ids = []
    for text, category in (("Use PostgreSQL for the database layer.", "decision"),
                           ("The cache keeps entries for ten minutes.", "fact"),
                           ("Retry the flaky upload twice before failing.", "learning")):
        ids.append(cli.ok("remember", text, "-c", category, "--confidence", "0.95",
                          "--json").json()["id"])
    return ids


def _temporaries(root: Path) -> list[str]:
    """Files a write leaves beside its target until it renames them (`.name.pid.tmp`)."""
    return [str(p) for p in root.rglob(".*.tmp") if ".git" not in p.parts]


def _grimoires(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted((root / "grimoires").rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("path", "command"), _LEAVES,
                         ids=[" ".join(path) for path, _ in _LEAVES])
def test_odd_arguments_get_an_answer_or_one_clear_error(
        store: Path, path: tuple[str, ...], command: Command,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store)  # relative paths among the arguments land in the test's folder
    cli = Cli(store)
    ids = _seeded(cli)
    texts = _text_values(ids, store)
    rng = random.Random(f"{_SEED} {' '.join(path)}")
    for _ in range(_DRAWS):
        args = [*path, *_arguments(command, rng, texts)]
        head = git(store, "rev-parse", "HEAD")
        before = _grimoires(store)
        try:
            outcome = cli(*args, stdin=rng.choice(_STDINS))
        except SystemExit as stop:  # a command that exits by itself, as typer.Exit does
            outcome_code: Any = stop.code
            assert outcome_code in (None, 0, 1, 2), args
            continue
        except Exception as error:  # the bug this test looks for
            pytest.fail(f"loa-mem {args!r} raised {type(error).__name__}: {error}")
        assert outcome.code in (0, 1, 2), (args, outcome.code, outcome.stderr[-2000:])
        if outcome.code != 0:
            # a refusal says why on stderr; a merge's conflicts are its report, on stdout
            message = (outcome.stderr + outcome.stdout).strip()
            assert message, (args, "exit", outcome.code, "without a message")
            assert "Traceback" not in outcome.stderr, (args, outcome.stderr)
            changed = git(store, "rev-parse", "HEAD") != head or _grimoires(store) != before
            assert not changed or outcome.code == 0, (args, "a refusal changed files")
        assert _temporaries(store) == [], (args, "temporary files left behind")


_FAST = [leaf for leaf in _LEAVES
         if leaf[0] in (("recall",), ("remember",), ("context",), ("capture", "tool-result"))]

@pytest.mark.parametrize(("path", "command"), _FAST,
                         ids=[" ".join(path) for path, _ in _FAST])
def test_the_fast_paths_as_real_processes_answer_or_refuse_in_one_line(
        store: Path, path: tuple[str, ...], command: Command) -> None:
    """recall, remember, context and capture answer before the full CLI loads: the same
    promise, checked on the process a hook or a shell runs."""
    ids = _seeded(Cli(store))
    texts = _text_values(ids, store)
    rng = random.Random(f"{_SEED} fast {' '.join(path)}")
    for _ in range(_DRAWS):
        args = [*path, *_arguments(command, rng, texts)]
        done = run_loa_mem(store, *args, stdin=rng.choice(_STDINS))
        assert done.returncode in (0, 1, 2), (args, done.returncode, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (args, done.stderr)
        if done.returncode != 0:
            assert (done.stderr + done.stdout).strip(), (args, "exit", done.returncode)
        assert _temporaries(store) == [], (args, "temporary files left behind")
