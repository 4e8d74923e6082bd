"""Local text similarity for the trust memory: no model, no download, standard library only.

Cosine similarity of term-frequency vectors over lowercase word tokens, with a short list of
English function words left out. Why this and not TF-IDF or embeddings:
- the novelty of a dissent is written once, when it is recorded; a term weight that depends on
  the agent's growing history (IDF) would make the same pair of texts score differently later;
- what novelty guards against is an agent repeating itself, which shared terms catch, and a
  result a person can check by hand;
- without the function words, two different critiques do not look a third alike just because
  both say "the", "of" and "is".

Override files may be large or confidential, so a sidecar never stores them: it stores a
fingerprint, the term vector hashed into 256 signed buckets, scaled to unit length and quantised
to one signed byte each (344 base64 characters whatever the file's size). Cosine over two
fingerprints approximates the exact cosine closely enough to tell which of two texts a final
version is nearer to.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping

_WORD = re.compile(r"[^\W_]+")

STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "he",
    "i", "if", "in", "is", "it", "its", "no", "not", "of", "on", "or", "our", "she", "so", "that",
    "the", "their", "there", "these", "they", "this", "those", "to", "was", "we", "were", "what",
    "which", "who", "will", "with", "you", "your",
))

BUCKETS = 256


def tokens(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in STOP_WORDS]


def vector(text: str) -> Counter[str]:
    return Counter(tokens(text))


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine of two sparse vectors; 0.0 when either has no terms."""
    if len(a) > len(b):
        a, b = b, a
    dot = sum(weight * b.get(term, 0) for term, weight in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


def text_cosine(a: str, b: str) -> float:
    return cosine(vector(a), vector(b))


def _bucket(term: str) -> tuple[int, int]:
    # blake2b rather than hash(): Python salts str hashes per process, a fingerprint must not.
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest[:2], "little") % BUCKETS, 1 if digest[2] & 1 else -1


def fingerprint(text: str) -> str:
    """The text's hashed, unit-length, byte-quantised term vector, base64-encoded."""
    buckets = [0.0] * BUCKETS
    for term, count in vector(text).items():
        index, sign = _bucket(term)
        buckets[index] += sign * count
    norm = math.sqrt(sum(v * v for v in buckets))
    scaled = [round(127 * v / norm) if norm else 0 for v in buckets]
    return base64.b64encode(bytes(v & 0xFF for v in scaled)).decode("ascii")


def _decode(print_: str) -> list[int]:
    raw = base64.b64decode(print_.encode("ascii"), validate=True)
    if len(raw) != BUCKETS:
        raise ValueError(f"a fingerprint has {BUCKETS} bytes, not {len(raw)}")
    return [b - 256 if b > 127 else b for b in raw]


def fingerprint_cosine(a: str, b: str) -> float:
    """Cosine of two fingerprints (raises ValueError when one is not a fingerprint)."""
    x, y = _decode(a), _decode(b)
    norm = math.sqrt(sum(v * v for v in x)) * math.sqrt(sum(v * v for v in y))
    return sum(p * q for p, q in zip(x, y, strict=True)) / norm if norm else 0.0


def content_hash(text: str) -> str:
    """sha256 of the text with line endings and trailing blank space normalised, so a file
    saved on another platform or by another editor still matches itself."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    normalised = "\n".join(lines).strip("\n") + "\n"
    return "sha256:" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()
