"""Semantic recall at scale without numpy: the coarse integer copy of the vectors
(`vectors.coarse`) estimates every row within a bound, the rows that can reach the top are
scored exactly, and the ranking is the one a full exact scan gives. A damaged, stale or
contradicted copy is written anew, never trusted."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import FIXED_NOW, Cli, git, run_loa_mem
from tests.semantic_support import OTHER, TOPICS, build_model
from tests.test_semantic import configure
from tests.test_semantic_fast import imported

ENTRIES = 700  # two whole blocks of 256 rows, and 188 rows after them
QUERIES = ["relational store", "shipping to production", "slow people", "sql tests",
           "flaky ci timeouts", "which reviewer"]


def _write_entries(store: Path, count: int, first: int = 0,
                   files: tuple[str, ...] = ("fact", "decision", "learning")) -> None:
    """`count` entries of one or two topics' words among everyday ones, in the grimoire files
    of `files` as a teammate's commit would bring them."""
    rng = random.Random(18 + first)
    words = {name: text.split() for name, text in TOPICS.items()}
    texts: dict[str, list[str]] = {c: [] for c in files}
    for n in range(first, first + count):
        topics = rng.sample(sorted(words), rng.randint(1, 2))
        picked = [rng.choice(words[t]) for t in topics for _ in range(rng.randint(1, 3))]
        picked += rng.sample(OTHER, rng.randint(2, 6))
        rng.shuffle(picked)
        category = files[n % len(files)]
        texts[category].append(
            f"- id: MEM-20260120-{n:05d}\n  category: {category}\n"
            f"  content: \"Note {n}: {' '.join(picked)}.\"\n  confidence: 0.9\n"
            f"  source:\n    session_id: s\n    timestamp: 2026-01-20T10:00:00Z\n"
            f"  ttl: permanent\n  expires_at: null\n  tags: []\n")
    memory = store / "grimoires" / "loa" / "memory"
    for category, lines in texts.items():
        (memory / f"{category}s.yaml").write_text("".join(lines), encoding="utf-8")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "entries")


@pytest.fixture
def big(cli: Cli, store: Path, tmp_path: Path) -> Path:
    configure(store, model=str(build_model(tmp_path)))
    _write_entries(store, ENTRIES)
    semantic(store, "warm up")  # vectors and their coarse copy written
    return store


def semantic(root: Path, query: str, *args: str) -> list[dict[str, Any]]:
    done = run_loa_mem(root, "recall", query, "--mode", "semantic", "--json", "--explain",
                       *args)
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def coarse_file(root: Path) -> Path:
    return root / ".git" / "loa-mem" / "vectors.coarse"


def exact_scan(root: Path, query: str, depth: int, categories: tuple[str, ...] = ()
               ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], int]:
    """(what `nearest` gives, what scoring every candidate's float32 row in float64 with
    numpy gives, the rows the coarse copy covers)."""
    import numpy as np

    from loa_mem.memory import scoring
    from loa_mem.memory.semantic import model, vectors
    from loa_mem.memory.semantic.fusion import content_words
    from loa_mem.memory.store import Store

    opened = Store.open(str(root))
    try:
        db = opened.index.db
        encoder = model.load(opened.config.retrieval["model"], None)
        found = vectors.sync(db, encoder)
        vector = encoder.vectors([content_words(query)])[0]
        matrix = np.frombuffer(found.buffer, dtype="<f4", offset=found.offset,
                               count=found.rows * found.dim).reshape(found.rows, found.dim)
        scores = matrix.astype(np.float64) @ np.asarray(vector, dtype=np.float64)
        where, args = scoring.conditions(0.2, FIXED_NOW, categories=categories)
        rows = db.execute("SELECT v.rowid, v.slot FROM entries e JOIN entry_vectors v ON "
                          "v.rowid = e.rowid WHERE " + " AND ".join(where), args).fetchall()
        everything = sorted(((r, float(scores[s])) for r, s in rows),
                            key=lambda rc: (-rc[1], rc[0]))[:depth]
        return (vectors.nearest(db, where, args, vector, found, depth),
                [(r, c) for r, c in everything if c > 0], len(found.blocks) * 256)
    finally:
        opened.close()


def tied(ranking: list[tuple[Any, float]]) -> list[tuple[float, set[Any]]]:
    """A ranking as its groups of equal cosines (entries with the same words tie), best
    first; the last group is cut by the depth, so it is left out."""
    groups: list[tuple[float, set[Any]]] = []
    for key, cosine in ranking:
        if groups and abs(groups[-1][0] - cosine) < 1e-9:
            groups[-1][1].add(key)
        else:
            groups.append((cosine, {key}))
    return [(round(c, 6), keys) for c, keys in groups[:-1]]


def test_the_tiny_model_ranks_by_meaning(big: Path) -> None:
    top = semantic(big, "relational store", "--limit", "5")
    database = set(TOPICS["database"].split())
    assert len(top) == 5
    for hit in top:
        assert database & set(hit["content"].rstrip(".").split()), hit["content"]
    assert semantic(big, "zebra quokka") == []  # no word the model knows: nothing near


@pytest.mark.parametrize("categories", [(), ("decision",)], ids=["all", "decisions"])
def test_the_ranking_is_the_exact_scan_s(big: Path, categories: tuple[str, ...]) -> None:
    for query in QUERIES:
        for depth in (1, 10, 100, 300):
            ours, exact, covered = exact_scan(big, query, depth, categories)
            assert covered == 512  # two blocks estimated, the other rows scored exactly
            assert tied(ours) == tied(exact), (query, depth)


def test_recall_lists_entries_in_the_exact_scan_s_order(big: Path) -> None:
    """Every entry has the same confidence, age and tier: the command's order is the
    semantic one."""
    from loa_mem.memory.store import Store

    opened = Store.open(str(big))
    ids = dict(opened.index.db.execute("SELECT rowid, id FROM entries").fetchall())
    opened.close()
    for query in QUERIES:
        shown = [hit["id"] for hit in semantic(big, query, "--limit", "20")]
        exact = exact_scan(big, query, 20)[1]
        assert len(shown) == len(exact) == 20
        assert tied([(ids[r], c) for r, c in exact]) == tied(
            [(shown_id, c) for shown_id, (_, c) in zip(shown, exact, strict=True)])


def test_no_recall_imports_numpy_not_even_one_that_embeds_a_new_entry(
        big: Path, cli: Cli) -> None:
    for mode in ("semantic", "hybrid"):
        assert "numpy" not in imported(big, "relational store", "--mode", mode)
    postgres = support.remember(cli, "Use PostgreSQL for the relational database layer.",
                                "decision", "--confidence", "0.95")
    modules = imported(big, "relational store", "--mode", "hybrid")
    assert "numpy" not in modules
    assert semantic(big, "relational store")[0]["id"] == postgres


def test_a_block_is_appended_when_new_entries_fill_one(big: Path) -> None:
    before = coarse_file(big).read_bytes()
    _write_entries(big, 100, ENTRIES, ("error",))  # 800 rows: a third block
    semantic(big, "relational store")
    after = coarse_file(big).read_bytes()
    block = 24 * 256 + 16 * (4 * 256 + 1) + 4
    assert len(after) == len(before) + block
    assert after[64:].startswith(before[64:])  # the blocks written are never rewritten
    assert exact_scan(big, "relational store", 100)[2] == 768


@pytest.mark.parametrize(("added", "covered"), [(1, 512), (100, 768)],
                         ids=["one entry", "a block filled"])
def test_the_process_that_embeds_new_entries_ranks_them_exactly(
        big: Path, added: int, covered: int) -> None:
    """The copy as the writing process holds it right after bringing it up to date (the
    blocks it had, and only the blocks it appended read back) ranks as the exact scan."""
    _write_entries(big, added, ENTRIES, ("error",))
    for query in QUERIES:
        ours, exact, blocks_rows = exact_scan(big, query, 100)
        assert blocks_rows == covered
        assert tied(ours) == tied(exact), query


def _swap_blocks(raw: bytes) -> bytes:
    """Two whole blocks exchanged: each still matches its own checksum, but not its rows."""
    block = (len(raw) - 64) // 2
    return raw[:64] + raw[64 + block:] + raw[64:64 + block]


DAMAGE = {
    "deleted": lambda raw: None,
    "truncated": lambda raw: raw[:5000],
    "a byte flipped": lambda raw: raw[:30000] + bytes([raw[30000] ^ 0x10]) + raw[30001:],
    "another generation": lambda raw: raw[:24] + bytes(16) + raw[40:],
    "blocks swapped": _swap_blocks,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_or_stale_copy_is_written_anew(big: Path, damage: str) -> None:
    want = {query: semantic(big, query) for query in QUERIES}
    good = coarse_file(big).read_bytes()
    damaged = DAMAGE[damage](good)
    if damaged is None:
        coarse_file(big).unlink()
    else:
        coarse_file(big).write_bytes(damaged)

    assert {query: semantic(big, query) for query in QUERIES} == want
    assert coarse_file(big).read_bytes() == good


def test_a_rebuilt_vectors_file_makes_the_copy_stale(big: Path) -> None:
    want = semantic(big, "relational store")
    (big / ".git" / "loa-mem" / "vectors.bin").unlink()
    stale = coarse_file(big).read_bytes()

    assert semantic(big, "relational store") == want
    fresh = coarse_file(big).read_bytes()
    assert fresh[24:40] != stale[24:40]  # the new generation's copy
    assert fresh[64:] == stale[64:]


def test_a_long_lived_process_reads_a_copy_written_anew(big: Path) -> None:
    """The MCP server keeps what it read of the copy; a copy damaged meanwhile is noticed."""
    import os

    from loa_mem.memory.recall import Filters, rank
    from loa_mem.memory.store import Store

    def ranked() -> list[str]:
        opened = Store.open(str(big))
        try:
            return [hit.id for hit in rank(opened.index.db, Filters(
                query="relational store", limit=20, mode="semantic"), 0.2,
                opened.config.retrieval)]
        finally:
            opened.close()

    want = ranked()
    assert ranked() == want
    good = coarse_file(big).read_bytes()
    coarse_file(big).write_bytes(_swap_blocks(good))
    stat = coarse_file(big).stat()
    os.utime(coarse_file(big), ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert ranked() == want
    assert coarse_file(big).read_bytes() == good
