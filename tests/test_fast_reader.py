"""The fast reader of grimoire files reads every file exactly as the full YAML parser does: the
same entries, the same lines, the same key lines, the same text hashes; for each entry loa-mem
can write, and for files edited by hand in every odd way YAML allows (those go to the full
parser, which reports their errors as ever)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import yamlfast, yamlio
from loa_mem.core.errors import InvalidFile

HEADER = "# Loa memory: facts. Managed by loa-mem; hand edits and comments are kept.\n"

WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=160)
SCALARS = st.one_of(WORDS, st.integers(-10**6, 10**6), st.floats(allow_nan=False),
                    st.booleans(), st.none(),
                    st.sampled_from(["yes", "No", "null", "~", "0.5", "007", "1:20", "30d",
                                     "2026-02-01T10:30:00Z", "a: b", "x #y", "- z", "'q'",
                                     "tab\there", "line\nbreak\n", "  padded  ", ""]))
TAGS = st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True), max_size=4)
ENTRIES = st.fixed_dictionaries(
    {"id": st.from_regex(r"MEM-2026[01][0-9]{3}-[a-z2-7]{8}", fullmatch=True),
     "category": st.sampled_from(["fact", "decision", "error"]),
     "content": WORDS,
     "confidence": st.sampled_from([0.5, 0.85, 0.95, 1])},
    optional={"summary": WORDS, "source": st.fixed_dictionaries(
        {"session_id": WORDS, "timestamp": st.just("2026-02-01T10:30:00Z")},
        optional={"agent": SCALARS}),
        "ttl": st.sampled_from(["permanent", "30d"]), "expires_at": st.none(),
        "tags": TAGS, "related_memories": st.lists(SCALARS, max_size=3), "extra": SCALARS,
        "effectiveness": st.fixed_dictionaries({"applied": st.integers(0, 9)})})


def same(text: str) -> None:
    try:
        expected: Any = yamlio.load_list(text, "facts.yaml")
    except InvalidFile as error:
        expected = str(error)
    try:
        found: Any = yamlfast.load_list(text, "facts.yaml")
    except InvalidFile as error:
        found = str(error)
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(ENTRIES, min_size=1, max_size=6))
def test_every_entry_loa_mem_writes_reads_the_same(entries: list[dict[str, Any]]) -> None:
    same(HEADER + "".join(yamlio.dump_item(e) for e in entries))


@settings(max_examples=150, deadline=None)
@given(entries=st.lists(ENTRIES, min_size=1, max_size=4),
       between=st.lists(st.sampled_from(["", "# note", "  # indented note", "   "]),
                        min_size=1, max_size=4))
def test_comments_and_blank_lines_between_entries(entries: list[dict[str, Any]],
                                                  between: list[str]) -> None:
    gaps = (between * len(entries))[:len(entries)]
    same(HEADER + "".join(yamlio.dump_item(e) + gap + "\n" for e, gap in zip(
        entries, gaps, strict=True)))


ENTRY = ("- id: MEM-20260201-abcdefgh\n  category: fact\n  content: {content}\n"
         "  confidence: 0.85\n  source:\n    session_id: s1\n"
         "    timestamp: 2026-02-01T10:30:00Z\n  tags: [a, b]\n")
HAND_EDITS = {
    "literal block": "|\n    first line\n\n    # not a comment\n",
    "literal block, stripped": "|-\n    one\n    two",
    "folded block": ">\n    one\n    two\n",
    "double quotes": '"tab\\there"',
    "quoted over lines": "'one\n    two ''three'''",
    "plain over lines": "one\n    two\n\n    three",
    "inline comment": "text # a comment",
    "anchor": "&a text",
    "tag": "!!str 5",
    "flow mapping": "{a: 1}",
    "empty": "",
    "trailing spaces": "text   ",
    "colon inside": "ratio 1:2 and a:b",
    "hash inside": "issue#12 fixed",
}


@pytest.mark.parametrize("name", list(HAND_EDITS))
def test_hand_edited_values(name: str) -> None:
    entry = ENTRY.replace("{content}", HAND_EDITS[name])
    same(HEADER + entry + entry.replace("abcdefgh", "bcdefghi"))
    same(HEADER + entry.replace("{content}", "x") + "\n\n# tail\n")


@pytest.mark.parametrize("text", [
    "[]\n", "", "# only a comment\n", "\n\n", "  \n", "#x", "   # c", "# a\n  # b\n\n",
    "---\n" + ENTRY, ENTRY + "...\n", ENTRY + "- \n",
    ENTRY + "...\n" + ENTRY, ENTRY + "---\n" + ENTRY, ENTRY + "--- # x\n",
    "-\n  id: MEM-1\n", "  - id: MEM-1\n    category: fact\n", ENTRY.replace("\n", "\r\n"),
    ENTRY + "<<<<<<< HEAD\n" + ENTRY + "=======\n>>>>>>> other\n", ENTRY + ENTRY,
    ENTRY.replace("  tags: [a, b]\n", "  tags:\n  - a\n  - b\n"),
    ENTRY.replace("  tags: [a, b]\n", "  tags:\n    - a\n    - 'b c'\n"),
    ENTRY.replace("  category: fact\n", "  category: fact\n  category: error\n"),
    ENTRY.replace("  category: fact\n", "  category:\n"),
    ENTRY.replace("    session_id: s1\n", "     session_id: s1\n"),
    ENTRY.rstrip("\n"),
])
def test_odd_files(text: str) -> None:
    same(text)


# values written as they stand on one line, as a hand edit or another tool may leave them
RAW_VALUES = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
            max_size=40),
    st.sampled_from(["yes", "Null", "~", "0.5", "-0.0", "1e3", "0x1F", "007", "1:20", "1_000",
                     ".inf", "30d", "2026-02-01T10:30:00Z", "2026-02-01", "2026-13-45T99:99:99Z",
                     "[a, b]", "[a, 'b']", "[]", "[a,, b]", "[1, true, null]", "[yes, off]",
                     "[0x1f, 1e3, 0o7, 1_0]", "[007, 1-2]", "[-a, b]", "[a,b]", "{}", "'q''s'",
                     "'open", "a: b", "x #y", "x#y", "- z", "? q", "&a x", "*a", "!x y", "|",
                     ">", "%x", "@x", "`x", "\"d\"", "text  ", " lead", "MEM-20260201-x"]))
RAW_KEYS = ["content", "summary", "confidence", "ttl", "tags"]


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({key: RAW_VALUES for key in RAW_KEYS}),
                     min_size=2, max_size=8),
       session=RAW_VALUES, stamp=RAW_VALUES)
def test_entries_of_one_layout_read_the_same_whatever_their_values(
        rows: list[dict[str, str]], session: str, stamp: str) -> None:
    """After the first entry of a layout, the others of that layout are read by matching the
    layout whole: whatever their values, they read as the full parser reads them."""
    text = HEADER
    for number, row in enumerate(rows):
        text += (f"- id: MEM-20260201-{number:08d}\n  category: fact\n"
                 + "".join(f"  {key}: {row[key]}\n" for key in RAW_KEYS[:3])
                 + f"  source:\n    session_id: {session}\n    timestamp: {stamp}\n"
                 + "".join(f"  {key}: {row[key]}\n" for key in RAW_KEYS[3:]))
    same(text)


@pytest.mark.parametrize("odd", [
    "  # a comment inside\n", "\n", "  extra: 1\n", "    nested: deeper\n", "  content: again\n",
])
def test_an_entry_that_breaks_a_layout_met_before_reads_the_same(odd: str) -> None:
    """An entry like the ones before it but for one line is read line by line, as before."""
    one = ENTRY.replace("{content}", "plain words")
    same(HEADER + one + one.replace("abcdefgh", "bcdefghi").replace("  tags:", odd + "  tags:")
         + one.replace("abcdefgh", "cdefghij"))
    same(HEADER + one + one.replace("abcdefgh", "bcdefghi").rstrip("\n"))


@settings(max_examples=100, deadline=None)
@given(entries=st.lists(ENTRIES, min_size=1, max_size=6))
def test_spans_for_the_index_are_those_of_the_items(entries: list[dict[str, Any]]) -> None:
    """The cold build takes each item's span without the item objects: the same spans."""
    text = HEADER + "".join(yamlio.dump_item(e) for e in entries) * 2
    spans = yamlfast.load_spans(text, "facts.yaml")
    expected = yamlio.load_list(text, "facts.yaml")
    assert spans.spans == [item.span() for item in expected.items]
    assert (spans.indent, spans.flow) == (expected.indent, expected.flow)
