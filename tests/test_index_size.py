"""The index keeps each value once: whatever an entry holds reads back from the index exactly as
the grimoire file says it, the full-text index sees the same words, and the index of a store
stays within 1.5 times the size of its grimoire files."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.memory.index import Index
from loa_mem.memory.rowcodec import TAKEN
from tests import support
from tests.conftest import git, run_loa_mem

PATH = f"{support.MEMORY}/facts.yaml"

_scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
_words = st.lists(st.text(max_size=6), max_size=3)  # tags, some with spaces or empty
# keys a YAML parser may also give as numbers (JSON makes them text; none collides with a text key)
_keys = (st.sampled_from([*TAKEN, "source", "ttl", "capture", "x"]) | st.text(max_size=6)
         | st.integers(10**7, 10**8))


@st.composite
def _entries(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[Any, Any] = draw(st.dictionaries(_keys, _values | _words, max_size=10))
    content = draw(st.text(max_size=30))
    if draw(st.booleans()):
        data["content"] = content
        if draw(st.booleans()):  # a summary cut from the content, as loa-mem derives one
            data["summary"] = content[:draw(st.integers(0, len(content)))]
    if draw(st.booleans()):  # a source, its timestamp often as loa-mem writes it
        moment = draw(st.integers(-10**10, 10**11))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
        source = draw(st.dictionaries(st.text(max_size=4), _values, max_size=2))
        source["timestamp"] = draw(st.sampled_from([stamp, stamp.replace("Z", "+00:00"),
                                                    stamp[:10], "now"]) | _values)
        source.update(draw(st.dictionaries(st.text(max_size=4), _values, max_size=2)))
        data["source"] = source
    return data


def _as_json(value: Any) -> str:
    return json.dumps(value, default=str)


@settings(max_examples=300, deadline=None)
@given(st.lists(_entries(), min_size=1, max_size=4))
def test_every_entry_reads_back_as_written_and_is_found_by_its_words(
        entries: list[dict[str, Any]]) -> None:
    index = Index(Path("/nonexistent/index.sqlite3"), in_memory=True)
    spans = [(data, 1 + 20 * n, 19 + 20 * n, {k: i for i, k in enumerate(data)}, n)
             for n, data in enumerate(entries)]
    index.insert(PATH, False, spans)

    rows = index.in_file(PATH)
    assert [_as_json(row.data) for row in rows] == [
        _as_json(json.loads(_as_json(data))) for data in entries]
    for row, (data, first, *_) in zip(rows, spans, strict=True):
        assert [row.line_of(k) for k in row.data] == [first + i for i in range(len(data))]
    texts = index.db.execute("SELECT content, summary, tags FROM entry_source ORDER BY rowid")
    for (content, summary, tags), data in zip(texts, entries, strict=True):
        assert content == _text(data.get("content"))
        assert summary == _text(data.get("summary"))
        tag_list = data.get("tags") if isinstance(data.get("tags"), list) else []
        joined = " ".join(map(str, tag_list))
        assert tags == joined or "\0" in joined  # SQL's substr stops at a NUL
    index.db.execute("INSERT INTO entry_text(entry_text, rank) VALUES('integrity-check', 1)")


def _text(value: Any) -> str:
    """What the full-text index reads of a content or summary value."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"),
                                                            default=str)


def _entry(n: int, rng: random.Random, words: list[str]) -> str:
    sentence = " ".join(rng.choice(words) for _ in range(16))
    day = f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}"
    return (f"- id: MEM-{day.replace('-', '')}-{n:05d}\n  category: fact\n"
            f"  content: Note {n} on {sentence}. More on it later.\n"
            f"  summary: Note {n} on {sentence}.\n  confidence: 0.85\n"
            f"  source:\n    session_id: s{n % 7}\n    timestamp: {day}T10:00:00Z\n"
            f"  ttl: permanent\n  expires_at: null\n"
            f"  tags: [{rng.choice(words)}, {rng.choice(words)}]\n")


def test_the_index_of_a_store_stays_within_one_and_a_half_times_its_files(store: Path) -> None:
    rng = random.Random(7)
    words = [a + b for a in ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "si") for b in
             ("gran", "stul", "berr", "finn", "oxen", "chas", "prel", "monn", "tixa", "ular")]
    with open(store / PATH, "a", encoding="utf-8") as handle:
        handle.write("".join(_entry(n, rng, words) for n in range(3000)))
    git(store, "add", "-A")
    git(store, "commit", "-qm", "3,000 facts")

    found = run_loa_mem(store, "recall", "kagran", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"]
    index = store / ".git" / "loa-mem" / "index.sqlite3"
    db = sqlite3.connect(index)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    grimoires = sum(p.stat().st_size for p in (store / "grimoires").rglob("*.yaml"))
    assert index.stat().st_size <= 1.5 * grimoires
