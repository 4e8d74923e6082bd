"""The fast paths give the answer of the slow ones on files a person or another tool could
write: the fast reader reads every item as the full parser does (its types too), and appending
entries without reading the whole file back never leaves a file that no longer parses, nor
drops a line of an entry already there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import yamlfast, yamlio
from loa_mem.core.errors import InvalidFile
from tests.conftest import Cli, git, run_loa_mem
from tests.support import MEMORY, entries, grimoire, typed
from tests.test_context_catchup import context, from_scratch, item, pull, remember


def read(reader: Any, text: str) -> Any:
    try:
        found = reader(text, "facts.yaml")
    except InvalidFile as error:
        return str(error)
    return [(typed(i.data), i.first_line, i.last_line, i.key_lines, i.text_hash)
            for i in found.items], found.indent, found.flow


def same(text: str) -> None:
    assert read(yamlfast.load_list, text) == read(yamlio.load_list, text)
    if not isinstance(read(yamlio.load_list, text), str):
        spans = yamlfast.load_spans(text, "facts.yaml").spans
        expected = [item.span() for item in yamlio.load_list(text, "facts.yaml").items]
        assert [(typed(s[0]), *s[1:]) for s in spans] == [(typed(s[0]), *s[1:])
                                                          for s in expected]


ENTRY = "- id: MEM-20260201-abcdefgh\n  category: fact\n  content: {content}\n"


@pytest.mark.parametrize("block", ["|", "|+", "|2", ">", ">+", "|-"])
def test_a_block_on_the_files_last_line_without_its_line_break(block: str) -> None:
    """`|` keeps the last line's break only when there is one: the last entry of a file saved
    without a final line break reads as the parser reads it, whether the fast reader reads it
    itself or hands it to the parser on its own."""
    body = ENTRY.replace("{content}", block + "\n    first\n    last")[:-1]
    same(body)
    same(ENTRY.replace("{content}", "plain") + body)
    same(body.replace("last", "last\n  summary: |\n    end"))
    same(body + "\n")


@pytest.mark.parametrize("blank", ["", "  ", "   ", "    ", "      "])
def test_a_block_whose_first_lines_are_blank(blank: str) -> None:
    """The indentation of a block is its first line with text; blank lines before it keep
    none of their spaces (and more spaces than that is the parser's error to report)."""
    text = ENTRY.replace("{content}", f"|-\n{blank}\n    text\n      deeper")
    same(text + ENTRY.replace("abcdefgh", "bcdefghi").replace("{content}", "x"))


BLOCK_LINES = st.sampled_from(["text", "  deeper", "# not a comment", "- dash", "key: v",
                               "trailing  ", "'q'", "", " ", "  ", "     ", "        "])


@settings(max_examples=300, deadline=None)
@given(indicator=st.sampled_from(["|", "|-", "|+", ">", ">-", ">+", "|2", "|1-", "|4"]),
       depth=st.integers(1, 6), body=st.lists(BLOCK_LINES, max_size=5),
       after=st.sampled_from(["", "  summary: x\n", "- id: MEM-2\n  content: y\n", "# c\n"]),
       final=st.booleans())
def test_hand_written_blocks_read_as_the_parser_reads_them(
        indicator: str, depth: int, body: list[str], after: str, final: bool) -> None:
    lines = [" " * depth + line if line.strip() else line for line in body]
    text = ENTRY.replace("{content}", indicator + "".join("\n" + line for line in lines))
    text = text[:-1] + ("\n" + after if after else "\n" if final else "")
    same(text)
    same(text + text.replace("abcdefgh", "bcdefghi"))


# values, keys and lines as people and other tools write them: the fast reader's own forms,
# and every form it must leave to the parser
ODD_VALUES = [
    "plain words", "yes", "No", "~", "0.5", "007", "1:20", "30d", "1_000", "0o7", "+1", "-0",
    ".5", "1.", "1e3", "-.inf", "0x1F", "2026-02-01T10:30:00Z", "2026-02-01", "'q''s'",
    "'a # b'", "x #y", "x#y", "a:b", "http://x.y/z", "=", "<<", "\"d\\tq\"", "text  ",
    "[a, b]", "[a, 'b']", "[]", "[a,b]", "[1, true, null]", "{}", "{a: 1}", "&x v", "*x",
    "!!str 5", "|", "|-", "|+", "|2", ">", ">-", "e\u0301", "\u05e9\u05dc\u05d5\u05dd",
    "\U0001f600 emoji", "a\u00a0b", "-", "- x", "? q", "a :b", "'open", "''", "True", "0",
    "3.11.7", "...", "---", "a  b", "#", "x" * 300]
ODD_KEYS = ["content", "summary", "tags", "source", "on", "y", "1", "_x", "a-b", "key ", "'q'",
            "k\u00e9", "id"]
BLOCK_LINES = ["text", "", "  indented more", "# not a comment", "text  ", "- dash", "key: v"]
ODD_LINES = ["    continued words", "    # comment", "", "  # c", "   more: x", "  k: v # c",
             "  - x", "...", "  k:  v", "#c"]


def _odd_entry(rand: Any, number: int) -> list[str]:
    lines = [f"- id: MEM-20260201-{number:08d}"]
    for name in rand.sample(ODD_KEYS, rand.randint(1, 5)):
        kind = rand.random()
        if kind < 0.5:
            lines.append(f"  {name}: {rand.choice(ODD_VALUES)}")
        elif kind < 0.7:
            lines.append(f"  {name}: {rand.choice(['|', '|-', '|+', '|2', '>', '>-', '|1-'])}")
            depth = rand.choice([4, 4, 3, 5, 6])
            for _ in range(rand.randint(0, 4)):
                line = rand.choice(BLOCK_LINES)
                lines.append(" " * depth + line if line else rand.choice(["", "  ", " " * 7]))
        elif kind < 0.85:
            lines.append(f"  {name}:")
            lines += [f"{rand.choice(['    ', '   '])}{key}: {rand.choice(ODD_VALUES)}"
                      for key in rand.sample(["session_id", "timestamp", "on", "x"],
                                             rand.randint(0, 3))]
        elif kind < 0.95:
            lines.append(f"  {name}:")
            lines += [f"{rand.choice(['  - ', '    - '])}{rand.choice(ODD_VALUES)}"
                      for _ in range(rand.randint(0, 3))]
        else:
            lines += [f"  {name}: {rand.choice(ODD_VALUES)}", rand.choice(ODD_LINES)]
    return lines


@settings(max_examples=400, deadline=None)
@given(rand=st.randoms(use_true_random=False), copies=st.integers(1, 4),
       end=st.sampled_from(["\n", "", "\n\n", "\n# end\n"]))
def test_hand_written_files_read_as_the_parser_reads_them(rand: Any, copies: int,
                                                          end: str) -> None:
    """Entries of one layout repeated (the fast reader learns it) with one value changed, and
    entries of any other: the fast reader's items, lines, key lines and hashes are the
    parser's, or the parser's error."""
    first = _odd_entry(rand, 0)
    lines = ["# Loa memory: facts."]
    for number in range(copies):
        again = [line.replace("00000000", f"{number:08d}") for line in first]
        at = rand.randrange(len(again))
        if ": " in again[at] and not again[at].startswith("- "):
            again[at] = again[at].split(": ", 1)[0] + ": " + rand.choice(ODD_VALUES)
        lines += again + _odd_entry(rand, 100 + number)
    same("\n".join(lines) + end)


@pytest.mark.parametrize("control", ["\x00", "\x01", "\x07", "\x08", "\x0e", "\x1b", "\x1f",
                                     "\x7f", "\x80", "\x86", "\x9b", "\x9f", "\ufffe"])
def test_a_control_character_yaml_refuses_is_the_parsers_error(control: str) -> None:
    """Terminal output pasted into an entry brings escape characters, which YAML refuses: the
    file is the parser's error on every path, not text the fast reader reads."""
    text = ENTRY.replace("{content}", f"red {control}[31mtext") + ENTRY.replace(
        "abcdefgh", "bcdefghi").replace("{content}", "plain")
    assert isinstance(read(yamlio.load_list, text), str)
    same(text)
    from loa_mem.core import spanhash

    assert spanhash.cut(text.encode("utf-8")) is None  # an edit's catch-up reads it whole


@pytest.mark.parametrize("control", ["\x86", "\x9b", "\x01"])
def test_a_control_character_pasted_outside_loa_mem_is_one_error_on_every_path(
        cli: Cli, store: Path, control: str) -> None:
    """A C1 control character (U+0086 from text that went through Latin-1 twice, CSI from a
    terminal) written into a grimoire by an editor or a pull: recall, context and validate,
    whether the index catches up with the edit or is built from scratch, all give the
    parser's one line naming the file and the line: recall exits 1 with it, validate reports
    it and exits 1, the session-start block shows it under what could not be read."""
    ids = [cli.ok("remember", f"Fact {n} about queues", "-c", "fact", "--json").json()["id"]
           for n in range(3)]
    cli.ok("recall", "queues")  # the index is warm before the edit
    path = grimoire(store, "fact")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("content: Fact 1 about", f"content: Fact 1 {control}about"),
                    encoding="utf-8")
    line = text[:text.index("content: Fact 1 about")].count("\n") + 1
    answers = []
    for command in (["recall", "queues"], ["context"], ["validate"], ["recall", "queues"]):
        if answers:
            for cached in (store / ".git" / "loa-mem").glob("*.sqlite3*"):
                cached.unlink()
        done = run_loa_mem(store, *command)
        if command[0] in ("context", "validate"):  # a report, on stdout
            assert done.returncode == (command[0] == "validate")
            assert f"{MEMORY}/facts.yaml:{line}:" in done.stdout, done.stdout
            answers.append(done.stdout)
            continue
        assert done.returncode == 1, (command, done.stdout)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f"{MEMORY}/facts.yaml:{line}:" in done.stderr, (command, done.stderr)
        answers.append(done.stderr)
    assert ids[1] not in "".join(answers)


# -- appending entries ---------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "[ ]\n", "[\n]\n", "--- []\n", "--- !!seq []\n", "# notes\n[] # none yet\n# more\n",
    "[]\n...\n"])
def test_remember_into_a_file_whose_empty_list_is_written_another_way(
        cli: Cli, store: Path, text: str) -> None:
    path = grimoire(store, "fact")
    path.write_text(text, encoding="utf-8")
    git(store, "commit", "-qam", "an empty list written by hand")
    memory_id = cli.ok("remember", "Deploys run from CI", "-c", "fact", "--json").json()["id"]
    assert [e["id"] for e in entries(store, "fact")] == [memory_id]
    assert all(line in path.read_text(encoding="utf-8") for line in text.splitlines()
               if line.startswith("#"))
    _validates_from_scratch(cli, store)


@pytest.mark.parametrize("end", ["...\n", "...\n# the end\n", "... # end\n"])
def test_remember_after_a_document_end_marker(cli: Cli, store: Path, end: str) -> None:
    """A file another tool ended with `...`: the new entry is one of its list, not the start
    of a second document that no YAML parser reads."""
    first = cli.ok("remember", "First fact", "-c", "fact", "--json").json()["id"]
    path = grimoire(store, "fact")
    path.write_text(path.read_text(encoding="utf-8") + end, encoding="utf-8")
    git(store, "commit", "-qam", "ended by another tool")
    second = cli.ok("remember", "Second fact", "-c", "fact", "--json").json()["id"]
    assert [e["id"] for e in entries(store, "fact")] == [first, second]
    shown = git(store, "show", f"HEAD:{MEMORY}/facts.yaml")
    assert [e["id"] for e in yamlio.load(shown, "facts.yaml")] == [first, second]
    _validates_from_scratch(cli, store)


def test_a_commit_beside_unstaged_edits_keeps_every_line_of_the_entries(
        cli: Cli, store: Path) -> None:
    """With the user's own edits to the file unstaged, loa-mem commits its entry on top of the
    committed text: a line of another entry that reads `[]` (inside a block) is kept."""
    path = grimoire(store, "fact")
    path.write_text("- id: MEM-20260101-aaaaaaaa\n  category: fact\n  content: |\n"
                    "    the empty list is written\n    []\n    in YAML\n  confidence: 0.9\n",
                    encoding="utf-8")
    git(store, "commit", "-qam", "a block with a [] line")
    path.write_text(path.read_text(encoding="utf-8") + "# my own note\n", encoding="utf-8")
    cli.ok("remember", "Second fact", "-c", "fact")
    assert git(store, "status", "--short").split() == ["M", f"{MEMORY}/facts.yaml"]
    for text in (git(store, "show", f"HEAD:{MEMORY}/facts.yaml"),
                 path.read_text(encoding="utf-8")):
        first = yamlio.load(text, "facts.yaml")[0]
        assert first["content"] == "the empty list is written\n[]\nin YAML\n"


def _validates_from_scratch(cli: Cli, store: Path) -> None:
    """`validate` with every cache gone reads the files themselves."""
    for cached in (Path(git(store, "rev-parse", "--absolute-git-dir").strip())
                   / "loa-mem").glob("*"):
        if cached.is_file():
            cached.unlink()
    cli.ok("validate")


# -- anchors and aliases tie entries together ----------------------------------------------
def _aliased(cli: Cli, store: Path, alias: int) -> tuple[list[str], Path, str]:
    """Three facts remembered, the first's content made the anchor `shared` and fact number
    `alias`'s content an alias of it, by an edit outside loa-mem: (their ids, the file, its
    text)."""
    ids = [cli.ok("remember", f"Fact {n} about queues", "-c", "fact", "--json").json()["id"]
           for n in range(3)]
    path = grimoire(store, "fact")
    text = path.read_text(encoding="utf-8").replace(
        "content: Fact 0 about queues", "content: &shared Fact 0 about queues").replace(
        f"content: Fact {alias} about queues", "content: *shared")
    path.write_text(text, encoding="utf-8")
    return ids, path, text


def _contents(cli: Cli, *words: str) -> dict[str, Any]:
    found = cli.ok("recall", *words, "--limit", "50", "--json").json()["results"]
    return {r["id"]: r["content"] for r in found}


def test_an_anchor_edited_outside_loa_mem_changes_the_entries_that_alias_it(
        cli: Cli, store: Path) -> None:
    """Only the entries whose text changed are read again after an edit outside loa-mem; an
    entry whose text is an alias of a changed anchor changed too."""
    ids, path, text = _aliased(cli, store, 2)
    assert _contents(cli, "queues")[ids[2]] == "Fact 0 about queues"
    path.write_text(text.replace("&shared Fact 0 about queues", "&shared Fact 0 about kafka"),
                    encoding="utf-8")
    assert _contents(cli, "kafka") == {ids[0]: "Fact 0 about kafka",
                                       ids[2]: "Fact 0 about kafka"}


@pytest.mark.parametrize("edit", ["the anchor taken out", "the entry with the anchor deleted"])
def test_an_anchor_deleted_outside_loa_mem_is_missed_as_in_a_cold_build(
        cli: Cli, store: Path, edit: str) -> None:
    """An alias whose anchor an outside edit deleted no longer reads: the refresh answers as
    a build from scratch does (the parser's one-line error), not with the old value."""
    ids, path, text = _aliased(cli, store, 1)  # the alias is not the file's last entry
    assert _contents(cli, "queues")[ids[1]] == "Fact 0 about queues"
    if edit == "the anchor taken out":
        text = text.replace("&shared Fact 0", "Fact 0")
    else:
        start = text.index(f"- id: {ids[0]}")
        text = text[:start] + text[text.index(f"- id: {ids[1]}"):]
    path.write_text(text, encoding="utf-8")
    refreshed = run_loa_mem(store, "recall", "queues")
    for cached in (store / ".git" / "loa-mem").glob("index.sqlite3*"):
        cached.unlink()
    cold = run_loa_mem(store, "recall", "queues")
    assert cold.returncode == 1 and "undefined alias" in cold.stderr
    assert (refreshed.returncode, refreshed.stdout, refreshed.stderr) == (
        cold.returncode, cold.stdout, cold.stderr)


def _large_file(count: int = 3000) -> list[str]:
    """Entries enough for a file read in parts (over twice a part's 256 KB)."""
    return [f"- id: MEM-20260201-{n:08d}\n  category: fact\n  content: Zebra note {n} on a "
            f"large file, long enough to fill the part of a file that one process reads.\n"
            f"  confidence: 0.9\n  source:\n    session_id: s\n"
            f"    timestamp: 2026-02-01T10:00:00Z\n  tags: [zebra]\n" for n in range(count)]


def test_the_same_anchor_in_two_parts_of_a_large_file_is_the_parsers_error(
        cli: Cli, store: Path) -> None:
    """A fresh clone reads a large file in parts: one anchor written twice, far apart, is the
    error it is when the file is read whole, not two entries read apart."""
    items = _large_file()
    for n in (10, 2900):
        items[n] = items[n].replace("content: Zebra", "content: &note Zebra")
    path = grimoire(store, "fact")
    path.write_text("".join(items), encoding="utf-8")
    line = sum(item.count("\n") for item in items[:2900]) + 3
    for cached in (store / ".git" / "loa-mem").glob("index.sqlite3*"):
        cached.unlink()
    failed = run_loa_mem(store, "recall", "zebra")
    assert failed.returncode == 1
    assert f"{MEMORY}/facts.yaml:{line}:" in failed.stderr and "Traceback" not in failed.stderr


@pytest.mark.parametrize(("text", "anchors"), [
    ("content: &a x", True), ("  &a key: v", True), ("tags: [&a x, b]", True),
    ("k: !!str &a x", True), ("- *x", False), ("content: make && deploy", False),
    ("content: R&D and Q&A", False), ("k: a *b", False)])
def test_what_may_be_an_anchor(text: str, anchors: bool) -> None:
    assert yamlfast.may_anchor(text, "&") is anchors
    assert yamlfast.may_anchor(text) is (anchors or "*x" in text)


# -- the session start after a pull --------------------------------------------------------
@pytest.fixture
def started(store: Path) -> Path:
    """A store of a few entries whose caches the session start has just written."""
    remember(store, "Use PostgreSQL for the main store.", "decision", "--confidence", "0.95")
    remember(store, "The CI runs on two cores.", "fact")
    context(store)
    return store


@pytest.mark.parametrize("change", ["document end", "document end and a comment",
                                    "the same anchor", "the same id twice"])
def test_a_pull_that_appends_after_what_the_file_ends_with_gives_the_block_from_scratch(
        started: Path, tmp_path_factory: pytest.TempPathFactory, change: str) -> None:
    """The session start after a pull reads the appended entries alone only when appending
    is all that happened: after a document end marker (`...`) the file no longer parses, and
    the start from scratch says so; an anchor written again does not parse either."""
    facts = grimoire(started, "fact")
    new = item("MEM-20260131-pulled01", "Deploys need two approvals.")
    if change.startswith("document end"):
        facts.write_text(facts.read_text(encoding="utf-8") + "...\n"
                         + ("# the end\n" if change.endswith("comment") else ""),
                         encoding="utf-8")
    elif change == "the same anchor":
        facts.write_text(facts.read_text(encoding="utf-8").replace(
            "content: The CI", "content: &a The CI"), encoding="utf-8")
        new = new.replace("content: Deploys", "content: &a Deploys")
    else:
        new += new.replace("Deploys need", "Deploys want")
    context(started)
    pull(started, "fact", new, event=False)
    block = context(started)[0]
    assert block == from_scratch(started, tmp_path_factory.mktemp("copies"))
    if change != "the same id twice":
        assert "## Could not be read\n- grimoires/loa/memory/facts.yaml:" in block


# -- recall's command line -----------------------------------------------------------------
def test_a_limit_past_what_the_index_can_count_is_a_usage_error(cli: Cli, store: Path) -> None:
    """Both ways in, the fast path and the full command: one line naming the limit, exit 2,
    no crash report."""
    cli.ok("remember", "Kafka queues rebalance", "-c", "fact")
    huge = str(2**64)
    fast = run_loa_mem(store, "recall", "kafka", "--limit", huge)
    slow = cli("recall", "kafka", "--limit", huge)
    for code, stderr in ((fast.returncode, fast.stderr), (slow.code, slow.stderr)):
        assert code == 2
        assert "--limit" in stderr and f"must be at most 1,000,000 (got {huge})" in stderr
        assert "unexpected error" not in stderr
    assert run_loa_mem(store, "recall", "kafka", "--limit", "1000000").returncode == 0


@pytest.mark.parametrize(("command", "option", "value"), [
    ("context", "--budget", "\u00b2"), ("context", "--budget", "9" * 5000),
    ("recall", "--limit", "9" * 5000)])
def test_a_number_the_fast_paths_cannot_read_is_the_full_commands_usage_error(
        cli: Cli, store: Path, command: str, option: str, value: str) -> None:
    """A digit that is not a decimal one, or more digits than Python reads as a number:
    the fast path leaves it to the full command, which names the option (no traceback)."""
    cli.ok("remember", "Kafka queues rebalance", "-c", "fact")
    done = run_loa_mem(store, command, option, value)
    assert done.returncode == 2
    assert f"invalid value for '{option}'" in done.stderr and "Traceback" not in done.stderr


# -- a file's last line break --------------------------------------------------------------
LAST_BLOCK = ("- id: MEM-20260101-bbbbbbbb\n  category: fact\n  content: Other fact\n"
              "  confidence: 0.9\n- id: MEM-20260101-aaaaaaaa\n  category: fact\n"
              "  confidence: 0.9\n  content: |\n    Kept as written\n")


def _content(cli: Cli, memory_id: str = "MEM-20260101-aaaaaaaa") -> str:
    return str(cli.ok("show", memory_id, "--json").json()["entry"]["content"])


def _cold_content(cli: Cli, store: Path) -> str:
    (store / ".git" / "loa-mem" / "index.sqlite3").unlink()
    return _content(cli)


def test_an_editor_that_drops_the_final_line_break_changes_a_last_block(
        cli: Cli, store: Path) -> None:
    """Only the changed entries are read again after an edit, matched by a hash of their
    text that does not see the file's final line break: the last entry is read again all the
    same, since a `|` block there keeps that break or not."""
    path = grimoire(store, "fact")
    path.write_text(LAST_BLOCK, encoding="utf-8")
    assert _content(cli) == "Kept as written\n"
    path.write_text(LAST_BLOCK[:-1], encoding="utf-8")
    assert _content(cli) == "Kept as written" == _cold_content(cli, store)
    path.write_text(LAST_BLOCK, encoding="utf-8")
    assert _content(cli) == "Kept as written\n" == _cold_content(cli, store)


def test_remember_after_a_last_block_without_its_line_break(cli: Cli, store: Path) -> None:
    """Appending gives the file's last line its line break, which a `|` block there keeps:
    the index reads that entry again, as a build from the file does."""
    path = grimoire(store, "fact")
    path.write_text(LAST_BLOCK[:-1], encoding="utf-8")
    git(store, "commit", "-qam", "saved without a final line break")
    assert _content(cli) == "Kept as written"
    cli.ok("remember", "Appended fact", "-c", "fact")
    assert _content(cli) == "Kept as written\n" == _cold_content(cli, store)


def test_markdown_in_an_edited_entry_is_read_with_the_changed_entries_alone(
        cli: Cli, store: Path) -> None:
    """Only anchors send an edited file to a whole read: `**bold**` at a line's start in a
    block is text, and an alias whose anchor is elsewhere does not read alone anyway."""
    path = grimoire(store, "fact")
    path.write_text(LAST_BLOCK.replace("Kept as written\n", "**Kept** as written\n    *x\n")
                    + "- id: MEM-20260101-cccccccc\n  category: fact\n  content: &c Anchored\n"
                    "  confidence: 0.9\n- id: MEM-20260101-dddddddd\n  category: fact\n"
                    "  content: *c\n  confidence: 0.9\n", encoding="utf-8")
    assert _content(cli, "MEM-20260101-dddddddd") == "Anchored"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("**Kept** as", "**Still kept** as").replace(
        "content: *c", "content: *c\n  note: *c"), encoding="utf-8")
    assert _content(cli) == "**Still kept** as written\n*x\n"
    assert cli.ok("show", "MEM-20260101-dddddddd", "--json").json()["entry"]["note"] == "Anchored"
    assert _cold_content(cli, store) == "**Still kept** as written\n*x\n"
