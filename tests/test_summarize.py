"""summarize: the summary file (frontmatter, References backlinks), the sources' sidecars, and
the three places the text comes from: the model (--text), a configured command, or the built-in
extractive summary."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests import support
from tests import ws_support as ws
from tests.conftest import FIXED_NOW, Cli

SUMMARY = f"{ws.SUMMARIES}/tool-python-3-files.md"


def _outputs(store: Path) -> list[str]:
    paths = [f"tool/python/output-00{n}.json" for n in (1, 2, 3)]
    for n, path in enumerate(paths):
        ws.write(store, path, f'{{"records": {n * 100}, "email_missing": 0.15}}\n')
    return paths


def test_summary_with_model_text_has_frontmatter_backlinks_and_sidecars(cli: Cli,
                                                                        store: Path) -> None:
    paths = _outputs(store)
    text = "### Key Findings\n- Dataset contains 10,432 records\n"
    data = cli.ok("summarize", *paths, "--style", "bullet", "--text", text, "--json").json()

    assert data["path"] == SUMMARY
    assert data["method"] == "model"
    assert (store / SUMMARY).read_text(encoding="utf-8") == (
        "---\nsummary_of:\n"
        '  - "tool/python/output-001.json"\n  - "tool/python/output-002.json"\n'
        '  - "tool/python/output-003.json"\n'
        f'created: "{FIXED_NOW}"\nstyle: bullet\nmethod: model\n---\n\n'
        "## Summary of 3 files\n\n### Key Findings\n- Dataset contains 10,432 records\n\n"
        "---\nReferences:\n"
        "- [output-001.json](../../../tool/python/output-001.json)\n"
        "- [output-002.json](../../../tool/python/output-002.json)\n"
        "- [output-003.json](../../../tool/python/output-003.json)\n")
    for path in paths:
        sidecar = ws.sidecar(store, path)
        assert (sidecar["summarized_in"], sidecar["summary_date"]) == (SUMMARY, FIXED_NOW)
    assert sorted(support.changed_files(store)) == sorted(
        [SUMMARY, "grimoires/loa/memory/events.jsonl", *(p + ".meta.yml" for p in paths)])
    checked = cli.ok("validate", "--json").json()["checked"]
    assert (checked["file_sidecars"], checked["summaries"]) == (3, 1)


def test_the_links_resolve_from_the_summary_to_each_source(cli: Cli, store: Path) -> None:
    paths = _outputs(store)
    cli.ok("summarize", *paths, "--text", "short")
    text = (store / SUMMARY).read_text(encoding="utf-8")
    links = [line.split("](", 1)[1].rstrip(")") for line in text.splitlines()
             if line.startswith("- [")]

    assert [(store / SUMMARY).parent.joinpath(link).resolve() for link in links] == [
        (store / p).resolve() for p in paths]


def test_text_from_stdin(cli: Cli, store: Path) -> None:
    ws.write(store, "notes.md", "x\n")
    cli.ok("summarize", "notes.md", "--style", "narrative", "--text", "-",
           stdin="We chose SQLite.\n")

    text = (store / ws.SUMMARIES / "notes.md").read_text(encoding="utf-8")
    assert "style: narrative" in text
    assert "We chose SQLite." in text


LOG = ("starting build\n" + "".join(f"compiling module {n}\n" for n in range(40))
       + "ERROR: link failed for module 7\ntotal: 41 steps\n")


def test_the_extractive_summary_is_deterministic_and_says_what_it_is(cli: Cli,
                                                                    store: Path) -> None:
    ws.write(store, "build.log", LOG)
    cli.ok("summarize", "build.log", "--name", "first")
    cli.ok("summarize", "build.log", "--name", "second")
    first = (store / ws.SUMMARIES / "first.md").read_text(encoding="utf-8")
    second = (store / ws.SUMMARIES / "second.md").read_text(encoding="utf-8")

    assert first == second
    assert "method: extractive" in first
    assert "not written by a model" in first
    assert ("- first line: `starting build`\n- 1 error line(s)\n"
            "  - `ERROR: link failed for module 7`\n- last line: `total: 41 steps`\n") in first


STYLES = [
    ("bullet", "app.py", "import os\ndef main():\n    pass\nclass Thing:\n    x = 1\n",
     "- `def main():`"),
    ("narrative", "why.md", "# Why\n\nWe moved to SQLite. It was simpler.\n\nThen we shipped.\n",
     "> We moved to SQLite. … Then we shipped."),
    ("schema", "data.json", '{"rows": [{"id": 1, "name": "a"}], "total": 1}\n',
     "- object, 2 key(s)\n  - rows: list of 1\n    - [0]: object, 2 key(s)"),
    ("decision", "adr.md", "Context: slow builds.\nWe decided to cache wheels because CI "
     "takes 9 minutes.\nCosts: disk.\n", "- decided: `We decided to cache wheels"),
]


@pytest.mark.parametrize(("style", "name", "content", "expected"), STYLES,
                         ids=[s[0] for s in STYLES])
def test_each_extractive_style(cli: Cli, store: Path, style: str, name: str, content: str,
                               expected: str) -> None:
    ws.write(store, name, content)
    data = cli.ok("summarize", name, "--style", style, "--json").json()

    assert expected in (store / data["path"]).read_text(encoding="utf-8")


def test_the_diff_style_compares_with_the_last_committed_version(cli: Cli, store: Path) -> None:
    ws.write(store, "config.ini", "port = 80\nhost = a\n")
    ws.write(store, "config.ini", "port = 8080\nhost = a\n")
    data = cli.ok("summarize", "config.ini", "--style", "diff", "--json").json()
    text = (store / data["path"]).read_text(encoding="utf-8")

    assert "- 1 line(s) added, 1 removed since the last committed version" in text
    assert "  - added: `port = 8080`" in text
    assert "  - removed: `port = 80`" in text


def test_a_configured_summarizer_command_writes_the_text(cli: Cli, store: Path) -> None:
    ws.write(store, "tools/summarizer.py",
             "import os, sys\nprint(f'{len(sys.argv) - 1} file(s), style '"
             "f\"{os.environ['LOA_MEM_SUMMARY_STYLE']}: \" + ' '.join(sys.argv[1:]))\n")
    ws.config(store, f'summarizer: {{command: "{sys.executable} tools/summarizer.py"}}')
    ws.write(store, "a.txt", "x\n")
    data = cli.ok("summarize", "a.txt", "--style", "decision", "--json").json()

    assert data["method"] == "command"
    text = (store / data["path"]).read_text(encoding="utf-8")
    assert "1 file(s), style decision: a.txt" in text
    builtin = cli.ok("summarize", "a.txt", "--extractive", "--name", "b", "--json").json()
    assert builtin["method"] == "extractive"


def test_a_failing_summarizer_command_writes_nothing(cli: Cli, store: Path) -> None:
    ws.config(store, f'summarizer: {{command: "{sys.executable} -c \'import sys; '
              f'sys.exit(\\"model offline\\")\'"}}')
    ws.write(store, "a.txt", "x\n")
    before = support.snapshot(store)
    outcome = cli("summarize", "a.txt")

    assert outcome.code == 1
    assert "failed: model offline" in outcome.stderr
    assert support.snapshot(store) == before


@pytest.mark.parametrize(("args", "said"), [
    (("ghost.txt",), "no file ghost.txt"),
    (("a.txt", "--style", "poem"), "unknown summary style (--style)"),
    (("a.txt", "--text", "the key is sk-ant-abcdefghijklmnopqrstuvwxyz123456"), "API key"),
    (("a.txt", "--name", "../escape"), "not a plain file name"),
    (("grimoires/loa/memory/events.jsonl",), "not a file to summarize"),
])
def test_summarize_refusals_write_nothing(cli: Cli, store: Path, args: tuple[str, ...],
                                          said: str) -> None:
    ws.write(store, "a.txt", "x\n")
    before = support.snapshot(store)
    outcome = cli("summarize", *args)

    assert outcome.code == 1
    assert said in outcome.stderr
    assert support.snapshot(store) == before
