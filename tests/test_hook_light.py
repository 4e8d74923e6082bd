"""The session-start hook stays light: while its caches are fresh it imports neither `re` nor
`json` (nor what they bring), and what replaces them there gives exactly what they gave."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from loa_mem.context import memo
from loa_mem.core import cachefile, jsontext, terminal
from loa_mem.memory import layout
from tests import support
from tests.conftest import FIXED_NOW, Cli

CACHE = Path(".git/loa-mem")
# pip (25.2 on) writes the console script `loa-mem` as exactly this: no `re`
CONSOLE_SCRIPT = ("import sys\nfrom loa_mem.entry import main\nif __name__ == '__main__':\n"
                  "    sys.exit(main())\n")


def _hook(store: Path, *args: str, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CONSOLE_SCRIPT, "context", *args], cwd=store,
                          env={**os.environ, "LOA_MEM_NOW": FIXED_NOW, **(env or {})},
                          capture_output=True, text=True, check=False)


def _imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


def _store_with_memories(cli: Cli) -> None:
    support.remember(cli, "Use PostgreSQL for the main store.", "decision")
    support.remember(cli, "The CI runs on two cores.", "fact")


def test_a_session_start_imports_neither_re_nor_json(cli: Cli, store: Path) -> None:
    _store_with_memories(cli)
    first = _hook(store)  # writes the caches
    again = _hook(store, env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert again.returncode == 0 and again.stdout == first.stdout
    assert "Use PostgreSQL for the main store." in again.stdout
    imported = _imported(again)
    assert "loa_mem.context.fast" in imported and "loa_mem.people.home" in imported
    assert not imported & {"re", "json", "enum", "contextlib", "functools", "collections",
                           "sqlite3", "typing", "pathlib", "dataclasses", "subprocess"}


def test_damaged_or_foreign_caches_are_rebuilt_and_the_block_is_the_same(
        cli: Cli, store: Path) -> None:
    _store_with_memories(cli)
    expected = _hook(store).stdout
    for damage in (b"", b"\x00garbage", b'{"side": {}}', (store / CACHE / "index.sqlite3")
                   .read_bytes()[:64]):
        for name in (cachefile.SIDE, cachefile.CONFIG, cachefile.USER_EMAIL):
            (store / CACHE / name).write_bytes(damage)
        done = _hook(store)
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, "")
        assert cachefile.read(str(store / CACHE / cachefile.SIDE))["side"]  # written again


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text() | st.floats(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4)
                    | st.tuples(inner, inner), max_leaves=12))
def test_jsontext_writes_what_json_writes(value: object) -> None:
    assert jsontext.dumps(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2100)
               | st.characters()))
def test_printable_escapes_exactly_the_characters_a_terminal_acts_on(text: str) -> None:
    assert terminal.printable(text) == _UNSAFE.sub(_escaped, text)
    assert terminal.printable(text, one_line=True) == _UNSAFE_IN_LINE.sub(_escaped, text)


_MONTH_FILE = re.compile(r"(\d{4}-\d{2})(?:\.([1-9]\d*))?(\.[a-z]+)\Z")


@given(st.text(alphabet="0123456789\u0661\u0662-.yamlY_x", max_size=16)
       | st.builds("{}-{}{}.{}".format, st.integers(0, 99999), st.integers(0, 999),
                   st.sampled_from(["", ".0", ".1", ".12", ".01", ".x"]),
                   st.sampled_from(["yaml", "jsonl", "Yaml", "y1", ""])))
def test_month_file_names_are_read_as_the_pattern_reads_them(name: str) -> None:
    match = _MONTH_FILE.match(name)
    expected = (match.group(1), int(match.group(2) or 1), match.group(3)) if match else None
    assert layout.month_file(name) == expected


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10),
       st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10))
def test_a_memo_key_is_equal_exactly_when_the_settings_are(a: object, b: object) -> None:
    def reordered(value: object) -> object:
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        return [reordered(v) for v in value] if isinstance(value, list) else value

    assert memo.canonical(a) == memo.canonical(reordered(a))
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert (memo.canonical(a) == memo.canonical(b)) == same
