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

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from loa_mem.core.errors import LoaMemError
from loa_mem.memory.semantic import DEFAULT_MODEL, SOURCE_FILES, sha1_hex, slug, wordpiece

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


# paths are strings here (os.path): a query spares itself pathlib's import
def _signature(folder: str) -> str:
    """What the prepared copy was made from: each source file's size and mtime."""
    parts = []
    for name in SOURCE_FILES:
        stat = os.stat(os.path.join(folder, name))
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return sha1_hex("|".join(parts))[:16]


def _has_model(folder: str | os.PathLike[str]) -> bool:
    return all(os.path.isfile(os.path.join(folder, name)) for name in SOURCE_FILES)


def _fetch(name: str, into: str) -> None:
    from pathlib import Path

    dest = Path(into)
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


def prepared_folder(name: str, dimensions: int | None, fetch: bool = True) -> str:
    """The prepared copy of model `name` (made or fetched first when needed)."""
    from loa_mem.memory.semantic import cache_root

    local = os.path.expanduser(name)
    root = cache_root()
    if os.path.isdir(local):
        source = os.path.realpath(local)
        if not _has_model(source):
            raise ModelUnavailable(f"{name} holds no model2vec model "
                                   f"({', '.join(SOURCE_FILES)})", _HINT)
        home = os.path.join(root, f"local-{sha1_hex(source)[:12]}")
    else:
        home = os.path.join(root, slug(name))
        source = os.path.join(home, "source")
    key = f"{name}|{dimensions or 'all'}|format{FORMAT}"
    target = os.path.join(home, f"prepared-{dimensions or 'all'}")
    if not _has_model(source):
        if not fetch:
            raise ModelUnavailable(f"the embedding model {name} is not in the cache ({root})",
                                   _HINT)
        os.makedirs(home, exist_ok=True)
        _fetch(name, source)
    key = f"{key}|{_signature(source)}"
    try:
        with open(os.path.join(target, "prepared.json"), encoding="utf-8") as handle:
            meta = json.load(handle)
        if meta.get("key") == key:
            return target
    except (OSError, ValueError):
        pass
    _prepare(source, target, key, dimensions)
    return target


def _prepare(source_dir: str, target_dir: str, key: str, dimensions: int | None) -> None:
    import shutil
    import tempfile
    from pathlib import Path

    import numpy as np

    source, target = Path(source_dir), Path(target_dir)

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
    """Texts to unit vectors, as model2vec's `StaticModel.encode(normalize=True)` would: a few
    texts (a query, the entries a remember added) in plain Python from rows of the prepared
    matrix read out of its memory-mapped file, many through numpy and `tokenizers`."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        with open(os.path.join(folder, "prepared.json"), encoding="utf-8") as handle:
            meta: dict[str, Any] = json.load(handle)
        self.key = str(meta["key"])
        self.dim = int(meta["dim"])
        self._folder = folder
        self._unk: int | None = meta.get("unk")
        self._max_length: int | None = meta.get("max_length")
        self._chars = self._max_length * int(meta["median"]) if self._max_length else None
        self._matrix: Any = None
        self._rows: _Rows | None = None
        self._plain = (wordpiece.Tokenizer(folder)
                       if os.path.isfile(os.path.join(folder, wordpiece.SPEC)) else None)
        self._fast: Any = None

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids as the model's tokenizer gives them (no special tokens
        added): in plain Python for a few texts, through `tokenizers` for many."""
        if self._plain is not None and len(texts) <= PLAIN_BATCH:
            return [self._plain.ids(text) for text in texts]
        if self._fast is None:
            from tokenizers import Tokenizer

            self._fast = Tokenizer.from_file(os.path.join(self._folder, "tokenizer.json"))
        return [e.ids for e in self._fast.encode_batch_fast(texts, add_special_tokens=False)]

    def _kept(self, texts: list[str]) -> list[list[int]]:
        """The ids each text's vector is the mean of: truncated as model2vec truncates, unknown
        tokens out."""
        if self._chars:
            texts = [text[:self._chars] for text in texts]
        out = []
        for found in self.token_ids(texts):
            ids = found[:self._max_length] if self._max_length else found
            out.append([t for t in ids if t != self._unk] if self._unk is not None else ids)
        return out

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if self._matrix is None:
            self._matrix = np.load(os.path.join(self._folder, "embeddings.npy"), mmap_mode="r")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, ids in enumerate(self._kept(texts)):
            if ids:
                out[i] = self._matrix[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True) + 1e-32
        unit: npt.NDArray[np.float32] = (out / norms).astype(np.float32)
        return unit

    def vectors(self, texts: list[str]) -> list[tuple[float, ...]]:
        """The unit vectors of `texts` (float32 values): without numpy when the tokenizer has a
        plain reading and the texts are few, else through `encode`."""
        if self._plain is None or len(texts) > PLAIN_BATCH:
            return [tuple(row) for row in self.encode(texts).tolist()]
        if self._rows is None:
            self._rows = _Rows(os.path.join(self._folder, "embeddings.npy"), self.dim)
        return [self._rows.mean(ids) for ids in self._kept(texts)]

    def packed(self, texts: list[str]) -> bytes:
        """The vectors of `texts` as little-endian float32 rows."""
        if self._plain is None or len(texts) > PLAIN_BATCH:
            return bytes(self.encode(texts).astype("<f4").tobytes())
        import struct

        row = struct.Struct(f"<{self.dim}f")
        return b"".join(row.pack(*vector) for vector in self.vectors(texts))


class _Rows:
    """Rows of the prepared `.npy` token matrix (little-endian float32, C order), read from
    its memory map with `struct`; anything else is read through numpy."""

    def __init__(self, path: str, dim: int) -> None:
        import mmap
        import re
        import struct

        with open(path, "rb") as handle:
            self._map: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        raw = self._map[:12]
        size, start = ((struct.unpack_from("<H", raw, 8)[0], 10) if raw[6:7] == b"\x01"
                       else (struct.unpack_from("<I", raw, 8)[0], 12))
        head = self._map[start:start + size].decode("latin-1")
        shape = re.search(r"'shape': \((\d+), (\d+)\)", head)
        if (not raw.startswith(b"\x93NUMPY") or "'descr': '<f4'" not in head
                or "'fortran_order': False" not in head or not shape
                or int(shape.group(2)) != dim):
            self._map = self._numpy(path)
            start = size = 0
        self._offset = start + size
        self._row = struct.Struct(f"<{dim}f")
        self._dim = dim

    @staticmethod
    def _numpy(path: str) -> bytes:
        import numpy as np

        return np.ascontiguousarray(np.load(path), dtype="<f4").tobytes()

    def mean(self, ids: list[int]) -> tuple[float, ...]:
        """The unit mean of rows `ids` (zeros for none), rounded to float32."""
        import math
        from operator import add

        if not ids:
            return (0.0,) * self._dim
        total: list[float] = [0.0] * self._dim
        for token in ids:
            total = list(map(add, total, self._row.unpack_from(
                self._map, self._offset + token * self._row.size)))
        norm = math.sqrt(math.fsum(v * v for v in total)) + 1e-32
        return self._row.unpack(self._row.pack(*(v / norm for v in total)))


_LOADED: dict[tuple[str, int | None], Encoder] = {}


def load(name: str, dimensions: int | None, fetch: bool = True) -> Encoder:
    """The encoder of a model, kept for the life of the process (the MCP server's)."""
    found = _LOADED.get((name, dimensions))
    if found is None:
        found = _LOADED[(name, dimensions)] = Encoder(prepared_folder(name, dimensions, fetch))
    return found
