"""Retrieval quality and speed of recall's modes: lexical, semantic and hybrid.

Quality: two labelled sets in one store of 1,000 entries, the rest being sentences drawn from
the same vocabulary, so they compete for every word:

- team (`retrieval_set.py`): 100 memories, 200 queries, one sharing words with its memory and
  one paraphrase sharing none;
- conversation (`conversation_set.py`): 80 turns of four working conversations, each turn one
  memory, and 100 questions with one or two evidence turns each, half of them paraphrases;
  split into a tuning half and a held-out half (fusion weights and the session neighbours'
  settings are chosen on the tuning half, `--tune` and `--neighbours` print those sweeps; the
  held-out half is what counts).

Every entry carries a session and a time as `remember` records them (`_sources`): each
conversation one session, a minute between turns; `--provenance none` puts every entry in one
session at one time.

For each mode: recall@5 and recall@10 (the share of each question's evidence in the top k,
averaged), MRR@10 (1/rank of the first evidence), over all queries and over the paraphrases
alone; lexical and hybrid recall with their session neighbours (`retrieval.neighbours`, on
by default) and without. Lexical variants (without neighbours) show what each default change
is worth.

Speed: `loa-mem recall QUERY` as a whole process (the venv's own `loa-mem`) on 10,000 entries,
median of several runs after one warm-up, per mode with and without the session
neighbours; and the time to embed 10,000 entries from
scratch. The budget of `recall QUERY` is 250 ms at 10,000 entries.

The semantic modes need a model2vec model folder; on a machine without the model hub, make one
with `bench/distill_model.py`:

    .venv/bin/python bench/bench_retrieval.py --model /tmp/minilm-static
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import exact_scan  # beside this file
from conversation_set import CONVERSATIONS, QUESTIONS
from retrieval_set import SET

from bench import LOA_MEM, NOW, committed, new_store

FILES = {"fact": "facts", "decision": "decisions", "learning": "learnings", "error": "errors",
         "preference": "preferences"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _entry(n: int, category: str, content: str, source: tuple[str, str]) -> str:
    return (f"- id: MEM-20261101-{n:05d}\n  category: {category}\n"
            f"  content: {_quote(content)}\n  confidence: 0.95\n"
            f"  source:\n    session_id: {source[0]}\n    timestamp: {source[1]}\n"
            f"  ttl: permanent\n  expires_at: null\n  tags: []\n")


def _sources(size: int, provenance: str) -> list[tuple[str, str]]:
    """Each row's (session id, timestamp). `sessions`, as remember records them when agents
    write: the team memories in sessions of 5, each conversation one session, the distractors
    in sessions of 10; a minute between a session's entries; sessions starting every 10
    minutes in shuffled order over one day, so they overlap in time and recency barely
    differs. `none`: one session and one timestamp for every entry."""
    if provenance == "none":
        return [("bench", "2026-11-01T10:00:00Z")] * size
    labelled, _ = _rows()
    team = len(SET)
    groups = [list(range(n, min(n + 5, team))) for n in range(0, team, 5)]
    start = team
    for _, turns in CONVERSATIONS:
        groups.append(list(range(start, start + len(turns))))
        start += len(turns)
    groups += [list(range(n, min(n + 10, size))) for n in range(len(labelled), size, 10)]
    slots = list(range(len(groups)))
    random.Random(11).shuffle(slots)
    found: list[tuple[str, str]] = [("", "")] * size
    for number, (slot, rows) in enumerate(zip(slots, groups, strict=True)):
        for turn, row in enumerate(rows):
            day, minute = divmod(slot * 10 + turn, 1440)
            stamp = f"2026-11-{1 + day:02d}T{minute // 60:02d}:{minute % 60:02d}:00Z"
            found[row] = (f"session-{number:04d}", stamp)
    return found


Query = tuple[str, list[int], bool]  # text, evidence rows, paraphrase?


def _rows() -> tuple[list[tuple[str, str]], dict[str, list[Query]]]:
    """The labelled memories (category, content) and each set's queries over their rows."""
    rows = [(c, m) for c, m, _, _ in SET]
    team: list[Query] = []
    for n, (_, _, word, paraphrase) in enumerate(SET):
        team += [(word, [n], False), (paraphrase, [n], True)]
    start: list[int] = []
    for _, turns in CONVERSATIONS:
        start.append(len(rows))
        rows += [("fact", turn) for turn in turns]
    conversation = [(q, [start[c] + t for c, t in evidence], para)
                    for q, evidence, para in QUESTIONS]
    halves: tuple[list[Query], list[Query]] = ([], [])
    for kind in (False, True):  # alternating within word questions and within paraphrases
        for n, query in enumerate(q for q in conversation if q[2] == kind):
            halves[n % 2].append(query)
    return rows, {"team": team, "conversation, tuning half": halves[0],
                  "conversation, held-out half": halves[1]}


def _distractors(count: int, rng: random.Random, kind: str) -> list[tuple[str, str]]:
    """Sentences of words drawn from the labelled memories: `natural`, as often as they occur
    there (function words as common as in the memories, a third of the words); `uniform`,
    each distinct word alike (function words then make a twelfth of a distractor's words, so
    merely matching them singles out the labelled memories: a benchmark artefact)."""
    labelled, _ = _rows()
    found = [w for _, memory in labelled for w in re.findall(r"[A-Za-z][\w-]+", memory)]
    words = found if kind == "natural" else sorted(set(found))
    return [(rng.choice(list(FILES)), " ".join(rng.choice(words) for _ in range(rng.randint(
        8, 16))).capitalize() + ".") for _ in range(count)]


def build(root: Path, size: int, model: str | None, distractors: str = "natural",
          provenance: str = "sessions") -> list[str]:
    """A store of `size` entries, the labelled ones first; their ids, in `_rows`' order."""
    new_store(root)
    labelled, _ = _rows()
    rows = labelled + _distractors(size - len(labelled), random.Random(7), distractors)
    texts: dict[str, list[str]] = {c: [] for c in FILES}
    for n, ((category, content), source) in enumerate(zip(rows, _sources(size, provenance),
                                                             strict=True)):
        texts[category].append(_entry(n, category, content, source))
    memory = root / "grimoires" / "loa" / "memory"
    for category, name in FILES.items():
        (memory / f"{name}.yaml").write_text("".join(texts[category]), encoding="utf-8")
    if model:
        use_model(root, model)
    committed(root, "bench store")
    return [f"MEM-20261101-{n:05d}" for n in range(len(labelled))]


def use_model(root: Path, model: str) -> None:
    """Semantic and hybrid recall in the store at `root` use `model` (an id or a folder)."""
    config = root / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "\n  retrieval:", f"\n  retrieval:\n    model: {model}"), encoding="utf-8")


def _stems(text: str, forms: bool = False) -> set[str]:
    """The text's words as the paraphrase check compares them: stop words out, suffixes cut;
    with `forms`, each word's irregular forms too (a query's "keep" matches "kept")."""
    from loa_mem.memory.stopwords import STOP_WORDS
    from loa_mem.memory.wordforms import alternatives

    def stem(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if word.endswith(suffix) and len(word) > len(suffix) + 3:
                return word[: -len(suffix)]
        return word
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS]
    return {stem(w) for word in words for w in (word, *(alternatives(word) if forms else ()))}


def scored(hits: list[str], wanted: set[str]) -> tuple[float, float, float]:
    """One question's (recall@5, recall@10, reciprocal rank of the first evidence) from its
    ranked hits (ids, best first)."""
    ranks = [i + 1 for i, hit in enumerate(hits) if hit in wanted]
    return (sum(1 for r in ranks if r <= 5) / len(wanted), len(ranks) / len(wanted),
            1 / ranks[0] if ranks else 0.0)


def quality(root: Path, ids: list[str], queries: list[Query], mode: str,
            neighbours: bool = True) -> dict[str, float]:
    from loa_mem.memory.recall import Filters, rank
    from loa_mem.memory.store import Store

    os.environ["LOA_MEM_NOW"] = NOW
    store = Store.open(str(root))
    db = store.index.db
    retrieval = {**store.config.retrieval, "neighbours": neighbours and mode != "union"}
    found: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
    for query, evidence, paraphrase in queries:
        hits: list[str] = []
        parts = {"union": ("lexical", "semantic")}.get(mode, (mode,))
        for part in parts:
            hits += [h.id for h in rank(db, Filters(query=query, limit=10, mode=part), 0.2,
                                        retrieval) if h.id not in hits]
        found[paraphrase].append(scored(hits, {ids[n] for n in evidence}))
    every = found[False] + found[True]

    def mean(values: list[tuple[float, float, float]], i: int) -> float:
        return sum(v[i] for v in values) / max(len(values), 1)
    return {"r@5": mean(every, 0), "r@10": mean(every, 1), "mrr": mean(every, 2),
            "para r@10": mean(found[True], 1), "para mrr": mean(found[True], 2)}


def _table(root: Path, ids: list[str], queries: list[Query], modes: list[str]) -> None:
    from loa_mem.memory import stopwords

    rows: list[tuple[str, dict[str, float]]] = []
    kept = stopwords.STOP_WORDS
    stopwords.STOP_WORDS = frozenset()
    rows.append(("lexical, stop words matched, no neighbours",
                 quality(root, ids, queries, "lexical", neighbours=False)))
    stopwords.STOP_WORDS = kept
    for mode in modes:
        if mode != "semantic":
            rows.append((f"{mode}, no session neighbours",
                         quality(root, ids, queries, mode, neighbours=False)))
        rows.append((mode, quality(root, ids, queries, mode)))
    print(f"{'mode':45} {'r@5':>6} {'r@10':>6} {'MRR':>6} {'para r@10':>10} {'para MRR':>9}")
    for name, found in rows:
        print(f"{name:45} {found['r@5']:6.3f} {found['r@10']:6.3f} {found['mrr']:6.3f} "
              f"{found['para r@10']:10.3f} {found['para mrr']:9.3f}")
    if "semantic" in modes:
        # what the two top 10s hold together: to find more in its top 10, a fusion must lift
        # evidence both rankings put lower ("r@10" of "union" counts all its 20 results)
        union = quality(root, ids, queries, "union")
        print(f"{'lexical top 10 + semantic top 10 (20 results)':45} {'':6} "
              f"{union['r@10']:6.3f}")


# lexical variants: (name, stop words: out | in | exact (matched, never as a prefix),
# stemming, each word also as a prefix, irregular forms joined, bm25 weights of content,
# summary, tags)
Variant = tuple[str, str, bool, bool, bool, str]
VARIANTS: list[Variant] = [
    ("stop words out, stemmed, prefix, forms, 1/2/2", "out", True, True, True, "1.0, 2.0, 2.0"),
    ("irregular forms not joined", "out", True, True, False, "1.0, 2.0, 2.0"),
    ("stop words matched", "in", True, True, True, "1.0, 2.0, 2.0"),
    ("stop words matched exactly, not as prefix", "exact", True, True, True, "1.0, 2.0, 2.0"),
    ("stop words out, not stemmed", "out", False, True, True, "1.0, 2.0, 2.0"),
    ("stop words matched, not stemmed", "in", False, True, True, "1.0, 2.0, 2.0"),
    ("stop words out, no prefix", "out", True, False, True, "1.0, 2.0, 2.0"),
    ("stop words matched, no prefix", "in", True, False, True, "1.0, 2.0, 2.0"),
    ("stop words out, weights 1/1/1", "out", True, True, True, "1.0, 1.0, 1.0"),
    ("stop words out, weights 1/4/4", "out", True, True, True, "1.0, 4.0, 4.0"),
]


def _match(stop: str, prefix: bool, forms: bool) -> Any:
    """A `scoring.match_expression` for one variant."""
    from loa_mem.memory import scoring
    from loa_mem.memory.stopwords import STOP_WORDS

    def prefixed(term: str) -> bool:
        return prefix and not (stop == "exact" and term in STOP_WORDS)

    def expression(query: str) -> str | None:
        terms = scoring.query_words(query)
        if stop == "out":
            terms = [t for t in terms if t not in STOP_WORDS] or terms
        return scoring.any_of(terms, prefixed, forms) if terms else None
    return expression


def _tokenizer(root: Path, tokenize: str) -> None:
    """Re-make the index's full-text table with another tokenizer (stemming on or off)."""
    db = sqlite3.connect(root / ".git" / "loa-mem" / "index.sqlite3")
    db.executescript(
        f"CREATE VIRTUAL TABLE swap USING fts5(content, summary, tags, tokenize='{tokenize}');"
        "INSERT INTO swap(rowid, content, summary, tags) "
        "SELECT rowid, content, summary, tags FROM entry_text;"
        "DROP TABLE entry_text; ALTER TABLE swap RENAME TO entry_text;")
    db.close()


def _lexical(root: Path, ids: list[str], sets: dict[str, list[Query]]) -> None:
    """Each lexical variant on each set (r@10 and MRR): what each default is worth."""
    from loa_mem.memory import scoring

    kept = scoring.match_expression, scoring.FIELD_WEIGHTS
    names = list(sets)
    print(f"{'lexical variant, no neighbours (r@10 / MRR)':45} "
          + " ".join(f"{n[:22]:>22}" for n in names))
    for name, stop, stem, prefix, forms, weights in VARIANTS:
        if not stem:
            _tokenizer(root, "unicode61")
        scoring.match_expression, scoring.FIELD_WEIGHTS = _match(stop, prefix, forms), weights
        try:
            found = [quality(root, ids, sets[n], "lexical", neighbours=False) for n in names]
        finally:
            scoring.match_expression, scoring.FIELD_WEIGHTS = kept
            if not stem:
                _tokenizer(root, "porter unicode61")
        print(f"{name:45} " + " ".join(f"{f['r@10']:>13.3f} / {f['mrr']:.3f}" for f in found))


def _by_score(weight: float) -> Any:
    """Score fusion instead of rank fusion: cosine + weight x bm25 relative to the best."""
    from loa_mem.memory.semantic.fusion import Relevance

    def fuse(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]]) -> Any:
        best = lexical[0][1] if lexical else 1.0
        fused = {rowid: cosine for rowid, cosine in semantic}
        for rowid, score in lexical:
            fused[rowid] = fused.get(rowid, 0.0) + weight * max(score, 0.0) / max(best, 1e-9)
        return Relevance(fused, {r: {} for r in fused}, "hybrid")
    return fuse


def _tune(root: Path, ids: list[str], queries: list[Query]) -> None:
    """Hybrid fusion variants on the tuning half: the lexical list's weight and the RRF k of
    rank fusion (at the default weight, 1.0), and fusion by score (cosine plus a share of
    bm25) instead."""
    from loa_mem.memory.semantic import fusion

    kept = fusion.LEXICAL_WEIGHT, fusion.RRF_K, fusion.fuse
    variants: list[tuple[str, float, int, Any]] = [
        (f"rank fusion, weight {w}, k 5", w, 5, kept[2]) for w in (0.1, 0.25, 0.5, 1.0)]
    variants += [(f"rank fusion, weight 1.0, k {k}", 1.0, k, kept[2]) for k in (2, 20, 60, 120)]
    variants += [(f"score fusion, cosine + {w} x bm25 share", 0.1, 5, _by_score(w))
                 for w in (0.05, 0.1, 0.2, 0.4)]
    print(f"{'hybrid variant, no neighbours (tuning half)':45} {'r@5':>6} {'r@10':>6} {'MRR':>6}")
    for name, weight, k, fuse in variants:
        fusion.LEXICAL_WEIGHT, fusion.RRF_K, fusion.fuse = weight, k, fuse
        try:
            found = quality(root, ids, queries, "hybrid", neighbours=False)
        finally:
            fusion.LEXICAL_WEIGHT, fusion.RRF_K, fusion.fuse = kept
        print(f"{name:45} {found['r@5']:6.3f} {found['r@10']:6.3f} {found['mrr']:6.3f}")


def _neighbours(root: Path, ids: list[str], sets: dict[str, list[Query]], modes: list[str]
                ) -> None:
    """Session-neighbour settings on the tuning half (how many best matches lend their
    neighbours, and the neighbours' weight), the team set beside it as a check; for lexical
    recall, and for hybrid recall when there is a model."""
    from loa_mem.memory import neighbours

    kept = neighbours.SOURCES, neighbours.WEIGHT
    names = ["conversation, tuning half", "team"]
    variants = [(s, w) for s in (1, 2, 3, 5) for w in (0.1, 0.2, 0.3, 0.45)]
    for mode in [m for m in modes if m != "semantic"]:
        print(f"{mode + ' neighbour variant (r@10 / r@5 / MRR)':45} "
              + " ".join(f"{n[:25]:>25}" for n in names))
        for sources, weight in variants:
            neighbours.SOURCES, neighbours.WEIGHT = sources, weight
            try:
                found = [quality(root, ids, sets[n], mode) for n in names]
            finally:
                neighbours.SOURCES, neighbours.WEIGHT = kept
            print(f"{f'{sources} best matches, weight {weight}':45} " + " ".join(
                f"{f['r@10']:>9.3f} / {f['r@5']:.3f} / {f['mrr']:.3f}" for f in found))


Timing = tuple[float, float]  # wall ms, cpu ms (user + system of the process)


def _once(command: list[str], cwd: Path) -> Timing:
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def _median(timings: list[Timing]) -> Timing:
    return (statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings))


def _time(command: list[str], cwd: Path, runs: int) -> Timing:
    return _median([_once(command, cwd) for _ in range(runs + 1)][1:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="a model2vec model folder or id")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--tune", action="store_true", help="sweep the hybrid lexical weight "
                        "on the tuning half")
    parser.add_argument("--neighbours", action="store_true", help="sweep the session "
                        "neighbours' settings on the tuning half")
    parser.add_argument("--lexical", action="store_true", help="each lexical variant (stop "
                        "words, stemming, prefixes, field weights) on each set")
    parser.add_argument("--distractors", choices=["natural", "uniform"], default="natural",
                        help="distractor words drawn as often as in the memories, or alike")
    parser.add_argument("--provenance", choices=["sessions", "none"], default="sessions",
                        help="entries written in sessions a minute apart, as remember records "
                        "them, or all in one session at one time")
    parser.add_argument("--no-speed", action="store_true", help="quality only")
    parser.add_argument("--no-quality", action="store_true", help="speed only")
    args = parser.parse_args()
    modes = ["lexical", "semantic", "hybrid"] if args.model else ["lexical"]
    _, sets = _rows()
    labelled = _rows()[0]
    for name, queries in sets.items():
        sharing = sum(1 for q, evidence, para in queries if para and any(
            _stems(q, forms=True) & _stems(labelled[n][1]) for n in evidence))
        print(f"{name}: {len(queries)} queries, {sum(1 for q in queries if q[2])} paraphrases "
              f"({sharing} sharing a word with their evidence)")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "quality"
        ids = [] if args.no_quality else build(small, 1000, args.model, args.distractors,
                                                   args.provenance)
        for name, queries in ([] if args.no_quality else sets.items()):
            print(f"\n{name}")
            _table(small, ids, queries, modes)
        if args.lexical and not args.no_quality:
            print()
            _lexical(small, ids, sets)
        if args.neighbours and not args.no_quality:
            print()
            _neighbours(small, ids, sets, modes)
        if args.tune and args.model and not args.no_quality:
            print()
            _tune(small, ids, sets["conversation, tuning half"])
        if args.no_speed:
            return
        big = Path(tmp) / "speed"
        build(big, args.size, args.model, provenance=args.provenance)
        subprocess.run([LOA_MEM, "validate"], cwd=big, check=True, capture_output=True)
        print(f"\n{'operation (entries: ' + str(args.size) + ')':45} {'wall ms':>9} "
              f"{'cpu ms':>9} {'budget':>9}  verdict (wall; cpu)")
        if args.model:
            _row("embed every entry (first semantic recall)",
                 _once([LOA_MEM, "recall", "warm up", "--mode", "semantic"], big), 10000)
        _speed(big, modes, args.runs)
        if args.model:
            _after_remember(big, args.runs)
            exact_scan.check(big, [q for queries in sets.values() for q, _, _ in queries],
                             NOW)


def _speed(big: Path, modes: list[str], runs: int) -> None:
    """`recall QUERY` in each mode, and lexical and hybrid without their session
    neighbours."""
    query = "which relational store did we pick"
    config = big / ".loa.config.yaml"
    kept = config.read_text(encoding="utf-8")
    for mode in modes:
        _row(f"recall QUERY --mode {mode}", _time(
            [LOA_MEM, "recall", query, "--mode", mode], big, runs), 250)
        if mode == "semantic":
            continue
        config.write_text(kept.replace("\n  retrieval:", "\n  retrieval:\n    neighbours: "
                                       "false"), encoding="utf-8")
        _row(f"recall QUERY, {mode}, no session neighbours", _time(
            [LOA_MEM, "recall", query, "--mode", mode], big, runs), 250)
        config.write_text(kept, encoding="utf-8")


def _row(name: str, timing: Timing, budget: float) -> None:
    verdicts = ["ok" if ms <= budget else f"MISS by {ms - budget:.0f} ms" for ms in timing]
    print(f"{name:45} {timing[0]:9.0f} {timing[1]:9.0f} {budget:9.0f}  {'; '.join(verdicts)}")


def _after_remember(root: Path, runs: int) -> None:
    """remember (with its commit), then the hybrid recall that embeds the new entry."""
    remember, recall = [], []
    for n in range(runs):
        remember.append(_once([LOA_MEM, "remember", f"Bench note {n}: the relational store is "
                               f"PostgreSQL {n}.", "-c", "fact", "--confidence", "0.9"], root))
        recall.append(_once([LOA_MEM, "recall", "which relational store", "--mode", "hybrid"],
                            root))
    _row("remember (with commit; embeds nothing)", _median(remember), 350)
    _row("recall --mode hybrid after it (embeds 1)", _median(recall), 250)


if __name__ == "__main__":
    main()
