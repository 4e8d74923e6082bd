"""Recall by meaning: local static embeddings beside the full-text index.

How it works, and what must always hold:

- The model is a model2vec static embedding model (a token vocabulary and one vector per
  token; a text's vector is the mean of its tokens' vectors). `model.py` fetches it once into
  the user's cache and keeps a prepared copy there (the token matrix as one `.npy` file, the
  tokenizer and, for a WordPiece or word-level one, its vocabulary), so a query costs a
  plain-Python tokenization (`wordpiece.py`) and a few rows of that matrix read with `struct`,
  never an import of numpy, model2vec, `tokenizers` or torch. The few entries a remember adds
  are embedded the same way; many entries at once (a clone, a rebuild) through numpy.
- Entry vectors live in `<git dir>/loa-mem/vectors.bin` beside the derived index (a float32
  matrix under a header whose generation stamp ties it to the index), memory-mapped by a query;
  the index's table `entry_vectors` maps each entry row to its row of the file, and a trigger
  drops that mapping when the entry's row goes, so a re-parsed file re-embeds exactly what
  changed, at the next recall; a clone, a deleted index or a damaged file rebuild it
  (`vectors.py`). The grimoire files stay the only truth.
- A query scores every row without numpy: `vectors.coarse` (`coarse.py`) holds the rows
  rounded to integers, by column, as the 32-bit lanes of Python integers, so a few hundred
  big-integer products estimate every cosine within a bound kept per row; the rows whose bound
  reaches the top are then scored exactly from `vectors.bin`. The ranking is the exact one;
  the copy shares the vectors file's generation, each block carries a checksum, and a copy
  that is stale, damaged or contradicted by an exact cosine is written anew.
- `fusion.py` turns a query into one relevance per candidate: lexical (bm25), semantic
  (cosine) or hybrid (reciprocal rank fusion of both rankings); the recall score then applies
  recency, confidence and tier to it exactly as it does to bm25 (see `loa_mem.recall`).
- Nothing here is imported unless recall runs in a semantic mode: this module itself imports
  nothing heavy. Whether a model is at hand (`cached`) is a few stats of the cache, so the
  default mode learns "no model: lexical" without importing numpy, platformdirs or `model.py`.
"""

from __future__ import annotations

import os
import re
import sys

__all__ = ["DEFAULT_MODEL", "MODES", "cache_root", "cached", "sha1_hex", "slug"]

MODES = ("lexical", "semantic", "hybrid")
DEFAULT_MODEL = "minishlab/potion-base-8M"
SOURCE_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def cache_root() -> str:
    """Where fetched and prepared models live: `<user cache>/loa-mem/models`. On Linux and the
    BSDs computed here exactly as platformdirs does (a test checks they agree), sparing recall
    its import; elsewhere platformdirs says."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = os.environ.get("XDG_CACHE_HOME", "").strip()
        return os.path.join(base or os.path.expanduser("~/.cache"), "loa-mem", "models")
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("loa-mem"), "models")


def sha1_hex(text: str) -> str:
    """SHA-1 of `text`, in hex: the interpreter's own `_sha1`, sparing a recall hashlib, which
    loads OpenSSL (~5 ms)."""
    try:
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import sha1
    return str(sha1(text.encode()).hexdigest())


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "--", text).strip("-") or "model"


def cached(name: str) -> bool:
    """Whether model `name` is at hand without the network: a local folder (prepared on first
    use), or a model id already fetched into the cache."""
    if os.path.isdir(os.path.expanduser(name)):
        return True
    source = os.path.join(cache_root(), slug(name), "source")
    return all(os.path.isfile(os.path.join(source, f)) for f in SOURCE_FILES)
