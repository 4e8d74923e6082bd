"""Evidence recall on LoCoMo, the public long-conversation memory benchmark, if you have it.

LoCoMo (Maharana et al., 2024) holds ten long conversations between two people over many
sessions, and about 2,000 questions, each labelled with the turns ("D1:3") that hold its
answer. Each turn becomes one memory, as an agent's hook would keep it: its content is
"Speaker: text", its source the conversation's session and the session's date, a minute
between turns. The script asks each question through recall (top 10) and reports how much of
its evidence comes back: recall@5, recall@10 and MRR (1/rank of the first evidence turn).

The data is not shipped with loa-mem (its licence is CC BY-NC 4.0) and nothing is
downloaded; give the path of `locomo10.json` from https://github.com/snap-research/locomo:

    .venv/bin/python bench/bench_locomo.py PATH/locomo10.json

`--store each` gives each conversation a store of its own (default: all ten in one store, so
each question competes with every conversation's turns); `--no-sessions` records every turn
outside a session, as `remember` does without --session, so no turn has session neighbours;
`--captions` adds the caption of a shared photo to its turn's text, `--no-speakers` keeps a
turn's text without its speaker's name. Questions of every category with evidence count
(`--categories` picks some).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_retrieval import _match, _quote, scored, use_model  # beside this file

from bench import committed, new_store

NOW = "2024-06-01T00:00:00Z"
Question = tuple[str, list[str], str]  # text, evidence entry ids, category


def _when(text: str) -> dt.datetime:
    """A session's date as LoCoMo writes it: "1:56 pm on 8 May, 2023"."""
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def _turns(sample: dict[str, Any], tag: str, sessions: bool, captions: bool,
           speakers: bool = True) -> list[tuple[str, str, str, str]]:
    """(dia id, content, session id, timestamp) of each turn of one conversation."""
    conversation = sample["conversation"]
    found = []
    n = 1
    while f"session_{n}" in conversation:
        start = _when(conversation[f"session_{n}_date_time"])
        for minute, turn in enumerate(conversation[f"session_{n}"]):
            content = f"{turn['speaker']}: {turn['text']}" if speakers else str(turn["text"])
            if captions and turn.get("blip_caption"):
                content += f" [shares {turn['blip_caption']}]"
            stamp = (start + dt.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")
            found.append((turn["dia_id"], content,
                          f"locomo-{tag}-{n}" if sessions else "manual", stamp))
        n += 1
    return found


def build(root: Path, samples: list[dict[str, Any]], sessions: bool, captions: bool,
          speakers: bool = True) -> list[list[Question]]:
    """One store of the samples' turns; each sample's questions over the store's ids."""
    new_store(root, NOW)
    entries: list[str] = []
    questions: list[list[Question]] = []
    for number, sample in enumerate(samples):
        tag = str(sample.get("sample_id", number))
        ids: dict[str, str] = {}
        for dia, content, session, stamp in _turns(sample, tag, sessions, captions, speakers):
            ids[dia] = f"MEM-20230101-{len(entries):05d}"
            entries.append(f"- id: {ids[dia]}\n  category: fact\n  content: {_quote(content)}\n"
                           f"  confidence: 0.9\n  source:\n    session_id: {session}\n"
                           f"    timestamp: {stamp}\n  ttl: permanent\n  expires_at: null\n"
                           f"  tags: []\n")
        asked = []
        for item in sample["qa"]:
            # a few labels hold several ids ("D9:1 D4:4"), a stray colon ("D:11:26") or a
            # leading zero ("D30:05"); a
            # few name a turn that does not exist ("D10:19" of a 16-turn session): left out
            labels = [re.sub(r":0+(?=\d)", ":", re.sub(r"^D:", "D", label))
                      for given in item.get("evidence", [])
                      for label in re.split(r"[\s,;]+", str(given)) if label]
            evidence = [ids[label] for label in dict.fromkeys(labels) if label in ids]
            if evidence:
                asked.append((str(item["question"]), evidence, str(item.get("category", ""))))
        questions.append(asked)
    facts = root / "grimoires" / "loa" / "memory" / "facts.yaml"
    facts.write_text("".join(entries), encoding="utf-8")
    committed(root, "LoCoMo turns")
    return questions


def quality(root: Path, questions: list[Question], mode: str, neighbours: bool
            ) -> list[tuple[float, float, float]]:
    """(recall@5, recall@10, reciprocal rank) of each question."""
    from loa_mem.memory.recall import Filters, rank
    from loa_mem.memory.store import Store

    os.environ["LOA_MEM_NOW"] = NOW
    store = Store.open(str(root))
    retrieval = {**store.config.retrieval, "neighbours": neighbours}
    found = []
    for text, evidence, _ in questions:
        hits: list[str] = []
        # "union": the lexical top 10, then the semantic top 10's other entries (20 at most:
        # the evidence either ranking alone puts in its top 10)
        for part in ("lexical", "semantic") if mode == "union" else (mode,):
            hits += [h.id for h in rank(store.index.db, Filters(query=text, limit=10, mode=part),
                                        0.2, retrieval) if h.id not in hits]
        found.append(scored(hits, set(evidence)))
    return found


# (row, mode, session neighbours, irregular forms joined, stop words out of the match)
LEXICAL_ROWS = [
    ("lexical", "lexical", True, True, True),
    ("lexical, no session neighbours", "lexical", False, True, True),
    ("lexical, no neighbours, irregular forms not joined", "lexical", False, False, True),
    ("lexical, stop words matched, no forms or neighbours", "lexical", False, False, False),
]
# recall@10 over both top 10s (20 results): its r@5 and MRR would be lexical recall's
UNION = "lexical top 10 + semantic top 10 (20 results)"
MODEL_ROWS = [("semantic", "semantic", False, True, True), ("hybrid", "hybrid", True, True, True),
              ("hybrid, no session neighbours", "hybrid", False, True, True),
              (UNION, "union", False, True, True)]


def measured(root: Path, questions: list[Question], row: tuple[str, str, bool, bool, bool]
             ) -> list[tuple[float, float, float]]:
    """`quality` for one row, its full-text match made as the row says (stop words, forms)."""
    from loa_mem.memory import scoring

    _, mode, neighbours, forms, stop_words_out = row
    kept = scoring.match_expression
    if not (forms and stop_words_out):
        scoring.match_expression = _match("out" if stop_words_out else "in", True, forms)
    try:
        return quality(root, questions, mode, neighbours)
    finally:
        scoring.match_expression = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="LoCoMo's locomo10.json")
    parser.add_argument("--store", choices=["one", "each"], default="one")
    parser.add_argument("--no-sessions", action="store_true")
    parser.add_argument("--captions", action="store_true")
    parser.add_argument("--no-speakers", action="store_true", help="a turn's text alone")
    parser.add_argument("--categories", default="", help="e.g. 1,2,3,4 (default: all)")
    parser.add_argument("--model", help="a model2vec model folder: semantic and hybrid rows too")
    args = parser.parse_args()
    try:
        samples = json.loads(args.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        sys.exit(f"bench_locomo: cannot read {args.data}: {problem}")
    wanted = set(args.categories.split(",")) - {""}
    groups = [samples] if args.store == "one" else [[s] for s in samples]
    rows: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for number, group in enumerate(groups):
            root = Path(tmp) / f"store-{number}"
            try:
                asked = build(root, group, not args.no_sessions, args.captions,
                              not args.no_speakers)
            except (KeyError, TypeError, ValueError, AttributeError) as problem:
                sys.exit(f"bench_locomo: {args.data} is not in LoCoMo's format ({problem!r})")
            questions = [q for group_asked in asked for q in group_asked
                         if not wanted or q[2] in wanted]
            if args.model:
                use_model(root, args.model)
            for row in LEXICAL_ROWS + (MODEL_ROWS if args.model else []):
                rows.setdefault(row[0], []).extend(measured(root, questions, row))
    count = len(next(iter(rows.values())))
    print(f"LoCoMo: {len(samples)} conversations, {count} questions with evidence; "
          f"store: {args.store}; sessions: {'no' if args.no_sessions else 'yes'}; "
          f"speakers: {'no' if args.no_speakers else 'yes'}; "
          f"captions: {'yes' if args.captions else 'no'}")
    print(f"{'mode':52} {'r@5':>6} {'r@10':>6} {'MRR':>6}")
    for name, found in rows.items():
        means = [sum(f[i] for f in found) / len(found) for i in range(3)]
        if name == UNION:
            print(f"{name:52} {'':6} {means[1]:6.3f}")
        else:
            print(f"{name:52} {means[0]:6.3f} {means[1]:6.3f} {means[2]:6.3f}")


if __name__ == "__main__":
    main()
