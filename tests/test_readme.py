"""README.md's ```console examples run as written, and print what the README shows.

Every ```console block is one part of a single terminal session: the blocks run in order, in one
temporary folder, in one `bash` process, so `cd` and `export` carry over from block to block, as
they would for a reader who types them. A line starting with `$ ` is a command; the lines after
it, up to the next command, are what the terminal shows (stdout and stderr together).

What may differ between the README and a run, and nothing else:

- memory ids (`MEM-YYYYMMDD-` and eight random base32 characters): an id shown in the README
  stands for the id the run printed at that place (the day must agree); from then on the README's
  id means that id, in later output and in later commands (`loa-mem show MEM-...`);
- commit shas (7 to 40 hex digits), and the dates git records for commits (`+00:00` times);
- the temporary folder, which the README shows as `/tmp`;
- runs of spaces (table columns widen with longer values);
- a line that is only `...` or `…` stands for any number of lines.

A command whose output shows a `loa-mem: ` error line may exit non-zero; any other must exit 0.

Only the `loa-mem` command line is run (never loa-mem's modules), with HOME, the XDG folders and
git's configuration isolated in the temporary folder and no network.

`README_UPDATE=1 python -m pytest tests/test_readme.py` rewrites the output shown after each
command that does not match with what the run printed (ids mapped back to the README's), to
refresh the README after a deliberate change of output; review the diff before committing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TIMEOUT_SECONDS = 120

MEM_ID = re.compile(r"MEM-(\d{8})-[a-z2-7]{8}")
# tokens of an expected line that stand for something that varies from run to run
PLACEHOLDER = re.compile(
    r"(?P<id>MEM-\d{8}-[a-z2-7]{8})"
    r"|(?P<date>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d)"
    r"|(?P<sha>(?<![\w-])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-]))")
ELISION = {"...", "…"}


@dataclass
class Step:
    line: int  # README line number of the command
    command: str
    expected: list[str]


@dataclass
class Block:
    start: int  # README line number of the opening fence
    end: int  # README line number of the closing fence
    steps: list[Step] = field(default_factory=list)


def parse(text: str) -> list[Block]:
    blocks: list[Block] = []
    current: Block | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if current is None:
            if line.strip() == "```console":
                current = Block(start=number, end=number)
            continue
        if line.strip() == "```":
            current.end = number
            blocks.append(current)
            current = None
        elif line.startswith("$ "):
            current.steps.append(Step(number, line[2:], []))
        elif current.steps:
            current.steps[-1].expected.append(line)
        else:
            raise AssertionError(f"README.md:{number}: console block output before any `$ `")
    assert current is None, "README.md: unclosed ```console block"
    return blocks


def trim(lines: list[str]) -> list[str]:
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def squash(line: str) -> str:
    return " ".join(line.split())


class Ids:
    """README id -> id of this run, learned where the README shows an id in output."""

    def __init__(self) -> None:
        self.actual: dict[str, str] = {}

    def to_run(self, command: str, where: str) -> str:
        def swap(match: re.Match[str]) -> str:
            shown = match.group(0)
            assert shown in self.actual, (
                f"{where}: the command uses {shown}, which no earlier output showed")
            return self.actual[shown]
        return MEM_ID.sub(swap, command)

    def to_readme(self, text: str) -> str:
        back = {actual: shown for shown, actual in self.actual.items()}
        return MEM_ID.sub(lambda m: back.get(m.group(0), m.group(0)), text)


def line_pattern(expected: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex for one expected line, and the README ids it shows, in order."""
    parts: list[str] = []
    ids: list[str] = []
    text = squash(expected)
    position = 0
    for match in PLACEHOLDER.finditer(text):
        parts.append(re.escape(text[position:match.start()]))
        if match.group("id"):
            ids.append(match.group("id"))
            parts.append(f"(MEM-{match.group('id')[4:12]}-[a-z2-7]{{8}})")
        elif match.group("date"):
            parts.append(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")
        else:
            parts.append("[0-9a-f]{7,40}")
        position = match.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts)), ids


def line_matches(expected: str, actual: str, ids: Ids) -> dict[str, str] | None:
    """The ids learned when `actual` matches `expected` consistently, else None."""
    pattern, shown = line_pattern(expected)
    match = pattern.fullmatch(squash(actual))
    if match is None:
        return None
    learned: dict[str, str] = {}
    taken = {**ids.actual, **learned}
    for readme_id, run_id in zip(shown, match.groups(), strict=True):
        known = ids.actual.get(readme_id, learned.get(readme_id))
        if known is not None:
            if known != run_id:
                return None
        elif run_id in taken.values():
            return None  # two README ids for one id of the run
        else:
            learned[readme_id] = run_id
            taken[readme_id] = run_id
    return learned


def compare(expected: list[str], actual: list[str], ids: Ids) -> str | None:
    """None when `actual` shows what `expected` says; else why not. Learns ids on success."""
    learned: dict[str, str] = {}
    scratch = Ids()
    scratch.actual = dict(ids.actual)
    position = 0
    eliding = False
    for want in expected:
        if want.strip() in ELISION:
            eliding = True
            continue
        while True:
            if position >= len(actual):
                return f"missing line: {want!r}"
            got = actual[position]
            position += 1
            found = line_matches(want, got, scratch)
            if found is not None:
                scratch.actual.update(found)
                learned.update(found)
                eliding = False
                break
            if not eliding:
                return f"expected {want!r}\n     got {got!r}"
    if position < len(actual) and not eliding:
        return f"unexpected line: {actual[position]!r}"
    ids.actual.update(learned)
    return None


class Shell:
    """One bash process: state (cwd, exported variables) persists between commands."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
        self.marker = f"__readme_{uuid.uuid4().hex}__"

    def run(self, command: str) -> tuple[int, list[str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(
            f"{{ {command}\n}} </dev/null 2>&1\nprintf '\\n{self.marker} %d\\n' $?\n")
        self.process.stdin.flush()
        lines: list[str] = []
        while True:
            line = self.process.stdout.readline()
            assert line, f"the shell ended while running {command!r}: {''.join(lines)}"
            if line.startswith(self.marker):
                code = int(line.split()[1])
                break
            lines.append(line.rstrip("\n"))
        # the marker's own leading newline, after output that ended with one
        if lines and lines[-1] == "":
            lines.pop()
        return code, lines

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=TIMEOUT_SECONDS)


def environment(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT", "TMPDIR")
    env = {key: value for key, value in os.environ.items() if key in keep}
    env.update({
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "NO_COLOR": "1",
        # the login the events log and sidecars name (`user:LOGIN`), the same on every machine
        "LOGNAME": "alice",
        "USER": "alice",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        # the project's own loa-mem (and its python) first
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def test_readme_console_examples(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    blocks = parse(text)
    assert blocks, "README.md has no ```console block"
    work = tmp_path / "work"
    work.mkdir()
    # the README shows the temporary folder as /tmp
    shown_tmp = "/tmp"
    real = {str(work), os.path.realpath(work)}

    def from_run(line: str) -> str:
        for path in sorted(real, key=len, reverse=True):
            line = line.replace(path, shown_tmp)
        return line

    update = os.environ.get("README_UPDATE") == "1"
    readme_lines = text.splitlines()
    replacements: list[tuple[Step, list[str]]] = []
    failures: list[str] = []
    ids = Ids()
    shell = Shell(work, environment(tmp_path))
    try:
        for block in blocks:
            for step in block.steps:
                where = f"README.md:{step.line}"
                command = ids.to_run(step.command, where)
                command = re.sub(r"(?<![\w.])/tmp(?=/|\b)", str(work), command)
                code, output = shell.run(command)
                actual = trim([from_run(line) for line in output])
                expected = trim(step.expected)
                problem = compare(expected, actual, ids)
                may_fail = any(line.startswith("loa-mem: ") for line in expected)
                if problem is None and code != 0 and not may_fail:
                    problem = f"exit code {code}"
                if problem is None:
                    continue
                if update:
                    learn_in_order(expected, actual, ids)
                    replacements.append((step, [ids.to_readme(line) for line in actual]))
                    continue
                shown = "\n".join(f"    {line}" for line in output)
                failures.append(f"{where}: $ {step.command}\n  {problem}\n  output:\n{shown}")
                pytest.fail("\n\n".join(failures))
    finally:
        shell.close()
    if update and replacements:
        for step, lines in sorted(replacements, key=lambda r: r[0].line, reverse=True):
            start = step.line  # index of the first output line (0-based)
            readme_lines[start:start + len(step.expected)] = [
                *lines, *([""] if step.expected and not step.expected[-1].strip() else [])]
        README.write_text("\n".join(readme_lines) + "\n", encoding="utf-8")
        pytest.fail(f"README.md updated at {len(replacements)} command(s); review the diff")


def learn_in_order(expected: list[str], actual: list[str], ids: Ids) -> None:
    """After a mismatch (update mode only): pair the README's new ids with the run's, in order."""
    readme_ids = list(dict.fromkeys(m.group(0) for m in MEM_ID.finditer("\n".join(expected))))
    run_ids = list(dict.fromkeys(m.group(0) for m in MEM_ID.finditer("\n".join(actual))))
    known = set(ids.actual.values())
    fresh = [run_id for run_id in run_ids if run_id not in known]
    for readme_id in readme_ids:
        same_day = [run_id for run_id in fresh if run_id[:12] == readme_id[:12]]
        if readme_id not in ids.actual and same_day:
            ids.actual[readme_id] = same_day[0]
            fresh.remove(same_day[0])
