"""bench/bench_locomo.py on a small file in LoCoMo's format: it builds the store, asks each
question through recall and reports the evidence found, per variant."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_locomo.py"


def _sample(name: str, turns: list[tuple[str, str]], qa: list[dict[str, object]]
            ) -> dict[str, object]:
    return {"sample_id": name, "qa": qa, "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": speaker, "dia_id": f"D1:{n}", "text": text}
                      for n, (speaker, text) in enumerate(turns, 1)]}}


def _rows(output: str) -> dict[str, list[float]]:
    lines = output.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("mode"))
    return {line[:52].strip(): [float(v) for v in line[52:].split()]
            for line in lines[start + 1:] if line.strip()}


def test_the_bench_reports_the_evidence_found(tmp_path: Path) -> None:
    support = [("Caroline", "Guess what, I went to a support group yesterday."),
               ("Melanie", "It sounds really moving, well done.")]
    filler = [("Maria", f"Support group on day {n}.")
              for n in range(12)]
    data = [_sample("conv-a", support + filler, [
                {"question": "When did she go to the support group?", "evidence": ["D1:1"],
                 "category": 2},
                {"question": "How was the support group yesterday?", "evidence": ["D1:2"],
                 "category": 1},
                {"question": "Unanswerable", "evidence": [], "category": 5}]),
            _sample("conv-b", [("Jon", "I opened a dance studio downtown.")],
                    [{"question": "What did Jon open?", "evidence": ["D1:1", "D9:9"],
                      "category": 4}])]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    ran = subprocess.run([sys.executable, str(BENCH), str(path)], capture_output=True,
                         text=True, check=True)

    assert "2 conversations, 3 questions with evidence" in ran.stdout
    rows = _rows(ran.stdout)
    # the reply that holds no word of its question comes as the session neighbour of the
    # turn it answers; a label naming a turn that does not exist ("D9:9") is left out
    assert rows["lexical"][1] == 1.0
    assert rows["lexical, no session neighbours"][1] == round(2 / 3, 3)
    # "went" ranks first for "go" only with the irregular forms (MRR)
    assert rows["lexical, no session neighbours"][2] == round(2 / 3, 3)
    assert rows["lexical, no neighbours, irregular forms not joined"][2] < round(2 / 3, 3)
    assert set(rows) == {"lexical", "lexical, no session neighbours",
                         "lexical, no neighbours, irregular forms not joined",
                         "lexical, stop words matched, no forms or neighbours"}

    each = subprocess.run([sys.executable, str(BENCH), str(path), "--store", "each",
                           "--no-speakers", "--categories", "2"], capture_output=True,
                          text=True, check=True)
    assert "2 conversations, 1 questions with evidence; store: each" in each.stdout
    assert "speakers: no" in each.stdout
    assert _rows(each.stdout)["lexical"][1] == 1.0


def test_a_missing_or_foreign_data_file_is_one_line(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.json"
    foreign.write_text('[{"qa": []}]', encoding="utf-8")
    for path, said in ((tmp_path / "none.json", "cannot read"),
                       (foreign, "is not in LoCoMo's format")):
        ran = subprocess.run([sys.executable, str(BENCH), str(path)], capture_output=True,
                             text=True, check=False)
        assert ran.returncode == 1
        assert ran.stderr.startswith("bench_locomo: ") and said in ran.stderr
        assert "Traceback" not in ran.stderr and len(ran.stderr.splitlines()) == 1


def test_with_a_model_the_bench_adds_meaning_and_the_two_top_tens_together(
        tmp_path: Path) -> None:
    from tests.semantic_support import build_model

    turns = [("Caroline", "We use postgresql for the storage layer."),
             ("Melanie", "The release ships on monday.")]
    turns += [("Maria", f"The team is in the office on day {n}.") for n in range(14)]
    data = [_sample("conv-a", turns, [
        {"question": "Which relational database?", "evidence": ["D1:1"], "category": 1},
        {"question": "When is the release?", "evidence": ["D1:2"], "category": 2}])]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    ran = subprocess.run([sys.executable, str(BENCH), str(path), "--no-sessions", "--model",
                          str(build_model(tmp_path))], capture_output=True, text=True,
                         check=True)

    rows = _rows(ran.stdout)
    # the paraphrase shares no word with its turn: only the meaning ranking finds it
    assert rows["lexical, no session neighbours"][1] == 0.5
    assert rows["semantic"][1] == 1.0 and rows["hybrid, no session neighbours"][1] == 1.0
    # the union row prints recall@10 alone, over both top 10s
    assert rows["lexical top 10 + semantic top 10 (20 results)"] == [1.0]
