"""The vectors file `<git dir>/loa-mem/vectors.bin`: built by the first semantic recall, one row
appended per new entry, rebuilt whenever it no longer belongs to the index (a clone, a deleted
index, a damaged or foreign file), and never a source of truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git, run_loa_mem
from tests.semantic_support import build_model
from tests.test_semantic import FLAKY, OFFICE, POSTGRES, configure, cosine, ids


@pytest.fixture
def semantic_cli(cli: Cli, store: Path, tmp_path: Path) -> Cli:
    configure(store, model=str(build_model(tmp_path)))
    return cli


def vectors_file(root: Path) -> Path:
    return root / ".git" / "loa-mem" / "vectors.bin"


def header(root: Path) -> tuple[int, int, str]:
    """(rows, dimensions, generation) as the file says."""
    from loa_mem.memory.semantic import vectors

    found = vectors.read_header(vectors_file(root))
    assert found is not None, "no whole vectors file"
    return found.rows, found.dim, found.generation


def test_the_first_semantic_recall_writes_one_row_per_entry(semantic_cli: Cli,
                                                            store: Path) -> None:
    support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    support.remember(semantic_cli, FLAKY, "learning")
    assert not vectors_file(store).exists()  # remember embeds nothing

    semantic_cli.ok("recall", "relational store", "--mode", "semantic")
    rows, dim, _ = header(store)
    assert (rows, dim) == (2, 16)
    assert vectors_file(store).stat().st_size == 64 + 2 * 16 * 4


def test_a_remember_appends_one_row_and_keeps_the_generation(semantic_cli: Cli,
                                                             store: Path) -> None:
    support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    semantic_cli.ok("recall", "relational store", "--mode", "semantic")
    _, _, generation = header(store)

    flaky = support.remember(semantic_cli, FLAKY, "learning")
    assert ids(semantic_cli, "pytest suite", "--mode", "semantic")[0] == flaky
    assert header(store) == (2, 16, generation)

    semantic_cli.ok("recall", "pytest suite", "--mode", "semantic")
    assert header(store) == (2, 16, generation)  # nothing new: nothing written


def test_a_hand_edit_re_embeds_the_edited_entry(semantic_cli: Cli, store: Path) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    assert cosine(semantic_cli, "relational store", postgres) > 0.8

    path = support.grimoire(store, "decision")
    path.write_text(path.read_text(encoding="utf-8").replace(
        POSTGRES, "Ship every release to production on Monday."), encoding="utf-8")
    assert cosine(semantic_cli, "kubernetes rollout", postgres) > 0.8
    assert cosine(semantic_cli, "relational store", postgres) < 0.3


def test_a_clone_builds_its_own_vectors(semantic_cli: Cli, store: Path, tmp_path: Path) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    semantic_cli.ok("recall", "relational store", "--mode", "semantic")
    git(store, "commit", "-qam", "semantic model")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    assert not vectors_file(clone).exists()  # nothing semantic is committed

    out = run_loa_mem(clone, "recall", "relational store", "--mode", "semantic", "--json")
    assert out.returncode == 0, out.stderr
    assert postgres in out.stdout
    assert header(clone)[0] == 1 and header(clone)[2] != header(store)[2]


@pytest.mark.parametrize("damage", ["deleted index", "deleted file", "truncated file",
                                    "foreign file"])
def test_a_file_that_does_not_belong_to_the_index_is_rebuilt(
        semantic_cli: Cli, store: Path, damage: str) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    office = support.remember(semantic_cli, OFFICE, "fact")
    before = cosine(semantic_cli, "office monday", office)
    _, _, generation = header(store)
    target = vectors_file(store)
    if damage == "deleted index":
        store.joinpath(".git", "loa-mem", "index.sqlite3").unlink()
    elif damage == "deleted file":
        target.unlink()
    elif damage == "truncated file":
        target.write_bytes(target.read_bytes()[:100])
    else:  # another index's file (same model and size): only its generation differs
        raw = bytearray(target.read_bytes())
        raw[24:40] = bytes(16)
        target.write_bytes(bytes(raw))

    assert ids(semantic_cli, "relational store", "--mode", "semantic")[0] == postgres
    assert cosine(semantic_cli, "office monday", office) == before > 0
    rows, _, rebuilt = header(store)
    assert rows == 2 and rebuilt != generation


def test_another_model_rebuilds_the_file(semantic_cli: Cli, store: Path) -> None:
    support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    semantic_cli.ok("recall", "relational store", "--mode", "semantic")
    assert header(store)[1] == 16

    configure(store, dimensions=8)
    semantic_cli.ok("recall", "relational store", "--mode", "semantic")
    assert header(store)[1] == 8


def test_a_query_looks_up_only_the_best_rows_and_finds_what_a_full_scan_finds(
        semantic_cli: Cli, store: Path) -> None:
    import numpy as np

    from loa_mem.memory import scoring
    from loa_mem.memory.semantic import model, vectors
    from loa_mem.memory.store import Store

    words = "database deploy testing latency team postgresql release pytest cache reviewer"
    for n in range(40):
        picked = " ".join(words.split()[(n * 3 + k) % 10] for k in range(1 + n % 3))
        support.remember(semantic_cli, f"Note {n}: {picked}.", ("fact", "decision")[n % 2])
    ids(semantic_cli, "warm up", "--mode", "semantic")
    opened = Store.open(str(store))
    db = opened.index.db
    encoder = model.load(opened.config.retrieval["model"], None)
    found = vectors.sync(db, encoder)
    for query in ("relational store", "shipping to production", "slow people", "sql tests"):
        vector = encoder.vectors([query])[0]
        matrix = np.frombuffer(found.buffer, dtype="<f4", offset=found.offset,
                               count=found.rows * found.dim).reshape(found.rows, found.dim)
        scores = matrix.astype(np.float64) @ np.asarray(vector, dtype=np.float64)
        for categories in ((), ("decision",)):
            where, args = scoring.conditions(0.6, "2026-02-01T10:30:00Z",
                                             categories=categories)
            rows = db.execute("SELECT v.rowid, v.slot FROM entries e JOIN entry_vectors v ON "
                              "v.rowid = e.rowid WHERE " + " AND ".join(where), args).fetchall()
            cosines = {r: float(scores[s]) for r, s in rows}
            for depth in (1, 3, 8, 50):
                everything = sorted(cosines.items(), key=lambda rc: (-rc[1], rc[0]))[:depth]
                ours = vectors.nearest(db, where, args, vector, found, depth)
                assert [r for r, _ in ours] == [r for r, c in everything if c > 0]
                assert all(abs(a - c) < 1e-9 for (_, a), (_, c) in zip(
                    ours, everything, strict=False))
    opened.close()
