"""Every command, run on a store whose files were damaged the ways files get damaged (cut short,
bytes that are not UTF-8, a binary blob, a byte-order mark, tabs, Windows line ends, a value
of the wrong type), answers or refuses in one line: never an exception out of the command, and
a refusal writes nothing (no commit, no memory file changed).

The damage and the commands are drawn with a fixed seed per case, so a failure names exactly
what to run again; `LOA_MEM_FUZZ_DRAWS` draws more of them.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli, git
from tests.test_cli_fuzz import _LEAVES, _grimoires, _temporaries

_DRAWS = int(os.environ.get("LOA_MEM_FUZZ_DRAWS", "2"))
_SEED = int(os.environ.get("LOA_MEM_FUZZ_SEED", "7"))
MEMORY = "grimoires/loa/memory"
TARGETS = [".loa.config.yaml", f"{MEMORY}/facts.yaml", f"{MEMORY}/decisions.yaml",
           f"{MEMORY}/events.jsonl", ".gitattributes"]


def _cut(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def _not_utf8(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]) + data[at:]


def _binary(data: bytes, rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.choice([1, 64, 4096])))


def _bom(data: bytes, rng: random.Random) -> bytes:
    return b"\xef\xbb\xbf" + data


def _tabs(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"  ", b"\t", rng.randint(1, 3))


def _crlf(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"\n", b"\r\n")


def _odd_value(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    valued = [i for i, line in enumerate(lines) if b": " in line]
    if not valued:
        return data + b"\n"
    i = rng.choice(valued)
    key = lines[i].split(b": ", 1)[0]
    lines[i] = key + b": " + rng.choice([b"[1, 2]", b"{a: b}", b"99999999999999999999999",
                                         b".nan", b"-.inf", b"null", b"''", b"*anchor",
                                         b"!!binary aGVsbG8=", b"2026-13-45", b"|"])
    return b"\n".join(lines)


def _line_gone(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


DAMAGE = [_cut, _not_utf8, _binary, _bom, _tabs, _crlf, _odd_value, _line_gone]
# the commands a damaged store is asked, with the arguments that make them do their work
_COMMANDS = [path for path, _ in _LEAVES]
_ARGS = {("recall",): ["cache"], ("remember",): ["The queue drains every night.", "-c", "fact"],
         ("oracle", "query"): ["cache"], ("export",): ["-f", "markdown"]}


def _seeded(cli: Cli) -> list[str]:
    return [cli.ok("remember", text, "-c", category, "--confidence", "0.95", "--json"
                   ).json()["id"]
            for text, category in (("Use PostgreSQL for the database layer.", "decision"),
                                   ("The cache keeps entries for ten minutes.", "fact"),
                                   ("The cache is warmed at deploy time.", "fact"))]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__.strip("_") for d in DAMAGE])
@pytest.mark.parametrize("target", TARGETS)
def test_a_damaged_file_gets_an_answer_or_a_one_line_refusal_that_writes_nothing(
        store: Path, target: str, damage: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store)
    cli = Cli(store)
    ids = _seeded(cli)
    rng = random.Random(f"{_SEED} {target} {getattr(damage, '__name__', damage)}")
    path = store / target
    path.write_bytes(damage(path.read_bytes(), rng))  # type: ignore[operator]
    for step in (["add", "-A"], ["commit", "-qm", "damaged by hand", "--allow-empty"]):
        # bytes: git may quote the damaged file's bytes in what it prints
        subprocess.run(["git", *step], cwd=store, capture_output=True, check=True)
    for command in rng.sample(_COMMANDS, min(len(_COMMANDS), 8 * _DRAWS)):
        args = [*command, *_ARGS.get(command, [])]
        if command in (("show",), ("history",), ("forget",), ("archive",)):
            args.append(rng.choice(ids))
        head, before = git(store, "rev-parse", "HEAD"), _grimoires(store)
        try:
            outcome = cli(*args, stdin="")
        except SystemExit as stop:
            assert stop.code in (None, 0, 1, 2), args
            continue
        except Exception as error:  # the bug this test looks for
            pytest.fail(f"loa-mem {args!r} on a damaged {target} raised "
                        f"{type(error).__name__}: {error}")
        assert outcome.code in (0, 1, 2), (args, outcome.code, outcome.stderr[-2000:])
        assert "Traceback" not in outcome.stderr, (args, outcome.stderr)
        if outcome.code != 0:
            assert (outcome.stderr + outcome.stdout).strip(), (args, "no message")
            assert git(store, "rev-parse", "HEAD") == head, (args, "a refusal committed")
            assert _grimoires(store) == before, (args, "a refusal changed memory files")
        assert _temporaries(store) == [], (args, "temporary files left behind")
