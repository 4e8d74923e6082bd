"""Recall by meaning: local static embeddings beside the full-text index.

How it works, and what must always hold:

- The model is a model2vec static embedding model (a token vocabulary and one vector per
  token; a text's vector is the mean of its tokens' vectors). `model.py` fetches it once into
  the user's cache and keeps a prepared copy there (the token matrix as one `.npy` file and the
  tokenizer), so a query costs a tokenizer call and a few rows of that matrix, never an import
  of model2vec or torch.
- Entry vectors live in the derived index (`<git dir>/loa-mem/index.sqlite3`, table
  `entry_vectors`, keyed by the entry's row). A trigger drops an entry's vector when its row
  goes, so a re-parsed file, a clone or a deleted index re-embeds exactly what changed, at the
  next recall. The grimoire files stay the only truth.
- `fusion.py` turns a query into one relevance per candidate: lexical (bm25), semantic
  (cosine) or hybrid (reciprocal rank fusion of both rankings); the recall score then applies
  recency, confidence and tier to it exactly as it does to bm25 (see `loa_mem.recall`).
- Nothing here is imported unless recall runs in a semantic mode: this module itself imports
  nothing heavy.
"""

from __future__ import annotations

__all__ = ["MODES"]

MODES = ("lexical", "semantic", "hybrid")
