"""A cold build reads most entries of a part of a file by matching the layouts it has met where
each entry starts, and makes their rows from the texts of their values (`yamlparts`,
`textrows`). Whatever the part holds (layouts mixed and repeated, odd values, quotes, unicode,
comments and blank lines between entries), the rows are those the full YAML parser's reading of
the part gives, so a fresh clone's index is the index any other path builds."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import clock, yamlfast, yamlio, yamlscalars
from loa_mem.core.errors import InvalidFile
from loa_mem.memory.fastrows import Preparer
from loa_mem.memory.indexrows import FileRows, prepare
from tests.test_fast_reader import ENTRIES, HEADER, RAW_VALUES, same

PATH = "grimoires/loa/memory/facts.yaml"


def same_as_the_parser(text: str, shift: int = 0, archived: bool = False) -> None:
    """The rows of `text` read as a part `shift` lines into its file are those of the full
    parser's entries; a part the fast reader declines (it then reads the file whole) is one
    the reader of parts declined before too."""
    kept = frozenset([PATH] if archived else [])
    found = Preparer(kept).part_rows(PATH, text, shift)
    try:
        parsed = yamlio.load_list(text, PATH)
    except InvalidFile:
        assert found is None
        return
    if found is None:
        assert yamlfast.load_part(text, PATH, shift) is None
        return
    assert found == FileRows(0, False, prepare(PATH, archived,
                                               [item.span(shift) for item in parsed.items]))


def _time(moment: datetime) -> str:
    return clock.iso(moment.replace(tzinfo=timezone.utc))


def mostly(good: st.SearchStrategy[str], odd: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A value's text: most often one as loa-mem writes it, else an odd one."""
    return st.integers(0, 5).flatmap(lambda n: odd if n == 0 else good)


ODD_TEXTS = st.one_of(RAW_VALUES, st.sampled_from([
    "yes", "Null", "12", "0.5", "'quoted: yes'", "'It''s'", "a: b", "Words: a", "Words a:b",
    "Words #x", "Words x#y", "Words x # y", "trailing ", "é first", "- z", "Ünïcode wörds",
    "'Words'", "''", "~", "[a, b]", "{}"]))
TIMES = mostly(
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9999, 12, 31)).map(_time),
    st.one_of(RAW_VALUES, st.sampled_from([
        "2026-02-29T10:00:00Z", "2024-02-29T00:00:00Z", "2026-02-01T24:00:00Z",
        "2026-02-01T10:60:00Z", "2026-02-01T10:30:00z", "2026-02-01T10:30:00+00:00",
        "2026-02-01T10:30:00.5Z", "2026-02-01", "'2026-02-01T10:30:00Z'", "null",
        "2026-02-01t10:30:00Z", "\uff12\uff10\uff12\uff16-02-01T10:30:00Z"])))
WORD = mostly(st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True),
              st.sampled_from(["yes", "no", "on", "null", "true", "7", "007", "0x1f", "1e3",
                               "b_c", "'q'", "x y", "Yes", "é", "-a"]))
TAGS = mostly(st.lists(WORD, max_size=4).map(lambda words: f"[{', '.join(words)}]"),
              st.one_of(RAW_VALUES, st.lists(WORD, max_size=3).map(
                  lambda words: f"[{','.join(words)}]")))
TEXTS = mostly(st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs", "S")),
                       max_size=60).map(lambda text: "Words " + text.strip()), ODD_TEXTS)
# a continuation line of a folded value: words as loa-mem folds them, or text YAML reads
# otherwise (a key, a comment, a quote, an indicator)
FOLD_LINES = mostly(st.from_regex(r"[a-z]{1,8}( [a-z]{1,8}){0,3}\.?", fullmatch=True),
                    st.sampled_from(["a: b", "#c", "x #y", "it''s", "'", "' tail", "- z", "[a]",
                                     "é ü", "trailing ", "7", "", "  deeper", "k:", "x:y"]))


@st.composite
def folded(draw: st.DrawFn, deeper: str) -> str:
    """A value folded over several lines, as loa-mem folds a long text (`deeper`: the
    continuation lines' indentation), plain or single-quoted; sometimes continued otherwise
    (another indentation, a quote closed early or never, a blank line)."""
    first = draw(st.from_regex(r"[A-Z][a-z]{0,8}( [a-z]{1,8}){0,3}", fullmatch=True))
    indent = draw(mostly(st.just(deeper), st.sampled_from(["   ", "     ", "        ", ""])))
    more = draw(st.lists(FOLD_LINES, min_size=1, max_size=4))
    text = first + "".join(f"\n{indent}{line}" if line else "\n" for line in more)
    quote = draw(st.sampled_from(["", "", "'", "'", "'?"]))
    if quote == "'?":  # opened, not closed; or closed on the first line
        return draw(st.sampled_from([f"'{text}", f"'{first}'{text[len(first):]}"]))
    return f"{quote}{text}{quote}"


# each key and the texts its value takes; `source` holds the keys indented under it
VALUES: dict[str, Any] = {
    "id": mostly(st.from_regex(r"MEM-2026[01][0-9]{3}-[a-z2-7]{8}", fullmatch=True),
                 ODD_TEXTS),
    "category": mostly(st.sampled_from(["fact", "decision", "error"]), ODD_TEXTS),
    "content": st.one_of(TEXTS, folded("    ")),
    "summary": mostly(st.sampled_from(["Words", "Words a"]), st.one_of(TEXTS, folded("    "))),
    "confidence": mostly(st.sampled_from(["0.95", "0.5", "0.85"]), st.one_of(
        st.sampled_from(["1", "1.0", "0.0", "-0.0", "null", ".inf", "0.85 ", "'0.9'", "1e3"]),
        RAW_VALUES)),
    "session_id": mostly(st.sampled_from(["s1", "s2", "bench", "manual"]),
                         st.one_of(ODD_TEXTS, folded("      "))),
    "timestamp": TIMES,
    "agent": st.sampled_from(["claude", "null", "7"]),
    "ttl": mostly(st.sampled_from(["permanent", "30d", "90d"]), ODD_TEXTS),
    "expires_at": mostly(st.just("null"), st.one_of(st.sampled_from(["~", "''"]), TIMES)),
    "superseded_by": mostly(st.just("null"), st.one_of(st.just("MEM-20260201-abcdefgh"),
                                                      ODD_TEXTS)),
    "tags": TAGS, "related_memories": TAGS, "extra": ODD_TEXTS,
}
LAYOUTS = [
    ("id", "category", "content", "summary", "confidence", "source", "ttl", "expires_at",
     "tags"),
    ("id", "category", "content", "confidence", "source", "tags"),
    ("id", "category", "content", "summary", "confidence", "source", "ttl", "expires_at",
     "superseded_by", "tags", "related_memories"),
    ("category", "id", "content", "extra"),
    ("id", "category", "content", "summary", "confidence", "source", "effectiveness"),
    ("id", "content", "tags"),
]
SOURCES = [("session_id", "timestamp"), ("timestamp",), ("session_id", "timestamp", "agent"),
           ("session_id",)]
BETWEEN = mostly(st.just(""), st.sampled_from(["# note\n", "\n", "  # indented note\n", "   \n",
                                             "#\n\n"]))


@st.composite
def entries(draw: st.DrawFn) -> str:
    """One entry as its lines stand: a layout, a value text for each key."""
    layout = draw(st.sampled_from(LAYOUTS))
    lines = []
    for key in layout:
        if key == "source":
            lines.append("  source:")
            lines += [f"    {k}: {draw(VALUES[k])}" for k in draw(st.sampled_from(SOURCES))]
        elif key == "effectiveness":
            lines += ["  effectiveness:", f"    applied: {draw(st.integers(0, 9))}"]
        else:
            lines.append(f"  {key}: {draw(VALUES[key])}")
    return "- " + "\n".join(lines)[2:] + "\n" + draw(BETWEEN)


@settings(max_examples=400, deadline=None)
@given(items=st.lists(entries(), min_size=1, max_size=10), written=st.lists(ENTRIES, max_size=3),
       header=st.booleans(), shift=st.integers(0, 5000), archived=st.booleans(),
       end=st.sampled_from(["", "-", "- ", "# tail\n", "\n"]))
def test_a_part_of_mixed_layouts_and_values_gives_the_parsers_rows(
        items: list[str], written: list[dict[str, Any]], header: bool, shift: int,
        archived: bool, end: str) -> None:
    # twice: the second time each layout is one met before, right where its entry starts
    body = "".join(items) + "".join(yamlio.dump_item(e) for e in written)
    text = (HEADER if header else "") + body + body + end
    same_as_the_parser(text, shift, archived)
    same_as_the_parser(text.rstrip("\n"), shift, archived)  # a last line without its break


ENTRY = ("- id: MEM-20260201-{n:08d}\n  category: fact\n  content: Words {n}.\n"
         "  summary: Words\n  confidence: 0.95\n  source:\n    session_id: s1\n"
         "    timestamp: 2026-02-01T10:30:{s:02d}Z\n  ttl: permanent\n  expires_at: null\n"
         "  tags: [a, b-c]\n")


@pytest.mark.parametrize("change", [
    ("  tags: [a, b-c]\n", "  tags: [a, yes]\n"), ("  tags: [a, b-c]\n", "  tags: [a, 7]\n"),
    ("  tags: [a, b-c]\n", "  tags: [a,b]\n"), ("  tags: [a, b-c]\n", "  tags: []\n"),
    ("  content: Words", "  content: No"), ("  content: Words {n}.\n", "  content: yes\n"),
    ("  content: Words {n}.\n", "  content: 'Words: {n}'\n"),
    ("  content: Words {n}.\n", "  content: Words {n} \n"),
    ("  content: Words {n}.\n", "  content: Words: {n} a: b\n"),
    ("  content: Words {n}.\n", "  content: Words {n} #x\n"),
    ("  content: Words {n}.\n", "  content: Words {n}:x\n"),
    ("  category: fact\n", "  category: 'fact'\n"), ("  category: fact\n", "  category: on\n"),
    ("30:{s:02d}Z", "30:{s:02d}z"), ("2026-02-01T", "1969-12-31T"), ("T10:30", "T24:30"),
    ("T10:30", "T00:00"), ("2026-02-01T10:30", "1970-01-01T00:00"), ("T10:30", "T23:59"),
    ("  summary: Words\n", "  summary: ''\n"), ("  summary: Words\n", "  summary: 'Words'\n"),
    ("  confidence: 0.95\n", "  confidence: 0.0\n"),
    ("  expires_at: null\n", "  expires_at: 2026-03-01T00:00:00Z\n"),
    ("  expires_at: null\n", "  expires_at: ''\n"), ("  expires_at: null\n", "  expires_at: ~\n"),
    ("  expires_at: null\n", "  expires_at: 5\n"),
    ("    session_id: s1\n", "    session_id: 'a: b'\n"),
    ("  tags: [a, b-c]\n", "  tags: [a, b-c]\n\n"), ("  tags: [a, b-c]\n", "  tags: [a, b-c]\n#\n"),
    ("- id:", "-  id:"), ("  ttl: permanent\n", "  ttl: &x permanent\n"),
    # long texts folded as loa-mem folds them, and continued otherwise
    ("  content: Words {n}.\n", "  content: Words {n} and\n    more words.\n"),
    ("  content: Words {n}.\n", "  content: 'Words: {n} and\n    more: words.'\n"),
    ("  content: Words {n}.\n", "  content: 'Words {n} it''s\n    more\n    words'\n"),
    ("  content: Words {n}.\n", "  content: Words {n} and\n     more words.\n"),
    ("  content: Words {n}.\n", "  content: Words {n} and\n    more: words.\n"),
    ("  content: Words {n}.\n", "  content: Words {n} and\n    # more words.\n"),
    ("  content: Words {n}.\n", "  content: Words {n}\n\n    more words.\n"),
    ("  content: Words {n}.\n", "  content: 'Words {n}' and\n    more words.\n"),
    ("  content: Words {n}.\n", "  content: 7\n    8\n"),
    ("  content: Words {n}.\n", "  content: |\n    Words {n}.\n"),
    ("  summary: Words\n", "  summary: Words\n    and more\n"),
    ("    session_id: s1\n", "    session_id: s1 and\n      more\n"),
    ("    session_id: s1\n", "    session_id: s1 and\n    more\n"),
])
def test_an_entry_unlike_the_others_gives_the_parsers_rows(change: tuple[str, str]) -> None:
    """One entry of a run of the same layout, or every one, with a value or a line the texts'
    readers do not take as they stand."""
    old, new = change
    entries = [ENTRY.format(n=n, s=n % 60) for n in range(6)]
    odd = entries[3].replace(old.format(n=3, s=3), new.format(n=3, s=3))
    same_as_the_parser("".join([*entries[:3], odd, *entries[4:]]))
    same_as_the_parser("".join(e.replace(old.format(n=n, s=n % 60), new.format(n=n, s=n % 60))
                               for n, e in enumerate(entries)))


@settings(max_examples=200, deadline=None)
@given(items=st.lists(entries(), min_size=1, max_size=8))
def test_folded_values_read_as_the_parser_reads_them(items: list[str]) -> None:
    """Whichever values are folded and over how many lines, the whole-file reader and the
    reader of parts give what the full parser gives (an item's lines included)."""
    text = HEADER + "".join(items) * 2
    same(text)
    same_as_the_parser(text)


def test_more_line_arrangements_than_a_layout_remembers_read_alike() -> None:
    """Entries of one set of keys whose texts fold over more arrangements of lines than a
    layout keeps (each beyond them is made for its entry) give the parser's rows and lines."""
    words = " ".join(["word"] * 30)
    items = []
    for n in range(320):
        content = f"Words {n}" + "".join(f"\n    {words}" for _ in range(n % 20))
        summary = "Sum" + "".join(f"\n    {words}" for _ in range(n // 20))
        items.append(f"- id: MEM-20260201-{n:08d}\n  category: fact\n  content: {content}\n"
                     f"  summary: {summary}\n  confidence: 0.9\n  source:\n    session_id: s1\n"
                     f"    timestamp: 2026-02-01T10:30:00Z\n  tags: [a]\n")
    text = HEADER + "".join(items)
    same(text)
    same_as_the_parser(text)
    same_as_the_parser("".join(items[100:]), shift=7)


@settings(max_examples=400, deadline=None)
@given(first=st.text(st.sampled_from("aZé7 :#-'\t\u2003x"), min_size=1, max_size=12),
       more=st.lists(st.text(st.sampled_from("ab é:#-'[\u2003 "), max_size=10), min_size=1,
                     max_size=4),
       indent=st.sampled_from(["    ", "  ", "     "]))
def test_a_folded_value_reads_as_the_yaml_parser_reads_it(first: str, more: list[str],
                                                          indent: str) -> None:
    """Whatever its lines hold, a value over several lines that the fast reader reads is
    the value the full parser reads (`yamlscalars.folded`: otherwise it declines)."""
    text = first + "".join(f"\n{indent}{line}" for line in more)
    try:
        value = yamlscalars.folded(text)
    except yamlscalars.Unsure:
        return
    assert yamlio.load(f"key: {text}\n", "t.yaml") == {"key": value}
