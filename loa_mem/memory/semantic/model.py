"""The embedding model: found, fetched once, prepared once, then loaded cheaply.

A model is named as in `memory_schema.retrieval.model`: a model2vec model id (fetched once
into `<user cache>/loa-mem/models/`) or a local folder holding a model2vec model
(`config.json`, `model.safetensors`, `tokenizer.json`). Either way model2vec itself reads it
once and a prepared copy goes to the cache: the token matrix with the model's weights and token
mapping applied (and cut to `dimensions` when set), the tokenizer, and what encoding needs.
Encoding then reproduces model2vec's `StaticModel.encode` (mean of the token vectors of the
text, unknown tokens dropped, the same truncation) from that copy with numpy and tokenizers,
which a recall process can afford; model2vec is imported only to prepare.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loa_mem.core.errors import LoaMemError
from loa_mem.memory.semantic import DEFAULT_MODEL, SOURCE_FILES, slug, wordpiece

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FORMAT = 2  # of the prepared copy; a change re-prepares every model
PLAIN_BATCH = 8  # up to this many texts (a query) are tokenized without `tokenizers`

# numpy's BLAS would start a thread per core at import (~10 ms each on a busy machine) for a
# product a single thread does in a millisecond; set before numpy is first imported
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
_FETCHED = ["config.json", "model.safetensors", "tokenizer.json", "modules.json",
            "0_StaticEmbedding/*", "README.md"]


class ModelUnavailable(LoaMemError):
    """The semantic extra is missing, or the model cannot be had (offline and not cached)."""

    kind = "semantic"


def cache_root() -> Path:
    from loa_mem.memory.semantic import cache_root as root

    return Path(root())


def _signature(folder: Path) -> str:
    """What the prepared copy was made from: each source file's size and mtime."""
    parts = []
    for name in SOURCE_FILES:
        stat = (folder / name).stat()
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def _has_model(folder: Path) -> bool:
    return all((folder / name).is_file() for name in SOURCE_FILES)


def _fetch(name: str, dest: Path) -> None:
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise ModelUnavailable(
            f"the embedding model {name} is not in the cache ({dest.parent}) and HF_HUB_OFFLINE "
            "is set", _HINT)
    # a diagnostic before a wait of seconds: it must show now, not after the results
    sys.stderr.write(f"loa-mem: fetching the embedding model {name} once into {dest.parent} "
                     "(about 30 MB)...\n")
    sys.stderr.flush()
    import shutil
    import tempfile

    try:
        import huggingface_hub

        tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=dest.parent))
        huggingface_hub.snapshot_download(name, repo_type="model", local_dir=tmp,
                                          allow_patterns=_FETCHED)
        if not _has_model(tmp):
            raise ModelUnavailable(f"{name} is not a model2vec model (no {SOURCE_FILES})",
                                   "name a model2vec model, e.g. " + DEFAULT_MODEL)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
    except ModelUnavailable:
        raise
    except Exception as error:  # network, hub and disk errors all mean the same here
        raise ModelUnavailable(f"could not fetch the embedding model {name}: "
                               f"{type(error).__name__}", _HINT) from None


_HINT = ("connect once so it can be fetched, set memory_schema.retrieval.model to a local "
         "model folder, or recall with --mode lexical")


def prepared_folder(name: str, dimensions: int | None, fetch: bool = True) -> Path:
    """The prepared copy of model `name` (made or fetched first when needed)."""
    local = Path(name).expanduser()
    root = cache_root()
    if local.is_dir():
        source = local.resolve()
        if not _has_model(source):
            raise ModelUnavailable(f"{name} holds no model2vec model "
                                   f"({', '.join(SOURCE_FILES)})", _HINT)
        home = root / f"local-{hashlib.sha1(str(source).encode()).hexdigest()[:12]}"
    else:
        home = root / slug(name)
        source = home / "source"
    key = f"{name}|{dimensions or 'all'}|format{FORMAT}"
    target = home / f"prepared-{dimensions or 'all'}"
    if not _has_model(source):
        if not fetch:
            raise ModelUnavailable(f"the embedding model {name} is not in the cache ({root})",
                                   _HINT)
        source.parent.mkdir(parents=True, exist_ok=True)
        _fetch(name, source)
    key = f"{key}|{_signature(source)}"
    try:
        meta = json.loads((target / "prepared.json").read_text(encoding="utf-8"))
        if meta.get("key") == key:
            return target
    except (OSError, ValueError):
        pass
    _prepare(source, target, key, dimensions)
    return target


def _prepare(source: Path, target: Path, key: str, dimensions: int | None) -> None:
    import shutil
    import tempfile

    import numpy as np

    try:
        from model2vec import StaticModel
    except ImportError:
        raise ModelUnavailable("preparing a model needs model2vec",
                               "pip install 'loa-mem[semantic]'") from None
    try:
        static = StaticModel.from_pretrained(source)
    except Exception as error:
        raise ModelUnavailable(f"could not read the embedding model in {source}: "
                               f"{type(error).__name__}: {error}", _HINT) from None
    ids = np.arange(static.tokenizer.get_vocab_size())
    rows = static.token_mapping[ids] if static.token_mapping is not None else ids
    matrix = np.asarray(static.embedding[rows], dtype=np.float32)
    if static.weights is not None:
        matrix = matrix * np.asarray(static.weights, dtype=np.float32)[ids][:, None]
    if dimensions:
        matrix = matrix[:, :dimensions]
    static.tokenizer.no_truncation()
    meta = {"key": key, "dim": int(matrix.shape[1]), "unk": static.unk_token_id,
            "max_length": static.max_length, "median": int(static.median_token_length)}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".prepare-", dir=target.parent))
    np.save(tmp / "embeddings.npy", np.ascontiguousarray(matrix))
    (tmp / "tokenizer.json").write_text(static.tokenizer.to_str(), encoding="utf-8")
    wordpiece.describe(static.tokenizer.to_str(), tmp)
    (tmp / "prepared.json").write_text(json.dumps(meta), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)


class Encoder:
    """Texts to unit vectors, as model2vec's `StaticModel.encode(normalize=True)` would."""

    def __init__(self, folder: Path) -> None:
        import numpy as np

        meta: dict[str, Any] = json.loads((folder / "prepared.json").read_text(encoding="utf-8"))
        self.key = str(meta["key"])
        self.dim = int(meta["dim"])
        self._folder = folder
        self._unk: int | None = meta.get("unk")
        self._max_length: int | None = meta.get("max_length")
        self._chars = self._max_length * int(meta["median"]) if self._max_length else None
        self._matrix = np.load(folder / "embeddings.npy", mmap_mode="r")
        self._plain = (wordpiece.Tokenizer(folder) if (folder / wordpiece.SPEC).is_file()
                       else None)
        self._fast: Any = None

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids as the model's tokenizer gives them (no special tokens
        added): in plain Python for a few texts, through `tokenizers` for many."""
        if self._plain is not None and len(texts) <= PLAIN_BATCH:
            return [self._plain.ids(text) for text in texts]
        if self._fast is None:
            from tokenizers import Tokenizer

            self._fast = Tokenizer.from_file(str(self._folder / "tokenizer.json"))
        return [e.ids for e in self._fast.encode_batch_fast(texts, add_special_tokens=False)]

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if self._chars:
            texts = [text[:self._chars] for text in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, found in enumerate(self.token_ids(texts)):
            ids = found[:self._max_length] if self._max_length else found
            if self._unk is not None:
                ids = [t for t in ids if t != self._unk]
            if ids:
                out[i] = self._matrix[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True) + 1e-32
        unit: npt.NDArray[np.float32] = (out / norms).astype(np.float32)
        return unit


_LOADED: dict[tuple[str, int | None], Encoder] = {}


def load(name: str, dimensions: int | None, fetch: bool = True) -> Encoder:
    """The encoder of a model, kept for the life of the process (the MCP server's)."""
    found = _LOADED.get((name, dimensions))
    if found is None:
        found = _LOADED[(name, dimensions)] = Encoder(prepared_folder(name, dimensions, fetch))
    return found
