"""Make a model2vec model folder from WordLlama's static token embeddings: a second offline
stand-in for the default model, for the retrieval benchmarks on a machine that cannot reach
the model hub.

The PyPI wheel `wordllama` carries the 256-dimension token embeddings of its l2_supercat model
and their Llama-2 tokenizer. WordLlama embeds a text as model2vec does (the mean of its tokens'
vectors, normalized), so the folder only renames the matrix (`embeddings`, float32) and drops
the tokenizer's start token.

    .venv/bin/pip install --no-deps wordllama
    .venv/bin/python bench/wordllama_model.py /tmp/wordllama-static
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path


def _package() -> Path:
    # found, not imported: the package's own imports need its other dependencies
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("wordllama_model: install it first: .venv/bin/pip install --no-deps wordllama")
    return Path(next(iter(spec.submodule_search_locations)))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: wordllama_model.py OUTPUT_FOLDER")
    import numpy as np
    from safetensors.numpy import load_file, save_file

    package, folder = _package(), Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(package / "weights" / "l2_supercat_256.safetensors"))
    save_file({"embeddings": weights["embedding.weight"].astype(np.float32)},
              str(folder / "model.safetensors"))
    tokenizer = json.loads((package / "tokenizers" / "l2_supercat_tokenizer_config.json")
                           .read_text(encoding="utf-8"))
    tokenizer.update(post_processor=None, truncation=None, padding=None)  # no <s>
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps(
        {"normalize": True, "max_length": 512, "embedding_dtype": "float32"}), encoding="utf-8")
    print(f"model written to {folder}")


if __name__ == "__main__":
    main()
