"""A tiny model2vec model built by the test: a word-level vocabulary in which the words of one
topic share a direction, saved with model2vec's own `save_pretrained`, so the real loading,
preparing, embedding and indexing code runs with no download."""

from __future__ import annotations

from pathlib import Path

TOPICS = {
    "database": "database databases postgresql postgres relational store storage sql sqlite "
                "tables schema persistence",
    "deploy": "deploy deploys deployment release releases ship shipping production rollout "
              "kubernetes",
    "testing": "test tests testing pytest suite flaky ci mocked",
    "speed": "slow latency fast performance cache caching timeout timeouts sluggish",
    "people": "team colleague developer developers reviewer reviewers people",
}
OTHER = [
    "use", "for", "the", "layer", "we", "a", "an", "of", "to", "on", "in", "is", "was", "with",
    "by", "it", "jsonb", "team's", "office", "monday", "how", "what", "do", "our", "where",
    "which", "rejected", "because"
]
DIM = 16


def build_model(where: Path, dims: int = DIM) -> Path:
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words: list[str] = ["[UNK]"]
    vectors = [np.zeros(dims, dtype=np.float32)]
    rng = np.random.default_rng(7)
    for axis, text in enumerate(TOPICS.values()):
        for word in text.split():
            if word in words:
                continue
            vector = rng.normal(0, 0.05, dims).astype(np.float32)
            vector[axis] += 1.0
            words.append(word)
            vectors.append(vector)
    for word in OTHER:
        if word not in words:
            vector = rng.normal(0, 0.05, dims).astype(np.float32)
            vector[len(TOPICS) + len(words) % (dims - len(TOPICS))] += 0.3
            words.append(word)
            vectors.append(vector)
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = where / "tiny-model"
    StaticModel(vectors=np.stack(vectors), tokenizer=tokenizer, normalize=True).save_pretrained(
        folder)
    return folder
