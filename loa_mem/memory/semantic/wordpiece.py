"""A query's tokens in plain Python, as the model's own `tokenizers` tokenizer gives them.

Importing `tokenizers` and reading its `tokenizer.json` costs a recall process tens of
milliseconds; one short query needs neither. This module reproduces the tokenizers that
model2vec models use (a BERT normalizer or a lowercasing one, BERT's or the whitespace
pre-tokenizer, a WordPiece or word-level vocabulary, special tokens matched as written) from a
small description written when the model is prepared (`describe`), and says so when a model
uses anything else: the encoder then keeps using `tokenizers` (`model.py`). A test compares
both on generated texts.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from typing import Any

SPEC = "wordpiece.json"
VOCAB = "vocab.txt"
_NORMALIZERS = {"BertNormalizer", "Lowercase"}
_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace"}
_MODELS = {"WordPiece", "WordLevel"}
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def describe(tokenizer_json: str, folder: str | os.PathLike[str]) -> bool:
    """Write the plain description of a tokenizer into `folder`; False (nothing written) when
    it uses something this module does not reproduce."""
    data = json.loads(tokenizer_json)
    normalizer, pre, model = data.get("normalizer"), data.get("pre_tokenizer"), data["model"]
    if normalizer is not None and normalizer.get("type") not in _NORMALIZERS:
        return False
    if (pre or {}).get("type") not in _PRE_TOKENIZERS or model.get("type") not in _MODELS:
        return False
    vocab: dict[str, int] = model["vocab"]
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[t] for t in tokens] != list(range(len(tokens))) or any(
            "\n" in t or "\r" in t for t in tokens):
        return False
    added = []
    for token in data.get("added_tokens") or []:
        if token.get("normalized") or token.get("single_word") or token.get(
                "lstrip") or token.get("rstrip"):
            return False
        added.append([token["content"], int(token["id"])])
    spec = {"normalizer": normalizer, "pre_tokenizer": pre["type"], "model": model["type"],
            "unk": model.get("unk_token"), "prefix": model.get("continuing_subword_prefix", "##"),
            "max_chars": model.get("max_input_chars_per_word", 100), "added": added}
    with open(os.path.join(folder, VOCAB), "w", encoding="utf-8", newline="") as handle:
        handle.write("\n".join(tokens))
    with open(os.path.join(folder, SPEC), "w", encoding="utf-8") as handle:
        handle.write(json.dumps(spec))
    return True


class Vocabulary:
    """Token -> id over the bytes of the vocabulary file (one token a line, in id order). A
    query looks up a few dozen pieces, so the dictionary of every token (~30,000: 5-10 ms to
    build, more than the rest of the model's loading) is never made: a piece is found in the
    bytes and its id counted from the line breaks before it, then kept."""

    def __init__(self, raw: bytes) -> None:
        self._raw = b"\n" + raw + b"\n"
        self._known: dict[str, int | None] = {}

    def get(self, piece: str, default: int | None = None) -> int | None:
        if piece in self._known:
            found = self._known[piece]
        else:
            at = self._raw.find(b"\n" + piece.encode("utf-8", "surrogatepass") + b"\n")
            found = self._known[piece] = None if at < 0 else self._raw.count(b"\n", 0, at)
        return default if found is None else found

    def __contains__(self, piece: str) -> bool:
        return self.get(piece) is not None

    def __getitem__(self, piece: str) -> int:
        found = self.get(piece)
        if found is None:
            raise KeyError(piece)
        return found


class Tokenizer:
    """Text to token ids, for a tokenizer `describe` accepted."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        with open(os.path.join(folder, SPEC), encoding="utf-8") as handle:
            spec: dict[str, Any] = json.load(handle)
        with open(os.path.join(folder, VOCAB), "rb") as raw:
            self._vocab = Vocabulary(raw.read())
        self._normalizer: dict[str, Any] | None = spec["normalizer"]
        self._bert_split = spec["pre_tokenizer"] == "BertPreTokenizer"
        self._wordpiece = spec["model"] == "WordPiece"
        self._unk: int | None = self._vocab.get(spec["unk"]) if spec["unk"] else None
        self._prefix = str(spec["prefix"])
        self._max_chars = int(spec["max_chars"])
        self._added = {content: i for content, i in spec["added"]}
        self._added_split = re.compile("(" + "|".join(
            re.escape(c) for c in sorted(self._added, key=len, reverse=True)) + ")") if (
            self._added) else None

    def ids(self, text: str) -> list[int]:
        pieces = self._added_split.split(text) if self._added_split else [text]
        out: list[int] = []
        for n, piece in enumerate(pieces):
            if n % 2:
                out.append(self._added[piece])
            elif piece:
                for word in self._words(self._normalize(piece)):
                    out.extend(self._word_ids(word))
        return out

    def _normalize(self, text: str) -> str:
        spec = self._normalizer
        if spec is None:
            return text
        if spec["type"] == "Lowercase":
            return text.lower()
        if spec.get("clean_text", True):
            text = "".join(" " if _is_space(c) else c for c in text
                           if not (c in "\0\ufffd" or _is_control(c)))
        if spec.get("handle_chinese_chars", True):
            text = "".join(f" {c} " if _is_cjk(c) else c for c in text)
        lowercase = spec.get("lowercase", True)
        strip = spec.get("strip_accents")
        if strip is None:
            strip = lowercase
        if strip:
            text = "".join(c for c in unicodedata.normalize("NFD", text)
                           if unicodedata.category(c) != "Mn")
        return text.lower() if lowercase else text

    def _words(self, text: str) -> list[str]:
        if not self._bert_split:
            return _whitespace_words(text)
        words: list[str] = []
        for chunk in text.split():
            start = 0
            for i, c in enumerate(chunk):
                if _is_punctuation(c):
                    if i > start:
                        words.append(chunk[start:i])
                    words.append(c)
                    start = i + 1
            if start < len(chunk):
                words.append(chunk[start:])
        return words

    def _word_ids(self, word: str) -> list[int]:
        vocab = self._vocab
        if not self._wordpiece:
            found = vocab.get(word, self._unk)
            return [] if found is None else [found]
        unknown = [] if self._unk is None else [self._unk]
        if len(word) > self._max_chars:
            return unknown
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                if piece in vocab:
                    ids.append(vocab[piece])
                    break
                end -= 1
            if end == start:
                return unknown
            start = end
        return ids


def _whitespace_words(text: str) -> list[str]:
    """The `Whitespace` pre-tokenizer: runs of word characters and runs of other visible ones
    (the regex `\\w+|[^\\w\\s]+` with Rust's Unicode classes, where marks are word characters)."""
    words: list[str] = []
    current: list[str] = []
    kind = ""
    for c in text:
        now = "s" if _is_space(c) else "w" if _is_word(c) else "p"
        if now != kind and current:
            words.append("".join(current))
            current = []
        kind = now
        if now != "s":
            current.append(c)
    if current:
        words.append("".join(current))
    return words


def _is_word(c: str) -> bool:
    category = unicodedata.category(c)
    return category[0] in "LM" or category in ("Nd", "Nl", "Pc") or c in "\u200c\u200d"


def _is_space(c: str) -> bool:
    return c in " \t\n\r" or (c.isspace() and c not in "\x1c\x1d\x1e\x1f")  # White_Space


def _is_control(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_cjk(c: str) -> bool:
    code = ord(c)
    return any(low <= code <= high for low, high in _CJK)


def _is_punctuation(c: str) -> bool:
    return (c.isascii() and not c.isalnum() and c.isprintable() and not c.isspace()) or (
        unicodedata.category(c).startswith("P"))
