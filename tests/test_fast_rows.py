"""A cold build makes the rows of most entries straight from their values (`fastrows`): each
row is the one the general path makes from the entry's data, whatever the values, so the index
a fresh clone builds is the index any other path builds."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import clock, yamlfast, yamlio
from loa_mem.memory.fastrows import Preparer
from loa_mem.memory.indexrows import file_rows
from tests.test_fast_reader import ENTRIES, HEADER, RAW_KEYS, RAW_VALUES

PATH = "grimoires/loa/memory/facts.yaml"


def same_rows(text: str, archived: bool = False, shift: int = 0) -> None:
    """The rows of `text` read as a part `shift` lines into its file, both ways."""
    kept = frozenset([PATH] if archived else [])
    found = Preparer(kept).part_rows(PATH, text, shift)
    spans = yamlfast.load_part(text, PATH, shift)
    expected = None if spans is None else file_rows(kept, PATH, spans)
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(ENTRIES, min_size=1, max_size=5), archived=st.booleans(),
       shift=st.integers(0, 5000))
def test_entries_loa_mem_writes_make_the_rows_of_the_general_path(
        entries: list[dict[str, Any]], archived: bool, shift: int) -> None:
    # twice: the second time each layout is one met before
    same_rows("".join(yamlio.dump_item(e) for e in entries) * 2, archived, shift)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({key: RAW_VALUES for key in RAW_KEYS}),
                     min_size=2, max_size=8),
       session=RAW_VALUES, stamp=st.one_of(RAW_VALUES, st.sampled_from([
           "2026-02-01T10:30:00Z", "2026-02-01T10:30:00+00:00", "2026-02-01T10:30:00.5Z",
           "2026-02-01"])))
def test_entries_of_one_layout_make_the_same_rows_whatever_their_values(
        rows: list[dict[str, str]], session: str, stamp: str) -> None:
    text = ""
    for number, row in enumerate(rows):
        text += (f"- id: MEM-20260201-{number:08d}\n  category: fact\n"
                 + "".join(f"  {key}: {row[key]}\n" for key in RAW_KEYS[:3])
                 + f"  source:\n    session_id: {session}\n    timestamp: {stamp}\n"
                 + "".join(f"  {key}: {row[key]}\n" for key in RAW_KEYS[3:]))
    same_rows(HEADER + text)


ENTRY = ("- id: MEM-20260201-{n:08d}\n  category: fact\n  content: Words {n}.\n"
         "  summary: Words\n  confidence: 0.85\n  source:\n    session_id: s1\n"
         "    timestamp: 2026-02-01T10:30:00Z\n  ttl: permanent\n  expires_at: null\n"
         "  tags: [a, b]\n")


@pytest.mark.parametrize("change", [
    ("  confidence: 0.85\n", "  confidence: 1\n"), ("  confidence: 0.85\n", "  confidence: -0.0\n"),
    ("  confidence: 0.85\n", "  confidence: null\n"), ("  summary: Words\n", "  summary: null\n"),
    ("  summary: Words\n", "  summary: Other\n"), ("  expires_at: null\n", "  expires_at: ''\n"),
    ("  expires_at: null\n", "  expires_at: 2026-03-01T00:00:00Z\n"),
    ("  tags: [a, b]\n", "  tags: []\n"), ("  tags: [a, b]\n", "  tags: [1, b]\n"),
    ("  ttl: permanent\n", "  ttl: 30\n"), ("  ttl: permanent\n", "  superseded_by: MEM-1\n"),
    ("  ttl: permanent\n", "  archived: true\n"), ("  ttl: permanent\n", "  related: [x, y]\n"),
    ("    session_id: s1\n", "    session_id: 7\n"), ("    session_id: s1\n", ""),
    ("    timestamp: 2026-02-01T10:30:00Z\n", "    timestamp: 2026-02-01T10:30:00.25Z\n"),
    ("    timestamp: 2026-02-01T10:30:00Z\n", "    agent: x\n"),
    ("  source:\n    session_id: s1\n    timestamp: 2026-02-01T10:30:00Z\n", ""),
    ("  category: fact\n", "  category: 5\n"), ("  content: Words {n}.\n", "  content: 12\n"),
    ("  tags: [a, b]\n", "  effectiveness:\n    applied: 3\n"),
])
def test_values_the_plan_does_not_expect_make_the_same_rows(change: tuple[str, str]) -> None:
    old, new = change
    entries = [ENTRY.format(n=n) for n in range(4)]
    entries[2] = entries[2].replace(old.format(n=2), new.format(n=2))
    same_rows("".join(entries))
    same_rows("".join(e.replace(old.format(n=n), new.format(n=n))
                      for n, e in enumerate(entries)))


@settings(max_examples=500, deadline=None)
@given(moment=st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31, 23,
                                                                              59, 59)))
def test_a_time_as_loa_mem_writes_it_gives_the_epoch_datetime_gives(moment: datetime) -> None:
    written = clock.iso(moment.replace(tzinfo=timezone.utc))

    assert clock.written_epoch(written) == clock.parse(written).timestamp()


@settings(max_examples=500, deadline=None)
@given(text=st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[Zz]",
                          fullmatch=True) | st.text(max_size=24))
def test_any_other_text_is_left_to_the_full_parser(text: str) -> None:
    """An impossible date (2026-02-30, hour 24), a year before 1970 or any other form: None,
    and the index then reads it as `clock.parse` does."""
    try:
        expected = clock.parse(text).timestamp()
    except ValueError:
        expected = None
    found = clock.written_epoch(text)

    assert found is None or found == expected
    if expected is not None and text == clock.iso(clock.parse(text)) and text >= "1970":
        assert found == expected
