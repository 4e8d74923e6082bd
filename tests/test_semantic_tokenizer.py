"""A query's tokens in plain Python are the tokens the model's own tokenizer gives: checked on
generated texts against `tokenizers`, for a BERT WordPiece tokenizer (the one model2vec's
models use) and a word-level one (the tests' tiny model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.memory.semantic import wordpiece
from tests.semantic_support import build_model

WORDS = ["use", "postgres", "##ql", "##gres", "data", "##base", "database", "store", "relation",
         "##al", "deploy", "##s", "##ing", "café", "cafe", "naive", "中", "文", "test", "tests",
         "!", ",", ".", "-", "'", "(", ")", "x", "##x", "a", "##a"]
CHARS = ("aAbcdeéÉfgiI\u0131\u0130lnoprstuxyzDBS0123456789 \t\n\r!?.,;:-'()[]_"
         "中文日\u00a0\u2028\u200b\x00\x07\ufffd\u0301ß")
ALPHABET = st.sampled_from([*CHARS, "[CLS]", "[SEP]", "[UNK]", "postgresql", "database", "café "])


def wordpiece_tokenizer() -> object:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=12))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    return tokenizer


@pytest.fixture(scope="module")
def wordpiece_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object]:
    tokenizer = wordpiece_tokenizer()
    folder = tmp_path_factory.mktemp("wordpiece")
    assert wordpiece.describe(tokenizer.to_str(), folder)  # type: ignore[attr-defined]
    return tokenizer, wordpiece.Tokenizer(folder)


@pytest.fixture(scope="module")
def wordlevel_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object]:
    from tokenizers import Tokenizer

    model = build_model(tmp_path_factory.mktemp("wordlevel"))
    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    folder = model.parent
    assert wordpiece.describe(tokenizer.to_str(), folder)
    return tokenizer, wordpiece.Tokenizer(folder)


TEXTS = st.lists(ALPHABET, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_wordpiece_tokens_match_tokenizers(wordpiece_pair: tuple[object, object],
                                           text: str) -> None:
    theirs, ours = wordpiece_pair
    expected = theirs.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    assert ours.ids(text) == expected  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_word_level_tokens_match_tokenizers(wordlevel_pair: tuple[object, object],
                                            text: str) -> None:
    theirs, ours = wordlevel_pair
    expected = theirs.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    assert ours.ids(text) == expected  # type: ignore[attr-defined]


def test_a_tokenizer_it_does_not_reproduce_is_left_to_tokenizers(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.BPE({"a": 0, "b": 1}, [], unk_token="a"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    assert not wordpiece.describe(tokenizer.to_str(), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_query_is_encoded_without_importing_tokenizers(tmp_path: Path) -> None:
    import subprocess
    import sys

    from loa_mem.memory.semantic import model as semantic_model

    folder = build_model(tmp_path)
    prepared = semantic_model.prepared_folder(str(folder), None)
    script = ("import sys; from loa_mem.memory.semantic import model; "
              f"e = model.Encoder(__import__('pathlib').Path({str(prepared)!r})); "
              "v = e.encode(['which relational store']); "
              "print(round(float(v[0] @ v[0]), 3), 'tokenizers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1.0", "False"]
