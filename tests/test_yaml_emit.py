"""The fast entry writer (`core.yamlemit`) writes what PyYAML writes, or leaves it to PyYAML."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import yamlemit, yamlio, yamlscalars

# Words people write, and the characters YAML treats specially.
WORDS = st.sampled_from([
    "the", "cache", "lives", "in", ".git/loa-mem", "PostgreSQL", "v3.11.7", "2026-11-22", "CI",
    "yes", "no", "null", "on", "0x1f", "1_000", "1:20", "0.5", "12", "-1", "café", "naïve", "中文",
    "a:b", "a:", "#tag", "a#b", "it's", '"quoted"', "[x]", "{y}", "a,b", "why?", "100%", "@me",
    "*star", "&amp", "!bang", "|pipe", ">gt", "`tick`", "~", "--", "...", "tab\there", "é²",
    "😀", "\U0001D518", "a\u00a0b", "\u00ad", "\ufffd", "\ufeff", "\u2028", "\x85", "\x7f",
])
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", ": ", " #", "\n", ", "])
# Texts as they mostly are: words and single spaces (long ones are folded), the odd character.
PLAIN_WORDS = st.sampled_from([
    "the", "cache", "lives", "in", ".git/loa-mem", "PostgreSQL", "v3.11.7", "2026-11-22", "yes",
    "12", "café", "中文", "a:b", "a#b", "it's", "[x]", "{y}", "a,b", "why?", "100%", "--", "é²",
    "x" * 30, "ok😀", "a\u00a0b"])


@st.composite
def texts(draw: Any, max_words: int = 40) -> str:
    plain = draw(st.booleans())
    words = draw(st.lists(PLAIN_WORDS if plain else WORDS, min_size=1, max_size=max_words))
    out = words[0]
    for word in words[1:]:
        out += (draw(st.sampled_from([" ", " ", " ", "  "])) if plain else draw(SEPARATORS))
        out += word
    return out


TAGS = st.lists(st.sampled_from(["database", "ci", "speed", "a-b", "yes", "123", "x.y",
                                 "release-2026"]), max_size=12)
SOURCES = st.fixed_dictionaries(
    {"session_id": st.one_of(st.just("manual"), texts(3)),
     "timestamp": st.just("2026-11-22T12:00:00Z")},
    optional={"agent": texts(2), "file_path": st.sampled_from(["src/app.py", "a b.txt", "x:y"]),
              "line_range": st.sampled_from(["3-9", "10"])})
ENTRIES = st.fixed_dictionaries(
    {"id": st.just("MEM-20261122-abcdefgh"),
     "category": st.sampled_from(["fact", "decision", "learning", "error", "preference"]),
     "content": texts(), "summary": texts(12),
     "confidence": st.sampled_from([0.8, 0.95, 1.0, 0.5, 0.123456789, 1e-05]),
     "source": SOURCES, "ttl": st.sampled_from(["permanent", "90d", "30d"]),
     "expires_at": st.sampled_from([None, "2027-02-20T12:00:00Z"]), "tags": TAGS},
    optional={"related_memories": st.lists(st.just("MEM-20261122-abcdefgh"), max_size=5)})


@settings(max_examples=600, deadline=None)
@given(entry=ENTRIES, indent=st.sampled_from([0, 2, 4]))
def test_the_fast_writer_writes_what_pyyaml_writes(entry: dict[str, Any], indent: int) -> None:
    fast = yamlemit.dump_item(entry, indent)
    if fast is not None:
        assert fast == yamlio.dump_item(entry, indent)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(PLAIN_WORDS, min_size=15, max_size=60),
       gaps=st.lists(st.sampled_from([" ", " ", " ", "  ", ": ", " #", " '"]), min_size=60,
                     max_size=60),
       indent=st.sampled_from([0, 2]))
def test_long_texts_are_folded_where_pyyaml_folds_them(words: list[str], gaps: list[str],
                                                       indent: int) -> None:
    content = "".join(w + g for w, g in zip(words, gaps, strict=False)).strip()
    entry = {"id": "MEM-20261122-abcdefgh", "content": content,
             "source": {"session_id": "manual", "file_path": content}, "tags": []}
    fast = yamlemit.dump_item(entry, indent)
    escaped = any(ord(c) > 0xFFFF for c in content)  # PyYAML writes those in double quotes
    assert fast == yamlio.dump_item(entry, indent) or (
        fast is None and (escaped or not content[0].isalnum()))


def test_an_ordinary_entry_is_written_without_pyyaml() -> None:
    entry = {"id": "MEM-20261122-abcdefgh", "category": "learning",
             "content": "The nightly job restarts the cache at 02:00 UTC; " * 6,
             "summary": "The nightly job restarts the cache at 02:00 UTC.", "confidence": 0.8,
             "source": {"session_id": "manual", "timestamp": "2026-11-22T12:00:00Z",
                        "file_path": "ops/cron.yaml"},
             "ttl": "90d", "expires_at": "2027-02-20T12:00:00Z", "tags": ["ops", "cache"]}
    entry["content"] = entry["content"].strip()
    fast = yamlemit.dump_item(entry, 2)
    assert fast is not None and fast.count("\n") > len(entry) + 1  # the content was folded
    assert fast == yamlio.dump_item(entry, 2)


@pytest.mark.parametrize("value", ["yes", "NULL", "12", "0x1f", "1:20", "1.5", "a: b", "a #b",
                                   "trail ", "'q'", "-dash", "it's: quoted", "#x", "[x]"])
def test_values_yaml_quotes_are_quoted_alike(value: str) -> None:
    entry = {"id": "MEM-20261122-abcdefgh", "content": value}
    assert yamlemit.dump_item(entry) in (None, yamlio.dump_item(entry))
    assert yamlemit.dump_item(entry) is not None or value == "-dash"


@pytest.mark.parametrize("value", ["line\nbreak", "tab\there", "bell\a", "", "a\u2028b"])
def test_values_yaml_escapes_are_left_to_pyyaml(value: str) -> None:
    assert yamlemit.dump_item({"id": "MEM-20261122-abcdefgh", "content": value}) is None


def test_the_resolvers_are_pyyamls() -> None:
    resolvers = {tag: rx.pattern for pairs in yaml.SafeLoader.yaml_implicit_resolvers.values()
                 for tag, rx in pairs}
    assert resolvers["tag:yaml.org,2002:int"].split() == yamlscalars.INT.pattern.split()
    assert resolvers["tag:yaml.org,2002:float"].split() == yamlscalars.FLOAT.pattern.split()


def test_every_kind_of_character_is_written_as_pyyaml_writes_it() -> None:
    """Each character up to U+07FF, and one in every 97 beyond, alone and among letters."""
    codes = [*range(0x20, 0x800), *range(0x800, 0x10000, 97), 0x2028, 0xFEFF, 0xFFFD, 0x1F600]
    for code in codes:
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        for text in (f"a{char}b", f"{char}b", f"a{char}", f"a {char} b", char):
            entry = {"id": "MEM-20261122-abcdefgh", "content": text}
            assert yamlemit.dump_item(entry) in (None, yamlio.dump_item(entry)), hex(code)
