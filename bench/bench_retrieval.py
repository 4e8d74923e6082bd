"""Retrieval quality and speed of recall's modes: lexical, semantic and hybrid.

Quality: the labelled set of `retrieval_set.py` (100 memories, 200 queries: one sharing words
with its memory, one paraphrase sharing none) in a store of 1,000 entries, the other 900 being
sentences drawn from the same vocabulary, so they compete for every word. For each mode:
recall@5, recall@10 and MRR@10 (one right answer per query), over all queries and over the
paraphrases alone. Lexical variants show what each default change is worth.

Speed: `loa-mem recall QUERY` as a whole process (the venv's own `loa-mem`) on 10,000 entries,
median of several runs after one warm-up, per mode; and the time to embed 10,000 entries from
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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from retrieval_set import SET  # beside this file

LOA_MEM = str(Path(sys.executable).with_name("loa-mem"))
NOW = "2026-11-22T12:00:00Z"
FILES = {"fact": "facts", "decision": "decisions", "learning": "learnings", "error": "errors",
         "preference": "preferences"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _entry(n: int, category: str, content: str) -> str:
    return (f"- id: MEM-20261101-{n:05d}\n  category: {category}\n"
            f"  content: {_quote(content)}\n  confidence: 0.95\n"
            f"  source:\n    session_id: bench\n    timestamp: 2026-11-01T10:00:00Z\n"
            f"  ttl: permanent\n  expires_at: null\n  tags: []\n")


def _distractors(count: int, rng: random.Random) -> list[tuple[str, str]]:
    words = sorted({w for _, memory, _, _ in SET for w in re.findall(r"[A-Za-z][\w-]+", memory)})
    return [(rng.choice(list(FILES)), " ".join(rng.choice(words) for _ in range(rng.randint(
        8, 16))).capitalize() + ".") for _ in range(count)]


def build(root: Path, size: int, model: str | None) -> list[str]:
    """A store of `size` entries, the labelled ones first; their ids, in SET's order."""
    root.mkdir(parents=True)
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    subprocess.run([LOA_MEM, "init"], cwd=root, env=env, check=True, capture_output=True)
    rows = [(c, m) for c, m, _, _ in SET] + _distractors(size - len(SET), random.Random(7))
    texts: dict[str, list[str]] = {c: [] for c in FILES}
    for n, (category, content) in enumerate(rows):
        texts[category].append(_entry(n, category, content))
    memory = root / "grimoires" / "loa" / "memory"
    for category, name in FILES.items():
        (memory / f"{name}.yaml").write_text("".join(texts[category]), encoding="utf-8")
    if model:
        config = root / ".loa.config.yaml"
        config.write_text(config.read_text(encoding="utf-8").replace(
            "\n  retrieval:", f"\n  retrieval:\n    model: {model}"), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "bench store"], cwd=root, check=True)
    return [f"MEM-20261101-{n:05d}" for n in range(len(SET))]


def _stems(text: str) -> set[str]:
    from loa_mem.memory.stopwords import STOP_WORDS

    def stem(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if word.endswith(suffix) and len(word) > len(suffix) + 3:
                return word[: -len(suffix)]
        return word
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS}


def quality(root: Path, answers: list[str], mode: str) -> dict[str, float]:
    from loa_mem.memory.recall import Filters, rank
    from loa_mem.memory.store import Store

    os.environ["LOA_MEM_NOW"] = NOW
    store = Store.open(str(root))
    db = store.index.db
    retrieval = store.config.retrieval
    ranks: dict[str, list[int | None]] = {"word": [], "paraphrase": []}
    for (_, _, word, paraphrase), answer in zip(SET, answers, strict=True):
        for kind, query in (("word", word), ("paraphrase", paraphrase)):
            hits = [h.id for h in rank(db, Filters(query=query, limit=10, mode=mode), 0.2,
                                       retrieval)]
            ranks[kind].append(hits.index(answer) + 1 if answer in hits else None)
    every = ranks["word"] + ranks["paraphrase"]

    def scores(found: list[int | None]) -> tuple[float, float, float]:
        return (sum(1 for r in found if r and r <= 5) / len(found),
                sum(1 for r in found if r) / len(found),
                sum(1 / r for r in found if r) / len(found))
    r5, r10, mrr = scores(every)
    _, p10, pmrr = scores(ranks["paraphrase"])
    return {"r@5": r5, "r@10": r10, "mrr": mrr, "para r@10": p10, "para mrr": pmrr}


def _time(command: list[str], cwd: Path, runs: int) -> float:
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="a model2vec model folder or id")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", type=int, default=10000)
    args = parser.parse_args()
    modes = ["lexical", "semantic", "hybrid"] if args.model else ["lexical"]
    overlap = sum(1 for _, m, _, p in SET if _stems(m) & _stems(p))
    print(f"{len(SET) * 2} queries over {len(SET)} labelled memories in 1,000 entries; "
          f"paraphrases sharing a word with their memory: {overlap}")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "quality"
        answers = build(small, 1000, args.model)
        from loa_mem.memory import scoring, stopwords

        rows: list[tuple[str, dict[str, float]]] = []
        kept = stopwords.STOP_WORDS
        stopwords.STOP_WORDS = frozenset()
        rows.append(("lexical, as before (stop words matched)", quality(small, answers,
                                                                        "lexical")))
        stopwords.STOP_WORDS = kept
        for weights in ("1.0, 1.0, 1.0", "1.0, 2.0, 2.0"):
            scoring.FIELD_WEIGHTS = weights
            rows.append((f"lexical, stop words out, weights {weights}",
                         quality(small, answers, "lexical")))
        for mode in modes[1:]:
            rows.append((mode, quality(small, answers, mode)))
        print(f"{'mode':45} {'r@5':>6} {'r@10':>6} {'MRR':>6} {'para r@10':>10} {'para MRR':>9}")
        for name, found in rows:
            print(f"{name:45} {found['r@5']:6.3f} {found['r@10']:6.3f} {found['mrr']:6.3f} "
                  f"{found['para r@10']:10.3f} {found['para mrr']:9.3f}")
        big = Path(tmp) / "speed"
        build(big, args.size, args.model)
        subprocess.run([LOA_MEM, "validate"], cwd=big, check=True, capture_output=True)
        print(f"\noperation (entries: {args.size})              median ms  budget ms  verdict")
        if args.model:
            start = time.perf_counter()
            subprocess.run([LOA_MEM, "recall", "warm up", "--mode", "semantic"], cwd=big,
                           check=True, capture_output=True)
            build_ms = (time.perf_counter() - start) * 1000
            print(f"{'embed every entry (first semantic recall)':45} {build_ms:9.0f}      10000  "
                  f"{'ok' if build_ms <= 10000 else 'MISS'}")
        for mode in modes:
            ms = _time([LOA_MEM, "recall", "postgres database", "--mode", mode], big, args.runs)
            verdict = "ok" if ms <= 250 else f"MISS by {ms - 250:.0f} ms"
            print(f"{'recall QUERY --mode ' + mode:45} {ms:9.0f}        250  {verdict}")


if __name__ == "__main__":
    main()
