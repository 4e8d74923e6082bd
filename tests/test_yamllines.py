"""The plainest grimoire items, read without `re` (`core.yamllines`): whatever it reads, it
reads as the fast reader does (data, lines, key lines, text hash); anything else it leaves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import yamlemit, yamlfast, yamllines

ENTRY = ("- id: MEM-20261122-hd5tzmcq\n  category: fact\n"
         "  content: Pulled note about deploys, retries (and backoff).\n"
         "  summary: Pulled note about deploys\n  confidence: 0.85\n  source:\n"
         "    session_id: pulled\n    timestamp: 2026-11-22T11:00:00Z\n  ttl: 90d\n"
         "  expires_at: 2027-02-20T11:00:00Z\n  tags: [pulled, ci-runs]\n")


def fast(text: str, shift: int) -> list[tuple[object, ...]] | None:
    found = yamlfast.load_part(text, "facts.yaml", shift)
    return None if found is None else [tuple(span) for span in found.spans]


def test_an_entry_as_remember_writes_it_reads_as_the_fast_reader_reads_it() -> None:
    data = {"id": "MEM-20261122-hd5tzmcq", "category": "decision",
            "content": "Use PostgreSQL for the main store.", "summary": "Use PostgreSQL",
            "confidence": 0.95, "source": {"session_id": "manual",
                                           "timestamp": "2026-11-22T11:00:00Z"},
            "ttl": "permanent", "expires_at": None, "tags": ["db", "storage-layer"]}
    written = yamlemit.dump_item(data)
    assert written is not None
    for text in (written, ENTRY, ENTRY + written):
        found = yamllines.read(text, 41)
        assert found is not None
        assert [tuple(span) for span in found] == fast(text, 41)
    assert found[-1][0] == data


VALUES = st.sampled_from([
    "null", "Null", "~", "", " x", "yes", "No", "ON", "y", "nan", "plain words here",
    "Ends with space ", "has: colon", "has #hash", "has#hash", "tab\there", "It's 'quoted'",
    '"double"', "'single'", "0.85", "1", "0", "01", "1.0", "1.5e3", "1_000", ".5", "12:30",
    "90d", "0x1F", "2026-11-22T11:00:00Z", "2026-11-22", "2026-11-22 11:00:00",
    "2026-11-22T11:00:00+01:00", "[]", "[a, b-c]", "[a,b]", "[yes]", "[1]", "[A]", "[a, ]",
    "[a b]", "MEM-20261122-abc", "x - y", "a  b", "café", "- dash", "* star", "& amp", "!tag",
    "|", ">", "{a: b}", "key: value", "[x]]"])
KEYS = st.sampled_from(["id", "category", "content", "summary", "confidence", "ttl",
                        "expires_at", "tags", "note", "Content", "source"])
LINE = st.one_of(
    st.tuples(KEYS, VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["source:", "  session_id: x", "  timestamp: 2026-11-22T11:00:00Z",
                     "  other: x", "   odd: indent", "", "# comment", "content:",
                     "content:  two spaces", "content: |", "  literal text"]))
ITEM = st.lists(LINE, min_size=1, max_size=7).map(
    lambda lines: "- " + "\n  ".join(lines) + "\n")


@settings(max_examples=400, deadline=None)
@given(items=st.lists(ITEM, min_size=1, max_size=3), shift=st.integers(0, 50))
def test_what_it_reads_it_reads_as_the_fast_reader(items: list[str], shift: int) -> None:
    text = "".join(items)
    found = yamllines.read(text, shift)
    if found is not None:
        assert [tuple(span) for span in found] == fast(text, shift)


@given(text=st.sampled_from(["", ENTRY[:-1], "# a comment first\n" + ENTRY, ENTRY + "\n",
                             ENTRY + "  continued: line\n", ENTRY + "-x: y\n",
                             ENTRY.replace("Pulled", "Pullé"), ENTRY.replace("\n", "\r\n")]))
def test_text_that_is_not_whole_plain_items_is_left_to_the_fast_reader(text: str) -> None:
    assert yamllines.read(text, 0) is None
