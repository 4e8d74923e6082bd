"""loa-mem in a terminal: one help style, one error style, quiet closed pipes, shell
completion, and (at 80 columns) ids and paths that are never cut."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests import terminal_support
from tests.conftest import Cli, run_loa_mem


def test_bare_loa_mem_prints_its_help_and_succeeds(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path)

    assert done.returncode == 0
    assert done.stdout.startswith("Usage: loa-mem [OPTIONS] COMMAND")
    assert "recall" in done.stdout and done.stderr == ""


def test_a_bare_group_prints_its_help_and_succeeds(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path, "trust")

    assert done.returncode == 0
    assert done.stdout.startswith("Usage: loa-mem trust [OPTIONS] COMMAND")


def test_recall_help_at_80_columns_has_text_for_every_option(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path, "recall", "--help", env={"COLUMNS": "80"})

    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "…" not in done.stdout and "╭" not in done.stdout
    options = lines[lines.index("Options:") + 1:]
    for line in options:
        if line.strip().startswith("-"):
            _, _, text = line.strip().partition("  ")
            # a flag pair too long to share its line has its text on the next line
            following = options[options.index(line) + 1] if line != options[-1] else ""
            assert text.strip() or following.startswith(" " * 10), line
    for flag in ("--include-superseded / --no-include-superseded", "--min-confidence",
                 "-c, --category CATEGORY", "--explain"):
        assert flag in done.stdout


@pytest.mark.parametrize(("path", "command"), list(terminal_support.commands()),
                         ids=[" ".join(p) for p, _ in terminal_support.commands()])
def test_every_option_of_every_command_says_what_it_does(path: list[str],
                                                         command: object) -> None:
    params = getattr(command, "params", [])
    undocumented = [p.opts[0] for p in params if p.param_type_name == "option" and not p.help]
    assert undocumented == []


def test_one_help_style_everywhere(tmp_path: Path) -> None:
    for args in (("remember", "--help"), ("context", "--help"), ("pref", "set", "--help")):
        done = run_loa_mem(tmp_path, *args, env={"COLUMNS": "80"})
        assert done.returncode == 0, args
        assert done.stdout.startswith(f"Usage: loa-mem {' '.join(args[:-1])} [OPTIONS]"), args
        for placeholder in ("<str>", "<float>", "{content}", "╭", "usage: loa-mem"):
            assert placeholder not in done.stdout, (args, placeholder)
    assert "[OPTIONS] CONTENT" in run_loa_mem(tmp_path, "remember", "-h").stdout


def test_one_error_style_for_usage_mistakes(tmp_path: Path) -> None:
    for args, hint in ((("recall", "--bogus"), "see 'loa-mem recall --help'"),
                       (("no-such-command",), "see 'loa-mem --help'"),
                       (("context", "--budget", "5"), "see 'loa-mem context --help'"),
                       (("trust", "score", "--bogus"), "see 'loa-mem trust score --help'")):
        done = run_loa_mem(tmp_path, *args)
        assert done.returncode == 2, args
        assert done.stdout == ""
        [line] = done.stderr.splitlines()
        assert line.startswith("loa-mem: usage: ") and line.endswith(hint), line


def test_user_errors_are_one_line_with_what_to_do(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path, "recall")

    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("loa-mem: not-a-repo: ") and "loa-mem init" in line


@pytest.mark.parametrize("args", [("recall", "--help"), ("--help",), ("recall",),
                                  ("history", "--help")])
def test_a_closed_pipe_ends_quietly(store: Path, cli: Cli, args: tuple[str, ...]) -> None:
    for n in range(30):
        cli.ok("remember", f"Fact number {n} about the build pipeline.", "-c", "fact")
    pipeline = (f"{sys.executable} -m loa_mem {' '.join(args)} | head -1; "
                "echo \"status ${PIPESTATUS[0]}\" >&2")
    done = subprocess.run(["bash", "-c", pipeline], cwd=store, capture_output=True, text=True,
                          env={**os.environ}, check=False)

    assert len(done.stdout.splitlines()) == 1
    assert done.stderr.splitlines() == ["status 0"], done.stderr


def test_shell_completion_completes_commands_and_options(tmp_path: Path) -> None:
    def complete(words: str) -> list[str]:
        done = run_loa_mem(tmp_path, env={"_LOA_MEM_COMPLETE": "complete_bash",
                                          "COMP_WORDS": words,
                                          "COMP_CWORD": str(len(words.split()) - 1)})
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert "recall" in complete("loa-mem rec")
    assert set(complete("loa-mem recall --incl")) == {
        "--include-expired", "--include-superseded", "--include-archived"}
    assert "score" in complete("loa-mem trust sc")


def test_the_completion_script_can_be_shown_and_installed(tmp_path: Path) -> None:
    # the shell named, not detected: detection walks up the process tree, and a test run
    # started without a shell above it (a detached job, some CI runners) finds none
    named = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    shown = run_loa_mem(tmp_path, "--show-completion", "bash", env=named)
    assert shown.returncode == 0 and "_LOA_MEM_COMPLETE" in shown.stdout

    installed = run_loa_mem(tmp_path, "--install-completion", "bash",
                            env={**named, "SHELL": "/bin/bash"})
    assert installed.returncode == 0, installed.stderr
    assert "_LOA_MEM_COMPLETE" in (Path(os.environ["HOME"]) / ".bashrc").read_text() or any(
        "loa-mem" in p.name for p in Path(os.environ["HOME"]).rglob("*"))


# -- 80 columns: ids and paths are whole ------------------------------------------------------
LONG = ("services/payments/adapters/outbound/stripe/webhooks/handlers/"
        "refund_reconciliation.py")
WORDY = ("The refund reconciliation job replays every webhook it missed during an outage, "
         "in order, and marks each one it applied so that a second run changes nothing.")


@pytest.fixture
def busy(cli: Cli, store: Path) -> dict[str, list[str]]:
    """A store whose entries have long summaries, and a working set with a long path."""
    from tests import ws_support as ws

    ids = [cli.ok("remember", f"{WORDY} (case {n})", "-c", "learning", "-t", "payments",
                  "--json").json()["id"] for n in range(3)]
    soon = cli.ok("remember", f"{WORDY} (temporary)", "-c", "fact", "--ttl", "3d",
                  "--json").json()["id"]
    ws.write(store, LONG, "x" * 400)
    ws.write(store, "docs/overview.md", "y" * 40)
    return {"ids": [*ids, soon], "paths": [LONG]}


def _whole(text: str, expected: list[str]) -> None:
    assert "\x1b[" not in text  # NO_COLOR: no colour, no bold, no dim
    for item in expected:
        assert item in text, f"{item} is cut or missing in\n{text}"
    for line in text.splitlines():
        for word in line.replace("│", " ").split():
            if word.startswith(("MEM-", "services/")) and word.endswith("…"):
                pytest.fail(f"cut: {word}")


@pytest.mark.parametrize("args", [("recall",), ("recall", "--explain"),
                                  ("recall", "refund", "--explain", "--include-superseded")])
def test_recall_at_80_columns_shows_whole_ids(store: Path, busy: dict[str, list[str]],
                                              args: tuple[str, ...]) -> None:
    _whole(terminal_support.on_terminal(store, *args), busy["ids"])


def test_history_and_status_at_80_columns_show_whole_ids(cli: Cli, store: Path,
                                                         busy: dict[str, list[str]]) -> None:
    first = busy["ids"][0]
    cli.ok("feedback", first, "--success")
    _whole(terminal_support.on_terminal(store, "history", first), [first])
    status = terminal_support.on_terminal(store, "status", env={"LOA_MEM_NOW": FIXED_SOON})
    _whole(status, [busy["ids"][-1]])


FIXED_SOON = "2026-02-03T10:30:00Z"  # a day before the temporary fact expires


def test_advise_and_gc_at_80_columns_show_whole_paths(cli: Cli, store: Path,
                                                      busy: dict[str, list[str]]) -> None:
    advised = terminal_support.on_terminal(
        store, "advise", "--cold", LONG, "--action", "delete_from_working_set", "--why",
        "finished reconciling the refunds of the outage week, nothing left to check here")
    _whole(advised, [LONG])
    collected = terminal_support.on_terminal(store, "gc")
    _whole(collected, [LONG])


def test_a_wide_terminal_draws_a_table(store: Path, busy: dict[str, list[str]]) -> None:
    text = terminal_support.on_terminal(store, "recall", columns=160)

    assert "┃" in text or "│" in text
    _whole(text, busy["ids"])


# -- the README's claims about every command -------------------------------------------------
def _readme_paragraph() -> str:
    text = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    start = text.index("Every command except `mcp`")
    return text[start:text.index("\n\n", start)]


def test_the_readme_names_exactly_the_commands_without_json() -> None:
    import re

    claimed = set(re.findall(r"`([a-z -]+)`", _readme_paragraph().split(" takes `--json`")[0]))
    without = {" ".join(p) for p, c in terminal_support.commands()
               if "--json" not in terminal_support.options(c)}
    assert without == claimed - {"--json"}


def test_the_readme_names_exactly_the_commands_with_no_commit() -> None:
    import re

    listed = _readme_paragraph().split("take `--no-commit`")[1].split("`loa-mem --help`")[0]
    claimed = set(re.findall(r"`([a-z][a-z -]+)`", listed)) - {"loa-mem commit"}
    having = {" ".join(p) for p, c in terminal_support.commands()
              if "--no-commit" in terminal_support.options(c)}
    assert having == claimed


def test_the_readme_stands_alone() -> None:
    import re

    text = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    for pattern in (r"spec(ification)? section \d", r"\bseed 0\d\d", r"\bissue \d+", r"OWNER\b"):
        assert not re.search(pattern, text, re.IGNORECASE), pattern


# -- progress: on a terminal only ------------------------------------------------------------
def _stderr_on_terminal(root: Path, *args: str) -> str:
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "loa_mem", *args], cwd=root,
                          env={**os.environ, "TERM": "xterm"}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=follower) as process:
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        process.wait()
    os.close(leader)
    return out.decode(errors="replace")


@pytest.mark.parametrize(("args", "label"), [(("validate",), "validating the memory files"),
                                             (("gc", "--dry-run"), "collecting")])
def test_long_operations_show_progress_on_a_terminal_only(cli: Cli, store: Path,
                                                          args: tuple[str, ...],
                                                          label: str) -> None:
    cli.ok("remember", "Deploys go out on Tuesdays.", "-c", "fact")
    assert label in _stderr_on_terminal(store, *args)
    piped = run_loa_mem(store, *args)
    assert label not in piped.stderr and label not in piped.stdout
    assert label not in _stderr_on_terminal(store, *args, "--json")
