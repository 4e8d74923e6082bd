"""Any text a user can give: remember -> show -> export -> import either refuses it clearly or
keeps it exactly (property-based: control characters, separators, surrogates, YAML syntax)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, git

YAML_SYNTAX = ["- ", ": ", "#", "&a ", "*a", "!!python/object ", "---", "...", "|", ">", "? ",
               "{", "}", "[", "]", "'", '"', "%YAML 1.1", "<<: ", "~", "null", "yes", "0x1F",
               "1e3", "2026-02-01", "@", "`", "\\", "\t", "\r\n", "\r", "\n"]
SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x00",
              "\x1b[31m", "\a", "\ufeff", "\u202e", "\ud800", "\udcff", "\U0001f600"]

texts = st.lists(st.one_of(st.text(st.characters(), max_size=12),
                           st.sampled_from(YAML_SYNTAX + SEPARATORS)),
                 min_size=1, max_size=8).map("".join)


def _store(path: Path) -> Cli:
    path.mkdir()
    git(path, "init", "-q")
    cli = Cli(path)
    cli.ok("init")
    return cli


def _refused_clearly(outcome: object) -> bool:
    code, stdout, stderr = (getattr(outcome, k) for k in ("code", "stdout", "stderr"))
    assert code == 1, (code, stdout, stderr)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("loa-mem: refused: "), stderr  # the text's fault, said so
    if stdout:  # under --json the same refusal is one JSON error object on stdout
        error = json.loads(stdout)["error"]
        assert error["kind"] == "refused" and error["message"] in stderr, stdout
    return True


def test_any_text_is_refused_clearly_or_kept_exactly(tmp_path: Path) -> None:
    source, target = _store(tmp_path / "source"), _store(tmp_path / "target")
    counter = itertools.count()

    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(texts, texts)
    def round_trip(content: str, summary: str) -> None:
        n = next(counter)
        content = f"Example {n}: {content}"  # unique, so never an exact duplicate
        options = ["--summary", summary[:200]] if n % 2 else []
        outcome = source("remember", "-c", "fact", "--json", *options, "--", content)
        if outcome.code != 0:
            _refused_clearly(outcome)
            return
        memory_id = outcome.json()["id"]
        entry = source.ok("show", memory_id, "--json").json()["entry"]
        assert entry["content"] == content
        if n % 2:
            assert entry["summary"] == summary[:200]

        exported = source.ok("export", "-f", "jsonl").stdout
        line = next(x for x in exported.split("\n") if f'"id": "{memory_id}"' in x)
        assert json.loads(line) == entry
        done = target("import", "-", "--format", "jsonl", "--json", stdin=line + "\n")
        assert done.code == 0, done.stderr
        assert target.ok("show", memory_id, "--json").json()["entry"] == entry

    round_trip()
    assert source.ok("validate", "--json").json()["problems"] == []
    assert target.ok("validate", "--json").json()["problems"] == []
